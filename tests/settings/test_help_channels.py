"""Help channels' settings (threadsage/settings/help_channels.py): a `draft` channel or group needs
experts to review its answers — a Telegram group's in a Telegram group, by its category or `*`."""

from __future__ import annotations

from typing import Any

import pytest

from threadsage.settings.environment import Settings

DRAFT_GROUP = "telegram:-100123"


def settings(experts: str, categories: dict[str, list[str]] | None = None, **extra: Any) -> Settings:
    return Settings(
        _env_file=None,
        THREADSAGE_HELP_CHANNELS={DRAFT_GROUP: "draft", "C0HELPDESK": "answer"},
        THREADSAGE_EXPERTS=experts,
        THREADSAGE_CHANNEL_CATEGORIES=categories or {},
        THREADSAGE_DEFAULT_CATEGORIES=[],
        **extra,
    )


def test_a_telegram_draft_group_is_accepted_with_experts_in_a_telegram_group() -> None:
    assert settings("*=telegram:-100999").help_mode(DRAFT_GROUP) == "draft"
    by_category = settings("*=C0EXPERTS1,people=telegram:-100999", {"-100123": ["people"]})
    assert by_category.help_mode(DRAFT_GROUP) == "draft"
    assert by_category.experts_for("people") == "telegram:-100999"


@pytest.mark.parametrize(
    ("experts", "categories"),
    [
        ("*=C0EXPERTS1", None),  # Slack experts only
        ("*=C0EXPERTS1,people=telegram:-100999", None),  # Telegram experts of another category
        ("*=C0EXPERTS1,people=telegram:-100999", {"-100123": ["it"], "-100777": ["people"]}),
    ],
)
def test_a_telegram_draft_group_without_telegram_experts_is_refused_naming_it(
    experts: str, categories: dict[str, list[str]] | None
) -> None:
    with pytest.raises(ValueError, match="the `draft` group telegram:-100123 needs experts in a Telegram group"):
        settings(experts, categories)


def test_a_draft_channel_or_group_needs_experts() -> None:
    with pytest.raises(ValueError, match="a `draft` channel's answers go to THREADSAGE_EXPERTS: set it"):
        settings("")
