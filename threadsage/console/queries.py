"""What the console's views read from the recorded turns, narrowed by the filters and bounded
(LIMIT). The votes are counted into each turn's row when given (`QuestionStore.voted`), so no
list joins the feedback table; aggregates run in the database on the indexes of
`threadsage.records.turns`. docs/performance.md has the timings on 100 000 turns."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from threadsage.console.filters import Filters
from threadsage.records.tables import Tables
from threadsage.records.turns import DAYS, TABLE

LIST_LIMIT = 200
EXPORT_LIMIT = 100_000
GAP_GROUPS = 50
TURN_COLUMNS = (
    "at", "platform", "channel", "user_id", "question", "standalone", "answer", "route", "outcome", "confidence",
    "llm_calls", "latency_ms", "citations", "closest", "options", "choice", "chosen", "up", "down",
)  # fmt: skip


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
        where, params = filters.where_days()
        view = Overview()
        daily = await self.tables.fetch(
            f"SELECT d.day, d.outcome, d.choice, SUM(d.turns), SUM(d.latency_ms), SUM(d.up), SUM(d.down) "
            f"FROM {DAYS} d WHERE {where} GROUP BY 1, 2, 3",
            params,
        )
        latency = 0
        for day, outcome, choice, count, spent, up, down in daily:
            view.per_day.setdefault(int(day), Counter())[outcome] += int(count)
            view.outcomes[outcome] += int(count)
            view.funnel[choice or "open"] += int(count) if outcome == "clarified" else 0
            latency += int(spent or 0)
            view.up, view.down = view.up + int(up or 0), view.down + int(down or 0)
        total = sum(view.outcomes.values())
        view.latency_ms = latency / total if total else None
        channels = await self.tables.fetch(
            f"SELECT d.platform, d.channel, SUM(d.turns) FROM {DAYS} d WHERE {where} "
            "GROUP BY 1, 2 HAVING SUM(d.turns) > 0 ORDER BY 3 DESC LIMIT 8",
            params,
        )
        view.channels = [(p, c, int(n)) for p, c, n in channels]
        view.outcomes = +view.outcomes  # groups counted down to zero drop out
        view.funnel = +view.funnel
        return view

    async def turns(self, filters: Filters, limit: int = LIST_LIMIT, *extra: str) -> list[dict[str, Any]]:
        """The newest turns, with their votes (and the `extra` columns: the page's verify button)."""
        where, params = filters.where()
        return await self._turns(where, params, limit, *extra)

    async def gaps(self, filters: Filters, limit: int = GAP_GROUPS) -> list[dict[str, Any]]:
        """Questions not covered, answered with low confidence or given a 👎 (the rows marked
        `gap`), grouped by their wording (their content words, sorted), the group seen most
        recently first; each group with its newest turn and the other wordings it holds."""
        where, params = filters.where()
        where = f"t.gap = 1 AND {where}"
        groups = await self.tables.fetch(
            f"SELECT COALESCE(t.wording, ''), COUNT(*), MAX(t.at) FROM {TABLE} t "
            f"WHERE {where} GROUP BY 1 ORDER BY 3 DESC LIMIT {int(limit)}",
            params,
        )
        if not groups:
            return []
        keys = [key for key, _, _ in groups]
        marks = ", ".join("{p}" for _ in keys)
        members = await self._turns(
            f"{where} AND COALESCE(t.wording, '') IN ({marks})", [*params, *keys], 20 * len(keys), "wording"
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
            "SELECT t.at, t.platform, t.channel, t.user_id, t.question, t.options, t.choice, t.chosen, "
            f"COALESCE(a.up, 0), COALESCE(a.down, 0) FROM {TABLE} t "
            f"LEFT JOIN {TABLE} a ON a.session_key = t.session_key AND a.answers = t.message_id "
            f"WHERE t.outcome = 'clarified' AND {where} ORDER BY t.at DESC LIMIT {int(limit)}",
            params,
        )
        names = ("at", "platform", "channel", "user_id", "question", "options", "choice", "chosen", "up", "down")
        return [_decoded(dict(zip(names, row, strict=True))) for row in rows]

    async def _turns(self, where: str, params: list[object], limit: int, *extra: str) -> list[dict[str, Any]]:
        columns = [*TURN_COLUMNS, *extra]
        rows = await self.tables.fetch(
            f"SELECT {', '.join('t.' + c for c in columns)} FROM {TABLE} t "
            f"WHERE {where} ORDER BY t.at DESC LIMIT {int(limit)}",
            params,
        )
        return [_decoded(dict(zip(columns, row, strict=True))) for row in rows]


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    for column in ("citations", "closest", "options"):
        if isinstance(row.get(column), str):
            row[column] = json.loads(row[column])
    return row
