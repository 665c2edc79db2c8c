"""The settings of the knowledge loop (`threadsage.chat.knowledge_loop`): gaps re-asked after each sync,
the follow-ups to the people who asked, verified answers, the weekly digest (`threadsage.chat.digest`). A mixin of
`threadsage.settings.environment.Settings`, as those of `sections.py`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Literal

from cronsim import CronSim, CronSimError
from pydantic import BaseModel, Field, field_validator
from pydantic_settings import NoDecode

from threadsage.settings.sections import section

FollowUpMode = Literal["off", "thread", "dm"]
CURATOR_PLATFORMS = ("slack", "telegram")


class KnowledgeLoopSettings(BaseModel):
    """Gaps that close themselves, answers that know when they went stale, verified answers."""

    gap_window_days: float = Field(
        30,
        gt=0,
        description="After each sync and ingest, the questions not covered (or answered with low confidence) in "
        "this many days are asked again of the new and changed documents",
        json_schema_extra=section("The knowledge loop"),
    )
    gap_follow_up: FollowUpMode = Field(
        "thread",
        description="Where the person who asked hears that a gap closed: `thread` (the original thread; on "
        "Telegram a reply to the question, in its forum topic), `dm` (a private message), or `off` (only the "
        "console shows it)",
    )
    gap_follow_ups_per_hour: int = Field(
        5,
        ge=0,
        description="At most this many such follow-ups per place (channel or DM) an hour; the rest only show "
        "in the console",
    )
    verified_match: float = Field(
        0.6,
        gt=0,
        le=1,
        description="How close a question must come to a verified answer's (shared content words ÷ all, "
        "0-1) for that answer to be given; every document it cites must also rank in the question's top 5",
    )
    curators: str = Field(
        "",
        description="Who may save an answer as the verified answer from Slack or Telegram (a button only they "
        "see): comma-separated `platform:user id`, e.g. `slack:U0123ABCD,telegram:123456789`",
    )

    digest: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Where the digest goes, comma-separated: a Slack channel (`#handbook-keepers` or its id "
        "`C0123…`; the bot must be in it), or a Telegram chat as `telegram:<chat id>` (`telegram:-1001234567890`). "
        "Empty = no digest",
        json_schema_extra=section("The weekly digest (docs/console.md)"),
    )
    digest_schedule: str = Field(
        "0 9 * * MON",
        description="When the digest is posted: cron (minute hour day month weekday; names like `MON` allowed), "
        "in `THREADSAGE_TIMEZONE`",
    )
    console_url: str | None = Field(
        None,
        description="The console's address as people open it (behind the proxy), e.g. "
        "`https://bot.example.com/console`: the digest links to its views. Unset = the digest names the views "
        "without links",
    )

    @field_validator("curators")
    @classmethod
    def _curators_named_by_platform(cls, value: str) -> str:
        for entry in filter(None, (e.strip() for e in value.split(","))):
            platform, _, user = entry.partition(":")
            if platform not in CURATOR_PLATFORMS or not user.strip():
                raise ValueError(
                    f"THREADSAGE_CURATORS: {entry!r} is not `platform:user id` with platform "
                    f"{' or '.join(CURATOR_PLATFORMS)} (e.g. slack:U0123ABCD,telegram:123456789)"
                )
        return value

    def is_curator(self, platform: str, user_id: str) -> bool:
        """Whether `user_id` of `platform` is listed in `THREADSAGE_CURATORS`."""
        wanted = f"{platform}:{user_id}"
        return any(e.strip().replace(" ", "") == wanted for e in self.curators.split(","))

    @field_validator("digest", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        """A plain list in the environment (`#keepers,telegram:-100123`), or JSON as other lists."""
        if isinstance(value, str) and value.strip().startswith("["):
            return json.loads(value)
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("digest")
    @classmethod
    def _telegram_chat_ids(cls, value: list[str]) -> list[str]:
        for target in value:
            platform, _, chat = target.partition(":")
            if platform == "telegram" and not chat.lstrip("-").isdigit():
                raise ValueError(f"THREADSAGE_DIGEST: {target!r} names no Telegram chat id (an integer)")
        return value

    @field_validator("digest_schedule")
    @classmethod
    def _cron(cls, value: str) -> str:
        """A schedule that cannot be read fails the start, not the first Monday."""
        try:
            CronSim(value, datetime.now(UTC))
        except CronSimError as exc:
            raise ValueError(f"THREADSAGE_DIGEST_SCHEDULE={value!r} is not a cron schedule: {exc}") from None
        return value
