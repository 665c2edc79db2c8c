"""Help channels' settings (threadsage/settings/help_channels.py): a category's experts' place is its
own entry, else `*`'s, whatever its platform; a `draft` channel or group needs experts to review its
answers on its own platform — a Telegram group's in a Telegram group, a Slack channel's in Slack."""

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


def test_a_categorys_own_place_wins_over_stars_whatever_its_platform() -> None:
    experts = settings("*=telegram:-100999,people=C0PEOPLE1,it=telegram:-100555")
    assert experts.experts_for("people") == "C0PEOPLE1"
    assert experts.experts_for("it") == "telegram:-100555"
    assert experts.experts_for("travel") == experts.experts_for(None) == "telegram:-100999"
    assert experts.experts_on("people", "slack") == "C0PEOPLE1" and experts.experts_on("it", "slack") is None
    assert experts.experts_of_place(("it", "people")) == "telegram:-100555"  # a place's first category's
    assert experts.experts_of_place(()) == experts.experts_of_place(None) == "telegram:-100999"


def test_answers_carry_still_need_help_where_experts_are_on_a_configured_platform() -> None:
    slack_only = {"SLACK_BOT_TOKEN": "xoxb-test"}
    assert settings("*=telegram:-100999", **slack_only).escalates() is False  # no Telegram bot to post it
    assert settings("*=telegram:-100999", **slack_only, TELEGRAM_BOT_TOKEN="7000001:TEST").escalates() is True
    assert settings("*=telegram:-100999,people=C0PEOPLE1", **slack_only).escalates() is True


def test_a_slack_draft_channel_with_telegram_experts_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="the `draft` channel C0ASKPEOPLE needs experts in a Slack channel"):
        Settings(
            _env_file=None,
            THREADSAGE_HELP_CHANNELS={"C0ASKPEOPLE": "draft"},
            THREADSAGE_EXPERTS="*=C0EXPERTS1,people=telegram:-100999",
            THREADSAGE_CHANNEL_CATEGORIES={"C0ASKPEOPLE": ["people"]},
        )
