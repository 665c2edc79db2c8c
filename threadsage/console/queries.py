"""What the console's views read from the recorded turns and the votes, one query per list or
chart, each narrowed by the filters and bounded (LIMIT). Aggregates run in the database on the
indexes of `threadsage.memory.questions` (time, outcome, place): docs/performance.md has the
timings on 100 000 turns."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from threadsage.console.filters import Filters
from threadsage.memory.questions import TABLE
from threadsage.memory.tables import Tables

LIST_LIMIT = 200
EXPORT_LIMIT = 100_000
GAP_GROUPS = 50
# Votes per answer; joined to a turn by (session, answer_ref).
VOTES = """(SELECT session_key, answer_ref,
    SUM(CASE WHEN vote > 0 THEN 1 ELSE 0 END) AS up, SUM(CASE WHEN vote < 0 THEN 1 ELSE 0 END) AS down
    FROM threadsage_feedback GROUP BY session_key, answer_ref)"""
JOIN_VOTES = f"LEFT JOIN {VOTES} AS f ON f.session_key = t.session_key AND f.answer_ref = t.answer_ref"
TURN_COLUMNS = (
    "at", "platform", "channel", "user_id", "question", "standalone", "answer", "route", "outcome", "confidence",
    "llm_calls", "latency_ms", "citations", "closest", "options", "choice", "chosen",
)  # fmt: skip
GAP = "(t.outcome IN ('not_covered', 'low_confidence') OR COALESCE(f.down, 0) > 0)"


@dataclass
class Overview:
    per_day: dict[int, Counter[str]] = field(default_factory=dict)
    outcomes: Counter[str] = field(default_factory=Counter)
    up: int = 0
    down: int = 0
    funnel: Counter[str] = field(default_factory=Counter)  # chosen, typed, abandoned, open
    channels: list[tuple[str, str, int]] = field(default_factory=list)
    latency_ms: float | None = None

    @property
    def answer_rate(self) -> float | None:
        """Answered ÷ turns that ended (a clarification is not an end: its answer is a turn)."""
        ended = sum(n for outcome, n in self.outcomes.items() if outcome != "clarified")
        return self.outcomes["answered"] / ended if ended else None


class ConsoleData:
    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    async def overview(self, filters: Filters) -> Overview:
        where, params = filters.where()
        view = Overview()
        daily = await self.tables.fetch(
            f"SELECT t.at / 86400000 AS day, t.outcome, COUNT(*) FROM {TABLE} t WHERE {where} GROUP BY 1, 2", params
        )
        for day, outcome, count in daily:
            view.per_day.setdefault(int(day), Counter())[outcome] += int(count)
            view.outcomes[outcome] += int(count)
        [(up, down)] = await self.tables.fetch(
            "SELECT SUM(CASE WHEN v.vote > 0 THEN 1 ELSE 0 END), SUM(CASE WHEN v.vote < 0 THEN 1 ELSE 0 END) "
            f"FROM threadsage_feedback v JOIN {TABLE} t ON t.session_key = v.session_key "
            f"AND t.answer_ref = v.answer_ref WHERE {where}",
            params,
        )
        view.up, view.down = int(up or 0), int(down or 0)
        funnel = await self.tables.fetch(
            f"SELECT COALESCE(t.choice, 'open'), COUNT(*) FROM {TABLE} t WHERE {where} AND t.outcome = 'clarified' "
            "GROUP BY 1",
            params,
        )
        view.funnel = Counter({choice: int(n) for choice, n in funnel})
        channels = await self.tables.fetch(
            f"SELECT t.platform, t.channel, COUNT(*) FROM {TABLE} t WHERE {where} "
            "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 8",
            params,
        )
        view.channels = [(p, c, int(n)) for p, c, n in channels]
        [(latency,)] = await self.tables.fetch(f"SELECT AVG(t.latency_ms) FROM {TABLE} t WHERE {where}", params)
        view.latency_ms = float(latency) if latency is not None else None
        return view

    async def turns(self, filters: Filters, limit: int = LIST_LIMIT) -> list[dict[str, Any]]:
        """The newest turns, each with its votes."""
        where, params = filters.where()
        return await self._turns(f"{where}", params, limit)

    async def gaps(self, filters: Filters, limit: int = GAP_GROUPS) -> list[dict[str, Any]]:
        """Questions not covered, answered with low confidence or given a 👎, grouped by their
        wording (their content words, sorted), the group seen most recently first; each group
        with its newest turn and the other wordings it holds."""
        where, params = filters.where()
        groups = await self.tables.fetch(
            f"SELECT COALESCE(t.wording, ''), COUNT(*), MAX(t.at) FROM {TABLE} t {JOIN_VOTES} "
            f"WHERE {where} AND {GAP} GROUP BY 1 ORDER BY 3 DESC LIMIT {int(limit)}",
            params,
        )
        if not groups:
            return []
        keys = [key for key, _, _ in groups]
        marks = ", ".join("{p}" for _ in keys)
        members = await self._turns(
            f"{where} AND {GAP} AND COALESCE(t.wording, '') IN ({marks})", [*params, *keys], 20 * len(keys), "wording"
        )
        by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for turn in members:
            by_key[turn.pop("wording") or ""].append(turn)
        result = []
        for key, count, _ in groups:
            found = by_key.get(key) or [{}]
            wordings = list(dict.fromkeys(t.get("question") for t in found if t.get("question")))
            result.append({"count": int(count), "newest": found[0], "wordings": wordings[:5]})
        return result

    async def clarifications(self, filters: Filters, limit: int = LIST_LIMIT) -> list[dict[str, Any]]:
        """Each clarification asked, what was chosen, and the votes on the answer that followed."""
        where, params = filters.where()
        rows = await self.tables.fetch(
            f"SELECT t.at, t.platform, t.channel, t.user_id, t.question, t.options, t.choice, t.chosen, "
            f"COALESCE(f.up, 0), COALESCE(f.down, 0) FROM {TABLE} t "
            f"LEFT JOIN {TABLE} a ON a.session_key = t.session_key AND a.answers = t.message_id "
            f"LEFT JOIN {VOTES} AS f ON f.session_key = a.session_key AND f.answer_ref = a.answer_ref "
            f"WHERE {where} AND t.outcome = 'clarified' ORDER BY t.at DESC LIMIT {int(limit)}",
            params,
        )
        names = ("at", "platform", "channel", "user_id", "question", "options", "choice", "chosen", "up", "down")
        return [_decoded(dict(zip(names, row, strict=True))) for row in rows]

    async def _turns(self, where: str, params: list[object], limit: int, *extra: str) -> list[dict[str, Any]]:
        columns = [*TURN_COLUMNS, *extra]
        rows = await self.tables.fetch(
            f"SELECT {', '.join('t.' + c for c in columns)}, COALESCE(f.up, 0), COALESCE(f.down, 0) "
            f"FROM {TABLE} t {JOIN_VOTES} WHERE {where} ORDER BY t.at DESC LIMIT {int(limit)}",
            params,
        )
        return [_decoded(dict(zip([*columns, "up", "down"], row, strict=True))) for row in rows]


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    for column in ("citations", "closest", "options"):
        if isinstance(row.get(column), str):
            row[column] = json.loads(row[column])
    return row
