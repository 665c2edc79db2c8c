"""The settings of help channels and their experts (`threadsage.bots.slack.help`): where the bot
answers every question without a mention, and where a question it cannot answer goes to people. A
mixin of `threadsage.settings.environment.Settings`, as those of `sections.py`."""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from threadsage.settings.sections import AccessSettings, section
from threadsage.support.handoff import ANY_CATEGORY

HelpMode = Literal["answer", "draft"]
_SLACK_CHANNEL = re.compile(r"^#?([CG][A-Z0-9]{6,})$")
_TELEGRAM_CHAT = re.compile(r"^telegram:(-?\d{1,20})$")
_CATEGORY = re.compile(r"^(\*|[\w.-]{1,128})$")


TELEGRAM = "telegram:"


def place_of(value: str) -> str:
    """A Slack channel id (`C0EXPERTS`, `#C0EXPERTS` → `C0EXPERTS`) or a Telegram group
    (`telegram:-1001234`); ValueError otherwise."""
    if match := _SLACK_CHANNEL.match(value.strip()):
        return match.group(1)
    if match := _TELEGRAM_CHAT.match(value.strip()):
        return TELEGRAM + match.group(1)
    raise ValueError(f"{value!r} is neither a Slack channel id (C0…, #C0…) nor telegram:<chat id>")


def telegram_chat(place: str) -> int | None:
    """The Telegram chat id of a place (None: a Slack channel)."""
    return int(place.removeprefix(TELEGRAM)) if place.startswith(TELEGRAM) else None


@cache  # a pure function of the setting, which a Slack listener reads on every message
def experts_of(value: str) -> dict[str, str]:
    """Category → the experts' place, from `people=C0EXPERTS,*=telegram:-100…` (`*`: the rest)."""
    places: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        category, equals, target = (part.strip() for part in entry.partition("="))
        if not equals or not _CATEGORY.match(category):
            raise ValueError(f"THREADSAGE_EXPERTS: {entry!r} is not category=place")
        try:
            places[category] = place_of(target)
        except ValueError as exc:
            raise ValueError(f"THREADSAGE_EXPERTS: {exc}") from None
    return places


def _valid_experts(value: str) -> str:
    experts_of(value)
    return value


def _valid_channels(value: dict[str, HelpMode]) -> dict[str, HelpMode]:
    try:
        return {place_of(channel): mode for channel, mode in value.items()}
    except ValueError as exc:
        raise ValueError(f"THREADSAGE_HELP_CHANNELS: {exc}") from None


class HelpSettings(BaseModel):
    """Help channels, and the experts who answer what the documents do not."""

    help_channels: Annotated[dict[str, HelpMode], AfterValidator(_valid_channels)] = Field(
        default_factory=dict,
        description="Where every question is answered without a mention: a JSON object of Slack channel id or "
        '`telegram:<group id>` → `answer` or `draft`: `{"C0HELPDESK": "answer", "C0ASKPEOPLE": "draft"}`. '
        "Statements, small talk, bots, edits and joins get nothing; with THREADSAGE_EXPERTS, a question the "
        'documents do not cover is escalated to the experts instead of answered "not covered"; in a `draft` '
        "channel or group (needs THREADSAGE_EXPERTS; a Telegram group's experts in a Telegram group) every answer "
        "goes to the experts first, who post it as is, discard it or reply with their own (docs/help-channels.md)",
        json_schema_extra=section("Help channels and experts"),
    )
    experts: Annotated[str, AfterValidator(_valid_experts)] = Field(
        "",
        description="Where a category's escalations go, in THREADSAGE_HANDOFF's syntax with a place per category: "
        "`people=C0EXPERTS,*=telegram:-1001234567890` (a Slack channel id, or a Telegram group; a question goes to "
        "the experts of its own platform). The first reply to an escalation is relayed to the asker; Slack answers "
        'carry "Still need help?". Empty = none',
    )

    @model_validator(mode="after")
    def _drafts_have_reviewers(self) -> HelpSettings:
        drafts = [channel for channel, mode in self.help_channels.items() if mode == "draft"]
        if drafts and not self.experts:
            raise ValueError("THREADSAGE_HELP_CHANNELS: a `draft` channel's answers go to THREADSAGE_EXPERTS: set it")
        return self

    def check_telegram_drafts(self, access: AccessSettings) -> None:
        """Each `draft` Telegram group has experts in a Telegram group (its first category's, or
        `*`'s): its answers go nowhere else. Needs the groups' categories, so `Settings` calls it."""
        for channel, mode in self.help_channels.items():
            group = telegram_chat(channel)
            if mode != "draft" or group is None:
                continue
            categories = access.categories_for(str(group))
            if self.experts_for(categories[0] if categories else None, "telegram") is None:
                raise ValueError(
                    f"THREADSAGE_HELP_CHANNELS: the `draft` group {channel} needs experts in a Telegram group: set "
                    f"THREADSAGE_EXPERTS' `*` (or the group's category) to {TELEGRAM}<chat id>"
                )

    def expert_channels(self) -> frozenset[str]:
        """The experts' places: Slack channel ids, and `telegram:<chat id>`."""
        return frozenset(experts_of(self.experts).values())

    def help_mode(self, channel: str) -> HelpMode | None:
        return self.help_channels.get(channel)

    def experts_for(self, category: str | None, platform: str) -> str | None:
        """The experts' place for `category` (the `*` entry for the rest) on `platform` ("slack":
        a channel id; "telegram": `telegram:<chat id>`), if any: a question goes to experts of
        its own platform."""
        places = {
            c: p for c, p in experts_of(self.experts).items() if (telegram_chat(p) is None) == (platform == "slack")
        }
        return (places.get(category) if category is not None else None) or places.get(ANY_CATEGORY)
