"""The settings of help channels and their experts (`threadsage.bots.slack.help`): where the bot
answers every question without a mention, and where a question it cannot answer goes to people. A
mixin of `threadsage.settings.environment.Settings`, as those of `sections.py`."""

from __future__ import annotations

import re
from collections.abc import Collection
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


def platform_of(place: str) -> str:
    """The platform of a place: "telegram" for `telegram:<chat id>`, else "slack"."""
    return "telegram" if place.startswith(TELEGRAM) else "slack"


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
        "channel or group (needs THREADSAGE_EXPERTS on its own platform: a Slack channel's in Slack, a Telegram "
        "group's in a Telegram group) every answer "
        "goes to the experts first, who post it as is, discard it or reply with their own (docs/help-channels.md)",
        json_schema_extra=section("Help channels and experts"),
    )
    experts: Annotated[str, AfterValidator(_valid_experts)] = Field(
        "",
        description="Where a category's escalations go, in THREADSAGE_HANDOFF's syntax with a place per category: "
        "`people=C0EXPERTS,*=telegram:-1001234567890` (a Slack channel id, or a Telegram group). A question goes to "
        "the place of its category, else to `*`'s, whatever the platform: a Slack question to a Telegram group, a "
        "Telegram one to a Slack channel, when both bots run in the process. The first reply to an escalation is "
        'relayed to the asker; answers carry "Still need help?". Empty = none',
    )

    @model_validator(mode="after")
    def _drafts_have_reviewers(self) -> HelpSettings:
        drafts = [channel for channel, mode in self.help_channels.items() if mode == "draft"]
        if drafts and not self.experts:
            raise ValueError("THREADSAGE_HELP_CHANNELS: a `draft` channel's answers go to THREADSAGE_EXPERTS: set it")
        return self

    def check_drafts(self, access: AccessSettings) -> None:
        """Each `draft` channel or group has experts on its own platform (its first category's
        place, else `*`'s): the draft's buttons (Post as is, Discard) are its own bot's. Needs the
        places' categories, so `Settings` calls it."""
        for channel, mode in self.help_channels.items():
            group = telegram_chat(channel)
            if mode != "draft":
                continue
            categories = access.categories_for(channel if group is None else str(group))
            experts = self.experts_of_place(categories)
            if experts is not None and platform_of(experts) == platform_of(channel):
                continue
            if group is not None:
                raise ValueError(
                    f"THREADSAGE_HELP_CHANNELS: the `draft` group {channel} needs experts in a Telegram group: set "
                    f"THREADSAGE_EXPERTS' `*` (or the group's category) to {TELEGRAM}<chat id>"
                )
            raise ValueError(
                f"THREADSAGE_HELP_CHANNELS: the `draft` channel {channel} needs experts in a Slack channel: set "
                "THREADSAGE_EXPERTS' `*` (or the channel's category) to a Slack channel id"
            )

    def expert_channels(self) -> frozenset[str]:
        """The experts' places: Slack channel ids, and `telegram:<chat id>`."""
        return frozenset(experts_of(self.experts).values())

    def help_mode(self, channel: str) -> HelpMode | None:
        return self.help_channels.get(channel)

    def experts_for(self, category: str | None) -> str | None:
        """The experts' place for `category`: its own entry, else the `*` entry, whatever its
        platform (a Slack channel id, or `telegram:<chat id>`) — a question goes there from
        either platform."""
        places = experts_of(self.experts)
        return (places.get(category) if category is not None else None) or places.get(ANY_CATEGORY)

    def experts_of_place(self, categories: tuple[str, ...] | None) -> str | None:
        """`experts_for` a place that reads `categories` (`AccessSettings.categories_for`; None:
        every one): its first category's place, else `*`'s."""
        return self.experts_for(categories[0] if categories else None)

    def experts_on(self, category: str | None, platform: str) -> str | None:
        """`experts_for(category)` when that place is on `platform`: a Slack channel whose
        members are the category's experts (who may resolve a thread), or None."""
        place = self.experts_for(category)
        return place if place is not None and platform_of(place) == platform else None

    def experts_on_any(self, platforms: Collection[str]) -> bool:
        """Whether some experts' place is on one of `platforms`."""
        return any(platform_of(place) in platforms for place in self.expert_channels())
