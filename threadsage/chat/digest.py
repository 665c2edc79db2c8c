"""The weekly digest (`THREADSAGE_DIGEST`, docs/console.md "The weekly digest"): on each time of
`THREADSAGE_DIGEST_SCHEDULE` (cron, in `THREADSAGE_TIMEZONE`), a short summary of the week to the
places named — the most asked questions, the open gaps with their closest documents, the gaps
closed this week and by which documents, the answers gone stale, the 👎s against the week before —
each section linked to its console view (`THREADSAGE_CONSOLE_URL`).

Every process that answers runs the schedule; each scheduled time is posted once: claimed in the
coordination (Redis with `REDIS_URL`: one process of a deployment goes on) and then recorded in
the database (`threadsage_digests`, INSERT … ON CONFLICT DO NOTHING), so that neither another
process, nor a restart within the same slot, nor a Redis that lost its keys posts it again. A time
missed while no process ran is posted at the next start when it is at most `LATE` old, else
skipped (the next one covers its week). The core knows no platform: each bot registers an
`Announcer` for its platform (`threadsage.bots.slack.announcer`, `threadsage.bots.telegram.announcer`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from cronsim import CronSim

from threadsage.delivery.coordination import Coordinator
from threadsage.records.digest import Asked, DigestRecords, DocumentCount, WeekInReview
from threadsage.settings.knowledge_loop import KnowledgeLoopSettings
from threadsage.support.backoff import wait_or_stop

log = logging.getLogger(__name__)

WEEK_MS = 7 * 86_400_000
LATE = timedelta(hours=24)  # a scheduled time missed by more (no process ran) is skipped
RECHECK = 3600.0  # the longest sleep: a clock that jumped or a suspended machine is noticed within this
CLAIM_TTL = 600.0  # one process goes on meanwhile; the database row keeps the slot for ever
QUESTION_CHARS = 100
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~])")


class Announcer(Protocol):
    async def announce(self, target: str, markdown: str) -> None:
        """Post `markdown` to the place `target` names on this platform; raises when refused."""


@dataclass(frozen=True)
class Target:
    platform: str
    place: str

    @classmethod
    def parse(cls, value: str) -> Target:
        """`telegram:<chat id>` or a bare chat id (an integer, negative for groups) is Telegram;
        `slack:<channel>` or anything else (`#name`, `C0123…`) is Slack."""
        platform, _, place = value.partition(":")
        if place and platform in ("slack", "telegram"):
            return cls(platform, place)
        return cls("telegram" if re.fullmatch(r"-?\d+", value) else "slack", value)

    def __str__(self) -> str:
        return f"{self.platform}:{self.place}"


class Schedule:
    """Cron times in a time zone (cronsim: five fields, names such as `MON`, DST handled)."""

    def __init__(self, expression: str, zone: str) -> None:
        self.expression = expression
        self.zone = ZoneInfo(zone)

    def latest(self, now: float) -> datetime:
        """The last scheduled time at or before `now`."""
        at = datetime.fromtimestamp(now, self.zone)
        candidate = next(CronSim(self.expression, at + timedelta(minutes=1), reverse=True))
        return candidate if candidate <= at else next(CronSim(self.expression, candidate, reverse=True))

    def following(self, now: float) -> datetime:
        """The first scheduled time after `now`."""
        return next(CronSim(self.expression, datetime.fromtimestamp(now, self.zone)))


@dataclass
class Digest:
    records: DigestRecords
    coordinator: Coordinator
    schedule: Schedule
    targets: Sequence[Target]
    console_url: str | None = None
    gap_window_days: float = 30
    announcers: dict[str, Announcer] = field(default_factory=dict)  # by platform: the bots register

    @classmethod
    def from_settings(
        cls, settings: KnowledgeLoopSettings, timezone: str, records: DigestRecords, coordinator: Coordinator
    ) -> Digest:
        """`timezone`: the one of `THREADSAGE_TIMEZONE`, which the schedule is read in."""
        return cls(
            records,
            coordinator,
            Schedule(settings.digest_schedule, timezone),
            [Target.parse(value) for value in settings.digest],
            settings.console_url.rstrip("/") if settings.console_url else None,
            settings.gap_window_days,
        )

    async def run(self, stop: asyncio.Event, clock: Callable[[], float] = time.time) -> None:
        """Until `stop`: post each scheduled time's digest (`due`), sleeping in between."""
        log.info(
            "weekly digest to %s on %r (%s); next at %s",
            ", ".join(map(str, self.targets)), self.schedule.expression, self.schedule.zone,
            self.schedule.following(clock()).isoformat(),
        )  # fmt: skip
        while not stop.is_set():
            now = clock()
            try:
                await self.due(now)
            except Exception:
                log.exception("weekly digest: could not check or post the digest")
            await wait_or_stop(min(max(self.schedule.following(now).timestamp() - clock(), 1.0), RECHECK), stop)

    async def due(self, now: float) -> str | None:
        """Post the digest of the latest scheduled time at or before `now` unless it is posted
        (or being posted) already, or more than `LATE` late; what became of it, None if nothing
        was due."""
        slot = self.schedule.latest(now)
        if datetime.fromtimestamp(now, self.schedule.zone) - slot > LATE:
            return None
        slot_ms = int(slot.timestamp() * 1000)
        if not await self.coordinator.claim(f"digest:{slot_ms}", CLAIM_TTL):
            return None
        if not await self.records.claim(slot_ms, int(now * 1000)):
            return None
        until = slot_ms
        week = await self.records.week(until - WEEK_MS, until, until - int(self.gap_window_days * 86_400_000))
        markdown = self.compose(week, slot)
        outcomes = [await self._post(target, markdown) for target in self.targets]
        outcome = ", ".join(outcomes)
        await self.records.posted(slot_ms, outcome)
        log.info("weekly digest of %s: %s", slot.isoformat(), outcome)
        return outcome

    async def _post(self, target: Target, markdown: str) -> str:
        announcer = self.announcers.get(target.platform)
        if announcer is None:
            log.warning("weekly digest: no %s bot in this process to post to %s", target.platform, target.place)
            return f"{target} no_bot"
        try:
            await announcer.announce(target.place, markdown)
        except Exception:
            log.exception("weekly digest: could not post to %s", target)
            return f"{target} failed"
        return f"{target} sent"

    def compose(self, week: WeekInReview, slot: datetime) -> str:
        """The digest as Markdown: short, each section linked to its console view."""
        start = (slot - timedelta(days=7)).strftime("%d %b")
        lines = [f"**Weekly digest** · {start} – {slot.strftime('%d %b %Y')} · {week.turns} questions"]
        if self.console_url:
            lines[0] += f" · [console]({self.console_url})"
        lines += self._section("Most asked", "questions", [_asked(a) for a in week.most_asked])
        lines += self._section("Open gaps", "gaps", [_gap(a) for a in week.open_gaps])
        lines += self._section("Gaps closed this week", "closed", [_closed(d) for d in week.closed])
        stale = [_stale(d) for d in week.stale]
        if week.stale_verified:
            stale.append(f"{week.stale_verified} verified answer(s) to check again")
        lines += self._section("Answers gone stale", "stale", stale)
        trend = "more than" if week.down > week.down_before else "fewer than" if week.down < week.down_before else "as"
        votes = f"👎 {week.down} ({trend} the week before: {week.down_before}) · 👍 {week.up}"
        lines += self._section(votes, "gaps", [_asked(a, "👎") for a in week.disliked], empty="")
        return "\n".join(lines)

    def _section(self, title: str, view: str, items: list[str], empty: str = "none") -> list[str]:
        heading = f"\n**{title}**"
        if self.console_url:
            heading += f" · [{view}]({self.console_url}/{view})"
        return [heading, *(f"- {item}" for item in items)] if items else [heading + (f": {empty}" if empty else "")]


def _asked(asked: Asked, unit: str = "×") -> str:
    return f"{_literal(asked.question)} — {asked.times}{unit}"


def _gap(asked: Asked) -> str:
    closest = asked.closest or {}
    near = f"; closest: {_document(str(closest.get('title', '')), str(closest.get('path', '')))}"
    return _asked(asked) + (near if closest.get("path") else "; no document comes close")


def _closed(document: DocumentCount) -> str:
    return f"{_document(document.title, document.path)} — {document.count} question(s)"


def _stale(document: DocumentCount) -> str:
    seen = f"{document.count} answer(s) seen by {document.people}"
    return f"{_document(document.title, document.path)}, {_literal(document.change)} — {seen}"


def _document(title: str, path: str) -> str:
    return f"{_literal(title)} ({_literal(path)})" if path else _literal(title)


def _literal(text: str) -> str:
    """What people wrote, shown as written: no Markdown of theirs (a link, a heading) in the digest."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= QUESTION_CHARS else flat[: QUESTION_CHARS - 1].rstrip() + "…"
    return _MARKDOWN.sub(r"\\\1", flat)
