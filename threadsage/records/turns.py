"""The record of every turn, for the operator console: what was asked, where, how it ended.

One row per turn (a question, or the answer to a clarification), keyed by (session, platform
message): a redelivered turn inserts nothing new (`ON CONFLICT DO NOTHING`). A clarification's row
keeps the options shown and, once the person answers, the one chosen (or the words typed), or that
it was abandoned; the turn that answered it points back to it (`answers`). A 👍/👎 joins the row
by (session, `answer_ref`), the reference the feedback buttons carry.

With `THREADSAGE_RECORD_QUESTIONS=false` the row keeps only numbers and labels: no question, no
answer, no options, no person. Rows older than `THREADSAGE_QUESTION_RETENTION_DAYS` go with the
periodic prune (`threadsage.app.retention`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.adapters.documents.loaders import doc_id_of
from threadsage.records.tables import Tables
from threadsage.support.text import terms

TABLE = "threadsage_turns"
DAYS = "threadsage_turn_days"  # the turns counted per day, place, outcome and choice: the overview reads these
DAY_MS = 86_400_000
_CREATE = [
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    session_key TEXT NOT NULL,
    message_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread TEXT NOT NULL,
    user_id TEXT,
    answer_ref TEXT NOT NULL,
    question TEXT,
    standalone TEXT,
    wording TEXT,
    answer TEXT,
    route TEXT NOT NULL,
    outcome TEXT NOT NULL,
    confidence REAL,
    llm_calls INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    citations TEXT NOT NULL,
    closest TEXT,
    options TEXT,
    choice TEXT,
    chosen TEXT,
    chosen_index INTEGER,
    answers TEXT,
    up INTEGER NOT NULL DEFAULT 0,
    down INTEGER NOT NULL DEFAULT 0,
    gap SMALLINT NOT NULL DEFAULT 0,
    PRIMARY KEY (session_key, message_id)
)""",
    # Time order for the lists; it also covers what a day's recount reads (no table lookups).
    f"CREATE INDEX IF NOT EXISTS {TABLE}_at ON {TABLE} (at, outcome, platform, channel, choice, latency_ms, up, down)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_outcome_at ON {TABLE} (outcome, at)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_channel_at ON {TABLE} (channel, at)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_gap_at ON {TABLE} (gap, at, wording)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_ref ON {TABLE} (session_key, answer_ref)",
    f"""CREATE TABLE IF NOT EXISTS {DAYS} (
    day BIGINT NOT NULL,
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    outcome TEXT NOT NULL,
    choice TEXT NOT NULL,
    turns BIGINT NOT NULL,
    latency_ms BIGINT NOT NULL,
    up BIGINT NOT NULL,
    down BIGINT NOT NULL,
    PRIMARY KEY (day, platform, channel, outcome, choice)
)""",
]
# gap last: `_INSERT` writes it with the votes
COLUMNS = (
    "session_key", "message_id", "at", "platform", "channel", "thread", "user_id", "answer_ref", "question",
    "standalone", "wording", "answer", "route", "outcome", "confidence", "llm_calls", "latency_ms", "citations",
    "closest", "options", "choice", "chosen", "chosen_index", "answers", "gap",
)  # fmt: skip
_CHOSEN = (
    f"UPDATE {TABLE} SET choice = {{p}}, chosen = {{p}}, chosen_index = {{p}} "
    "WHERE session_key = {p} AND message_id = {p} AND outcome = 'clarified' AND choice IS NULL"
)
# A day's counts of one place, recomputed from its turns whenever one of them changes: first
# zeroed (a group that no longer exists must not keep its old count), then written anew.
_ZERO_DAY = (
    f"UPDATE {DAYS} SET turns = 0, latency_ms = 0, up = 0, down = 0 "
    "WHERE day = {p} AND platform = {p} AND channel = {p}"
)
_COUNT_DAY = f"""INSERT INTO {DAYS} (day, platform, channel, outcome, choice, turns, latency_ms, up, down)
SELECT {{p}}, platform, channel, outcome, COALESCE(choice, ''), COUNT(*), SUM(latency_ms), SUM(up), SUM(down)
FROM {TABLE} WHERE at >= {{p}} AND at < {{p}} AND platform = {{p}} AND channel = {{p}}
GROUP BY platform, channel, outcome, COALESCE(choice, '')
ON CONFLICT (day, platform, channel, outcome, choice) DO UPDATE SET turns = excluded.turns,
latency_ms = excluded.latency_ms, up = excluded.up, down = excluded.down"""
_PLACE = f"SELECT at, platform, channel FROM {TABLE} WHERE session_key = {{p}} AND "
OUTCOMES = ("answered", "not_covered", "low_confidence", "clarified", "refused", "error")
GAP_OUTCOMES = "('not_covered', 'low_confidence')"
# A turn's votes, counted into its row (the console's lists then need no join), and whether it is
# a gap: not covered, low confidence, or given a 👎. Run after each vote; a new row counts the
# votes given before it existed itself (`_INSERT`).
_COUNT = "SELECT COUNT(*) FROM threadsage_feedback v WHERE v.session_key = {p} AND v.answer_ref = {p} AND v.vote"
# A new turn's row, with the votes already given on its answer (a 👍 may beat the row), ...
_INSERT = (
    f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}, up, down) VALUES ({', '.join(['{p}'] * (len(COLUMNS) - 1))}, "
    f"CASE WHEN {{p}} = 1 OR ({_COUNT} < 0) > 0 THEN 1 ELSE 0 END, ({_COUNT} > 0), ({_COUNT} < 0)) "
    "ON CONFLICT (session_key, message_id) DO NOTHING"
)
# ... then added to its day's counts: one row more, not a recount of the day (which grew with the
# day's turns: docs/performance.md, "Checkpoints and round trips a turn", "The console's record of a
# turn").
_ADD = """INSERT INTO {days} (day, platform, channel, outcome, choice, turns, latency_ms, up, down)
SELECT at / {day_ms}, platform, channel, outcome, '', 1, latency_ms, up, down FROM {rows}
ON CONFLICT (day, platform, channel, outcome, choice) DO UPDATE SET turns = {days}.turns + 1,
latency_ms = {days}.latency_ms + excluded.latency_ms, up = {days}.up + excluded.up,
down = {days}.down + excluded.down"""
# Postgres: both in one statement. SQLite (no data-modifying WITH): the second reads the new row.
_RECORD_POSTGRES = (
    f"WITH new AS ({_INSERT} RETURNING at, platform, channel, outcome, latency_ms, up, down) "
    + _ADD.format(days=DAYS, day_ms=DAY_MS, rows="new")
)
_ADD_SQLITE = _ADD.format(days=DAYS, day_ms=DAY_MS, rows=f"{TABLE} WHERE session_key = {{p}} AND message_id = {{p}}")
# A vote that came while the row was being written: counted now, with its day (which `voted`
# recounts), when the row's votes differ from the feedback's. Only for a redelivered turn: a
# first delivery's answer is posted after its row is written, so nobody can have voted on it.
_VOTES_SINCE = (
    f"UPDATE {TABLE} SET up = ({_COUNT} > 0), down = ({_COUNT} < 0) WHERE session_key = {{p}} AND "
    f"answer_ref = {{p}} AND (up <> ({_COUNT} > 0) OR down <> ({_COUNT} < 0))"
)
_VOTES = [
    f"UPDATE {TABLE} SET up = ({_COUNT} > 0), down = ({_COUNT} < 0) WHERE session_key = {{p}} AND answer_ref = {{p}}",
    f"UPDATE {TABLE} SET gap = CASE WHEN outcome IN {GAP_OUTCOMES} OR down > 0 THEN 1 ELSE 0 END "
    "WHERE session_key = {p} AND answer_ref = {p}",
]
RETRIEVING = frozenset({"fast_retrieval", "standard_retrieval", "deep_search", "code_search"})

