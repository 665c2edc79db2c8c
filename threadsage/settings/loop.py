"""The settings of the knowledge loop (`threadsage.chat.loop`): gaps re-asked after each sync,
the follow-ups to the people who asked, verified answers. A mixin of
`threadsage.settings.environment.Settings`, as those of `sections.py`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

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
