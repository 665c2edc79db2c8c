"""What the weekly digest reads (`threadsage.chat.digest`), and the record of each digest posted
(`threadsage_digests`, one row per scheduled time: the claim that makes it once, also across
restarts). Each query is bounded and on a time index of the tables it reads."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.records.knowledge import CITED, CLOSES, VERIFIED
from threadsage.records.tables import Tables
from threadsage.records.turns import GAP_OUTCOMES, TABLE

DIGESTS = "threadsage_digests"
_CREATE = [
    f"""CREATE TABLE IF NOT EXISTS {DIGESTS} (
    slot BIGINT PRIMARY KEY,
    claimed_at BIGINT NOT NULL,
    outcome TEXT NOT NULL
)""",
]
TOP = 5  # entries per section: the digest stays short; the console has the rest


@dataclass(frozen=True)
class Asked:
    question: str  # one of the wordings
    times: int
    closest: dict[str, Any] | None = None  # for a gap: the document the retriever came closest to


@dataclass(frozen=True)
class DocumentCount:
    title: str
    path: str
    count: int
    people: int = 0
    change: str = ""


@dataclass
class WeekInReview:
    """One digest's facts: the week [since, until), and the gaps of the loop's window."""

    since: int
    until: int
    turns: int = 0
    most_asked: list[Asked] = field(default_factory=list)
    open_gaps: list[Asked] = field(default_factory=list)
    closed: list[DocumentCount] = field(default_factory=list)
    stale: list[DocumentCount] = field(default_factory=list)
    stale_verified: int = 0
    up: int = 0
    down: int = 0
    down_before: int = 0  # the week before
    disliked: list[Asked] = field(default_factory=list)  # the answers with the most 👎 this week


class DigestRecords:
    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self.tables = Tables(checkpointer)

    async def setup(self) -> None:
        await self.tables.create(_CREATE)

    async def claim(self, slot: int, at: int) -> bool:
        """The scheduled time `slot` (ms) taken for posting: True once, ever (a restart or another
        process finds the row)."""
        return bool(
            await self.tables.execute(
                f"INSERT INTO {DIGESTS} (slot, claimed_at, outcome) VALUES ({{p}}, {{p}}, 'posting') "
                "ON CONFLICT DO NOTHING",
                (slot, at),
            )
        )

    async def posted(self, slot: int, outcome: str) -> None:
        await self.tables.execute(f"UPDATE {DIGESTS} SET outcome = {{p}} WHERE slot = {{p}}", (outcome, slot))

    async def history(self, limit: int = 20) -> list[tuple[int, int, str]]:
        """The digests claimed, the newest first: (slot, claimed at, outcome)."""
        rows = await self.tables.fetch(
            f"SELECT slot, claimed_at, outcome FROM {DIGESTS} ORDER BY slot DESC LIMIT {int(limit)}"
        )
        return [(int(slot), int(at), str(outcome)) for slot, at, outcome in rows]

    async def week(self, since: int, until: int, gaps_since: int) -> WeekInReview:
        """The facts of the week [since, until); open gaps are those asked since `gaps_since`."""
        week = WeekInReview(since, until)
        span = (since, until)
        [(turns, up, down)] = await self.tables.fetch(
            f"SELECT COUNT(*), COALESCE(SUM(up), 0), COALESCE(SUM(down), 0) FROM {TABLE} "
            "WHERE at >= {p} AND at < {p}",
            span,
        )
        week.turns, week.up, week.down = int(turns), int(up), int(down)
        [(before,)] = await self.tables.fetch(
            f"SELECT COALESCE(SUM(down), 0) FROM {TABLE} WHERE at >= {{p}} AND at < {{p}}",
            (since - (until - since), since),
        )
        week.down_before = int(before)
        week.most_asked = await self._asked(
            f"SELECT MAX(question), COUNT(*) FROM {TABLE} WHERE at >= {{p}} AND at < {{p}} AND answers IS NULL "
            f"AND wording IS NOT NULL AND wording <> '' GROUP BY wording ORDER BY 2 DESC, MAX(at) DESC LIMIT {TOP}",
            span,
        )
        rows = await self.tables.fetch(
            f"SELECT MAX(t.question), COUNT(*), MAX(t.closest) FROM {TABLE} t WHERE t.gap = 1 AND t.at >= {{p}} "
            f"AND t.at < {{p}} AND t.outcome IN {GAP_OUTCOMES} AND t.wording IS NOT NULL AND t.wording <> '' "
            f"AND NOT EXISTS (SELECT 1 FROM {CLOSES} c WHERE c.session_key = t.session_key "
            f"AND c.message_id = t.message_id) GROUP BY t.wording ORDER BY 2 DESC, MAX(t.at) DESC LIMIT {TOP}",
            (gaps_since, until),
        )
        week.open_gaps = [Asked(q, int(n), json.loads(c) if c else None) for q, n, c in rows]
        rows = await self.tables.fetch(
            f"SELECT MAX(title), MAX(path), COUNT(*) FROM {CLOSES} WHERE closed_at >= {{p}} AND closed_at < {{p}} "
            f"GROUP BY doc_id ORDER BY 3 DESC LIMIT {TOP}",
            span,
        )
        week.closed = [DocumentCount(t, p, int(n)) for t, p, n in rows]
        rows = await self.tables.fetch(
            f"SELECT MAX(title), MAX(path), COUNT(*), COUNT(DISTINCT COALESCE(user_id, session_key)), MAX(change) "
            f"FROM {CITED} WHERE stale_at >= {{p}} AND stale_at < {{p}} GROUP BY doc_id ORDER BY 3 DESC LIMIT {TOP}",
            span,
        )
        week.stale = [DocumentCount(t, p, int(n), int(people), change or "") for t, p, n, people, change in rows]
        [(verified,)] = await self.tables.fetch(
            f"SELECT COUNT(*) FROM {VERIFIED} WHERE stale_at >= {{p}} AND stale_at < {{p}}", span
        )
        week.stale_verified = int(verified)
        week.disliked = await self._asked(
            f"SELECT question, down FROM {TABLE} WHERE gap = 1 AND at >= {{p}} AND at < {{p}} AND down > 0 "
            f"AND question IS NOT NULL ORDER BY down DESC, at DESC LIMIT {TOP}",
            span,
        )
        return week

    async def _asked(self, sql: str, params: tuple[int, int]) -> list[Asked]:
        """Questions with a count: (question, count) rows."""
        return [Asked(question, int(n)) for question, n in await self.tables.fetch(sql, params)]