# The closest document to a question nothing answered: (question, categories) → {title, path, score}
Closest = Callable[[str, Sequence[str] | None], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True)
class Answered:
    """The clarification a turn answered: the turn that asked, and what was chosen."""

    turn: str
    option: int | None  # None: answered in the person's own words
    label: str


@dataclass
class TurnRecord:
    """What the chat service learns of a turn while handling it, for its row."""

    session_key: str
    message_id: str
    platform: str
    user_id: str
    answer_ref: str
    question: str
    categories: Sequence[str] | None
    outcome: str = "error"
    state: dict[str, Any] | None = None  # the graph's state when the turn's run ended
    answered: Answered | None = None
    latency_ms: int = 0
    started: float = 0.0  # time.monotonic() when the turn began
    redelivered: bool = False  # delivered again by the turn queue: its answer may have been shown


class CitedVersions(Protocol):
    """Where the versions an answer cited are kept (`threadsage.records.knowledge.KnowledgeRecords`):
    a protocol, so that the turn records need not import the knowledge loop's records built on them."""

    async def setup(self) -> None: ...

    async def cited(
        self, session_key: str, message_id: str, at: int, user_id: str | None, cited: Sequence[dict[str, Any]]
    ) -> None: ...

    async def prune(self, before_ms: int) -> None: ...


