"""The settings of help channels and their experts (`threadsage.bots.slack.help`): where the bot
answers every question without a mention, and where a question it cannot answer goes to people. A
mixin of `threadsage.settings.environment.Settings`, as those of `sections.py`."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from threadsage.settings.sections import section
from threadsage.support.handoff import ANY_CATEGORY

HelpMode = Literal["answer", "draft"]
_SLACK_CHANNEL = re.compile(r"^#?([CG][A-Z0-9]{6,})$")
_TELEGRAM_CHAT = re.compile(r"^telegram:(-?\d{1,20})$")
_CATEGORY = re.compile(r"^(\*|[\w.-]{1,128})$")


NOT_YET = "Telegram groups are not help channels or experts' places yet: Slack channel ids only"


def slack_channel(value: str) -> str:
    """The Slack channel id of `C0EXPERTS` or `#C0EXPERTS`; ValueError otherwise."""
    if match := _SLACK_CHANNEL.match(value.strip()):
        return match.group(1)
    if _TELEGRAM_CHAT.match(value.strip()):
        raise ValueError(f"{value!r}: {NOT_YET}")
    raise ValueError(f"{value!r} is not a Slack channel id (C0…, #C0…)")


def experts_of(value: str) -> dict[str, str]:
    """Category → the experts' Slack channel, from `people=C0EXPERTS,*=C0HELPDESK` (`*`: the rest)."""
    places: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        category, equals, target = (part.strip() for part in entry.partition("="))
        if not equals or not _CATEGORY.match(category):
            raise ValueError(f"THREADSAGE_EXPERTS: {entry!r} is not category=place")
        try:
            places[category] = slack_channel(target)
        except ValueError as exc:
            raise ValueError(f"THREADSAGE_EXPERTS: {exc}") from None
    return places


def _valid_experts(value: str) -> str:
    experts_of(value)
    return value


def _valid_channels(value: dict[str, HelpMode]) -> dict[str, HelpMode]:
    try:
        return {slack_channel(channel): mode for channel, mode in value.items()}
    except ValueError as exc:
        raise ValueError(f"THREADSAGE_HELP_CHANNELS: {exc}") from None


class HelpSettings(BaseModel):
    """Help channels, and the experts who answer what the documents do not."""

    help_channels: Annotated[dict[str, HelpMode], AfterValidator(_valid_channels)] = Field(
        default_factory=dict,
        description='Channels where every question is answered without a mention: `{"C0HELPDESK": "answer"}` '
        "(Slack channel ids). Statements, small talk, bots, edits and joins get nothing; with "
        "THREADSAGE_EXPERTS, a question the documents do not cover is escalated to the experts instead of "
        'answered "not covered" (docs/help-channels.md)',
        json_schema_extra=section("Help channels and experts"),
    )
    experts: Annotated[str, AfterValidator(_valid_experts)] = Field(
        "",
        description="Where a category's escalations go, in THREADSAGE_HANDOFF's syntax with a place per category: "
        "`people=C0EXPERTS,*=C0HELPDESK` (a Slack channel id). Set, every answer carries "
        '"Still need help?", and an expert\'s first reply to an escalation is relayed to the asker. Empty = none',
    )

    @model_validator(mode="after")
    def _drafts_have_reviewers(self) -> HelpSettings:
        if "draft" in self.help_channels.values() and not self.experts:
            raise ValueError("THREADSAGE_HELP_CHANNELS: a `draft` channel's answers go to THREADSAGE_EXPERTS: set it")
        return self

    def expert_channels(self) -> frozenset[str]:
        return frozenset(experts_of(self.experts).values())

    def help_mode(self, channel: str) -> HelpMode | None:
        return self.help_channels.get(channel)

    def experts_for(self, category: str | None) -> str | None:
        """The Slack channel of the experts of `category` (the `*` entry for the rest), if any."""
        places = experts_of(self.experts)
        return (places.get(category) if category is not None else None) or places.get(ANY_CATEGORY)