class QuestionStore:
    def __init__(
        self,
        checkpointer: BaseCheckpointSaver[Any],
        keep_text: bool = True,
        closest: Closest | None = None,
        knowledge: CitedVersions | None = None,  # the versions answers cited, for the knowledge loop
    ) -> None:
        self.tables = Tables(checkpointer)
        self.keep_text = keep_text
        self._closest = closest
        self.knowledge = knowledge

    async def setup(self) -> None:
        await self.tables.create(_CREATE)
        if self.knowledge is not None:
            await self.knowledge.setup()

    async def record(self, turn: TurnRecord, now: float | None = None) -> None:
        """The turn's row, once; and the choice it made on the clarification it answered."""
        state = turn.state or {}
        text = self.keep_text
        question = turn.question or state.get("question", "")
        interrupts = state.get("__interrupt__") or []
        options = list(interrupts[0].value.get("options", [])) if interrupts else None
        _, _, place = turn.session_key.partition(":")
        _, channel, thread = [*place.split(":"), "-", "-", "-"][:3]
        closest = await self._nearest(turn, state) if turn.outcome in ("not_covered", "low_confidence") else None
        cited = _cited(state) if turn.outcome != "clarified" else []
        row: dict[str, Any] = {
            "session_key": turn.session_key,
            "message_id": turn.message_id,
            "at": int((now if now is not None else time.time()) * 1000),
            "platform": turn.platform,
            "channel": channel,
            "thread": thread,
            "user_id": turn.user_id if text else None,
            "answer_ref": turn.answer_ref,
            "question": question if text else None,
            "standalone": state.get("standalone") if text else None,
            "wording": " ".join(sorted(set(terms(question)))[:12]) if text and turn.answered is None else None,
            "answer": state.get("answer") if text and turn.outcome != "clarified" else None,
            "route": state.get("route") or "none",
            "outcome": turn.outcome,
            "confidence": state.get("confidence"),
            "llm_calls": int(state.get("llm_calls", 0)),
            "latency_ms": turn.latency_ms,
            "citations": json.dumps(cited),
            "closest": json.dumps(closest) if closest else None,
            "options": json.dumps(options if text else len(options)) if options is not None else None,
            "choice": None,
            "chosen": None,
            "chosen_index": None,
            "answers": turn.answered.turn if turn.answered else None,
            "gap": 1 if turn.outcome in ("not_covered", "low_confidence") else 0,
        }
        await self._insert(row, turn.redelivered)
        if turn.outcome == "answered" and self.knowledge is not None:
            await self.knowledge.cited(turn.session_key, turn.message_id, row["at"], row["user_id"], cited)
        if turn.answered is not None:
            answered = turn.answered
            how = "typed" if answered.option is None else "chosen"
            label = answered.label if text else None
            await self._choose(turn.session_key, answered.turn, how, label, answered.option)

    async def _insert(self, row: dict[str, Any], redelivered: bool) -> None:
        """The turn's row and its place in the day's counts; a redelivered turn changes nothing
        (but counts the votes its answer, shown by an earlier delivery, got meanwhile)."""
        params = [row[c] for c in COLUMNS] + [row["session_key"], row["answer_ref"]] * 3
        if not self.tables.sqlite:
            await self.tables.execute(_RECORD_POSTGRES, params)
        elif await self.tables.execute(_INSERT, params):
            await self.tables.execute(_ADD_SQLITE, (row["session_key"], row["message_id"]))
        if redelivered and await self.tables.execute(_VOTES_SINCE, (row["session_key"], row["answer_ref"]) * 5):
            await self.voted(row["session_key"], row["answer_ref"])

    async def voted(self, session_key: str, answer_ref: str) -> bool:
        """Count the votes on the answer `answer_ref` names into its row (and its day); whether
        there was a row."""
        if not await self.tables.execute(_VOTES[0], (session_key, answer_ref) * 3):
            return False
        await self.tables.execute(_VOTES[1], (session_key, answer_ref))
        for at, platform, channel in await self.tables.fetch(_PLACE + "answer_ref = {p}", (session_key, answer_ref)):
            await self._recount(at, platform, channel)
        return True

    async def abandoned(self, session_key: str, asking_turn: str) -> None:
        """The clarification `asking_turn` asked was left unanswered (a new question replaced it)."""
        await self._choose(session_key, asking_turn, "abandoned", None, None)

    async def prune(self, older_than_days: float, now: float | None = None) -> int:
        """Delete the rows older than the retention, by whole days (UTC) so that the per-day
        counts go with them; how many turns went."""
        cutoff = int(((now if now is not None else time.time()) - older_than_days * 86400) * 1000) // DAY_MS
        await self.tables.execute(f"DELETE FROM {DAYS} WHERE day < {{p}}", (cutoff,))
        if self.knowledge is not None:
            await self.knowledge.prune(cutoff * DAY_MS)
        return await self.tables.execute(f"DELETE FROM {TABLE} WHERE at < {{p}}", (cutoff * DAY_MS,))

    async def _choose(
        self, session_key: str, asking_turn: str, how: str, label: str | None, option: int | None
    ) -> None:
        if await self.tables.execute(_CHOSEN, (how, label, option, session_key, asking_turn)):
            for at, platform, channel in await self.tables.fetch(
                _PLACE + "message_id = {p}", (session_key, asking_turn)
            ):
                await self._recount(at, platform, channel)

    async def _recount(self, at: int, platform: str, channel: str) -> None:
        day = int(at) // DAY_MS
        await self.tables.execute(_ZERO_DAY, (day, platform, channel))
        await self.tables.execute(_COUNT_DAY, (day, day * DAY_MS, (day + 1) * DAY_MS, platform, channel))

    async def _nearest(self, turn: TurnRecord, state: dict[str, Any]) -> dict[str, Any] | None:
        """The passage the retriever came closest to: the best kept one, or else a search."""
        documents = state.get("documents") or state.get("best_documents") or []
        if documents:
            best = max(documents, key=lambda d: d.get("score", 0.0))
            return {"title": best["title"], "path": best["path"], "score": round(float(best["score"]), 3)}
        query = state.get("standalone") or turn.question
        return await self._closest(query, turn.categories) if self._closest and query else None


def _cited(state: dict[str, Any]) -> list[dict[str, str]]:
    """What an answer cited, each document with its id and the version the answer read (its
    passages' ids carry it: `Chunk.id`), for telling when the answer went stale."""
    cited = [{k: c[k] for k in ("title", "heading", "path")} for c in state.get("citations", [])]
    read = {p["source"]: p["id"].split("-") for p in state.get("documents") or [] if p.get("id")}
    for entry, citation in zip(cited, state.get("citations", []), strict=True):
        source = citation.get("source", "")  # absent from citations kept before sources had one
        doc, parts = doc_id_of(source), read.get(source, [])
        entry |= {"doc": doc, "version": parts[1] if len(parts) == 3 and parts[0] == doc else ""}
    return cited


def outcome_of_turn(kind: str, route: str | None, cited: bool, low_confidence: bool, notice: str) -> str:
    """A turn's outcome for the console, from its first reply's kind ("answer", "clarification",
    "notice"), the route, whether it cited anything, and for a notice its label (see
    `threadsage.chat.replies.outcome_of`)."""
    if kind == "clarification":
        return "clarified"
    if kind == "answer":
        if route == "fallback" or (route in RETRIEVING and not cited):
            return "not_covered"
        return "low_confidence" if low_confidence else "answered"
    return "error" if notice == "error" else "refused"
