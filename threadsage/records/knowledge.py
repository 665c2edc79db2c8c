"""The knowledge loop's records, beside the turn records (`threadsage.records.turns`):

- the version of every document each answer cited (`threadsage_cited`): when a sync changes or
  removes a document, the answers that cited another version are marked stale;
- the gaps closed by a new or changed document (`threadsage_gap_closes`): which document, when,
  the answer found, and what became of the follow-up (one row per question: at most one);
- the verified answers an operator kept (`threadsage_verified`), used first for a question that
  matches one closely (`threadsage.chat.knowledge_loop`), stale like any answer when a cited document changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.records.tables import Row, Tables
from threadsage.records.turns import GAP_OUTCOMES, TABLE

CITED = "threadsage_cited"
CLOSES = "threadsage_gap_closes"
VERIFIED = "threadsage_verified"
ESCALATIONS = "threadsage_escalations"
VERIFIED_COLUMNS = "id, question, answer, citations, verified_by, verified_at, uses, stale_at, change, retired_at"
ACTIVE = "stale_at IS NULL AND retired_at IS NULL"  # a verified answer given to the questions it matches
_CREATE = [
    f"""CREATE TABLE IF NOT EXISTS {CITED} (
    session_key TEXT NOT NULL,
    message_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    user_id TEXT,
    title TEXT NOT NULL,
    path TEXT NOT NULL,
    version TEXT NOT NULL,
    stale_at BIGINT,
    change TEXT,
    PRIMARY KEY (session_key, message_id, doc_id)
)""",
    f"CREATE INDEX IF NOT EXISTS {CITED}_doc ON {CITED} (doc_id, version)",
    f"CREATE INDEX IF NOT EXISTS {CITED}_stale ON {CITED} (stale_at, doc_id) WHERE stale_at IS NOT NULL",
    f"""CREATE TABLE IF NOT EXISTS {CLOSES} (
    session_key TEXT NOT NULL,
    message_id TEXT NOT NULL,
    closed_at BIGINT NOT NULL,
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    title TEXT NOT NULL,
    path TEXT NOT NULL,
    answer TEXT NOT NULL,
    citations TEXT NOT NULL,
    follow_up TEXT NOT NULL,
    PRIMARY KEY (session_key, message_id)
)""",
    f"CREATE INDEX IF NOT EXISTS {CLOSES}_at ON {CLOSES} (closed_at)",
    f"""CREATE TABLE IF NOT EXISTS {VERIFIED} (
    id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    citations TEXT NOT NULL,
    verified_by TEXT NOT NULL,
    verified_at BIGINT NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0,
    last_used BIGINT,
    stale_at BIGINT,
    change TEXT,
    retired_at BIGINT
)""",
    f"""CREATE TABLE IF NOT EXISTS {ESCALATIONS} (
    id TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    user_id TEXT NOT NULL,
    question TEXT NOT NULL,
    experts TEXT NOT NULL,
    escalated_at BIGINT NOT NULL,
    expert TEXT,
    answered_at BIGINT
)""",
    f"CREATE INDEX IF NOT EXISTS {ESCALATIONS}_at ON {ESCALATIONS} (escalated_at)",
]


@dataclass(frozen=True)
class Gap:
    """A question recorded as not covered or low confidence, not closed yet."""

    session_key: str
    message_id: str
    platform: str
    channel: str
    user_id: str
    question: str
    standalone: str
    at: int


@dataclass(frozen=True)
class Verified:
    id: str
    question: str
    answer: str
    citations: list[dict[str, Any]]  # each with its document's `doc` and `version`
    verified_by: str
    verified_at: int
    uses: int
    stale_at: int | None
    change: str | None
    retired_at: int | None


def _verified(row: Row) -> Verified:
    return Verified(row[0], row[1], row[2], json.loads(row[3]), *row[4:])


class KnowledgeRecords:
    _verified_changes: ClassVar[int] = 0

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self.tables = Tables(checkpointer)

    @property
    def verified_changes(self) -> int:
        """How many times verified answers were saved, retired or made stale in this process,
        through any records (the console has its own; hence counted on the class): a process's copy of their questions
        (`chat.verified.VerifiedQuestions`) is read again after each."""
        return KnowledgeRecords._verified_changes

    async def setup(self) -> None:
        await self.tables.create(_CREATE)

    # --- what answers cited ------------------------------------------------------------------

    async def cited(
        self, session_key: str, message_id: str, at: int, user_id: str | None, cited: Sequence[dict[str, Any]]
    ) -> None:
        """The versions of the documents an answer cited (those with a known version)."""
        for c in {c["doc"]: c for c in cited if c.get("doc") and c.get("version")}.values():
            await self.tables.execute(
                f"INSERT INTO {CITED} (session_key, message_id, doc_id, at, user_id, title, path, version) "
                "VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT DO NOTHING",
                (session_key, message_id, c["doc"], at, user_id, c.get("title", ""), c.get("path", ""), c["version"]),
            )

    async def went_stale(self, doc_id: str, version: str, change: str, at: int) -> int:
        """Mark the answers that cited another version of `doc_id` stale; how many."""
        return await self.tables.execute(
            f"UPDATE {CITED} SET stale_at = {{p}}, change = {{p}} "
            "WHERE doc_id = {p} AND version <> {p} AND stale_at IS NULL",
            (at, change, doc_id, version),
        )

    async def changed_in_session(self, session_key: str, doc_ids: Sequence[str]) -> list[str]:
        """The titles of those of `doc_ids` that every earlier answer of the session cited in a
        version since changed: the session has not been told of the change yet."""
        if not doc_ids:
            return []
        marks = ", ".join("{p}" for _ in doc_ids)
        rows = await self.tables.fetch(
            f"SELECT doc_id, MAX(title) FROM {CITED} WHERE session_key = {{p}} AND doc_id IN ({marks}) "
            "GROUP BY doc_id HAVING COUNT(*) = COUNT(stale_at) ORDER BY MAX(title)",
            (session_key, *doc_ids),
        )
        return [str(title) for _, title in rows]

    async def stale_question(self, session_key: str, answer_ref: str) -> str | None:
        """The question of the answer `answer_ref` when that answer cited a document changed since."""
        rows = await self.tables.fetch(
            f"SELECT t.question FROM {TABLE} t WHERE t.session_key = {{p}} AND t.answer_ref = {{p}} "
            f"AND t.question IS NOT NULL AND EXISTS (SELECT 1 FROM {CITED} c WHERE c.session_key = t.session_key "
            "AND c.message_id = t.message_id AND c.stale_at IS NOT NULL) ORDER BY t.at DESC LIMIT 1",
            (session_key, answer_ref),
        )
        return str(rows[0][0]) if rows else None

    async def prune(self, before_ms: int) -> None:
        await self.tables.execute(f"DELETE FROM {CITED} WHERE at < {{p}}", (before_ms,))
        await self.tables.execute(f"DELETE FROM {CLOSES} WHERE closed_at < {{p}}", (before_ms,))

    # --- gaps ------------------------------------------------------------------------------

    async def open_gaps(self, since_ms: int, limit: int = 5000) -> list[Gap]:
        """The newest questions not covered (or low confidence) since `since_ms`, not closed."""
        rows = await self.tables.fetch(
            "SELECT t.session_key, t.message_id, t.platform, t.channel, COALESCE(t.user_id, ''), t.question, "
            f"COALESCE(t.standalone, ''), t.at FROM {TABLE} t WHERE t.outcome IN {GAP_OUTCOMES} AND t.at >= {{p}} "
            f"AND t.question IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {CLOSES} c "
            "WHERE c.session_key = t.session_key AND c.message_id = t.message_id) "
            f"ORDER BY t.at DESC LIMIT {int(limit)}",
            (since_ms,),
        )
        return [Gap(*row) for row in rows]

    async def close(self, gap: Gap, at: int, doc: dict[str, str], answer: str, citations: list[Any]) -> bool:
        """Record `gap` closed by `doc`, its follow-up still to decide; False when it already was."""
        return bool(
            await self.tables.execute(
                f"INSERT INTO {CLOSES} (session_key, message_id, closed_at, platform, channel, doc_id, title, path, "
                "answer, citations, follow_up) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, 'pending') "
                "ON CONFLICT DO NOTHING",
                (
                    gap.session_key,
                    gap.message_id,
                    at,
                    gap.platform,
                    gap.channel,
                    doc["doc_id"],
                    doc["title"],
                    doc["path"],
                    answer,
                    json.dumps(citations),
                ),
            )
        )

    async def waiting(self, platform: str, since_ms: int) -> list[tuple[Gap, str, list[dict[str, Any]]]]:
        """The gaps of `platform` closed since `since_ms` whose follow-up waits for a bot: each
        with the answer found and its citations."""
        rows = await self.tables.fetch(
            "SELECT t.session_key, t.message_id, t.platform, t.channel, COALESCE(t.user_id, ''), t.question, "
            f"COALESCE(t.standalone, ''), t.at, c.answer, c.citations FROM {CLOSES} c JOIN {TABLE} t "
            "ON t.session_key = c.session_key AND t.message_id = c.message_id "
            "WHERE c.follow_up = 'waiting' AND c.platform = {p} AND c.closed_at >= {p} ORDER BY c.closed_at LIMIT 500",
            (platform, since_ms),
        )
        return [(Gap(*row[:8]), row[8], json.loads(row[9])) for row in rows]

    async def claim(self, gap: Gap) -> bool:
        """Take a waiting follow-up to send it: False when another process took it first."""
        return bool(
            await self.tables.execute(
                f"UPDATE {CLOSES} SET follow_up = 'sending' WHERE session_key = {{p}} AND message_id = {{p}} "
                "AND follow_up = 'waiting'",
                (gap.session_key, gap.message_id),
            )
        )

    async def followed_up(self, gap: Gap, outcome: str) -> None:
        """What became of the follow-up: sent, or why not (off, scope, limit, waiting, failed)."""
        await self.tables.execute(
            f"UPDATE {CLOSES} SET follow_up = {{p}} WHERE session_key = {{p}} AND message_id = {{p}}",
            (outcome, gap.session_key, gap.message_id),
        )

    # --- verified answers ------------------------------------------------------------------

    async def verify(self, session_key: str, message_id: str, by: str, at: int) -> str | None:
        """Keep the answer of a recorded turn as the verified answer to its question (again
        fresh when it was verified before); its id, or None when the turn has no answer to keep."""
        rows = await self.tables.fetch(
            f"SELECT question, answer, citations FROM {TABLE} WHERE session_key = {{p}} AND message_id = {{p}} "
            "AND outcome = 'answered' AND question IS NOT NULL AND answer IS NOT NULL",
            (session_key, message_id),
        )
        if not rows:
            return None
        question, answer, citations = rows[0]
        ident = hashlib.sha1(f"{session_key}\n{message_id}".encode()).hexdigest()[:16]
        await self.tables.execute(f"DELETE FROM {VERIFIED} WHERE id = {{p}}", (ident,))
        await self.tables.execute(
            f"INSERT INTO {VERIFIED} (id, question, answer, citations, verified_by, verified_at) "
            "VALUES ({p}, {p}, {p}, {p}, {p}, {p})",
            (ident, question, answer, citations, by, at),
        )
        KnowledgeRecords._verified_changes += 1
        return ident

    async def keep_answer(self, question: str, answer: str, by: str, at: int) -> str:
        """A person's own answer to a question (an expert's reply to an escalation) kept as the
        verified answer to it, citing nothing; its id (the same question again replaces it)."""
        ident = hashlib.sha1(f"expert\n{question.strip().lower()}".encode()).hexdigest()[:16]
        await self.tables.execute(f"DELETE FROM {VERIFIED} WHERE id = {{p}}", (ident,))
        await self.tables.execute(
            f"INSERT INTO {VERIFIED} (id, question, answer, citations, verified_by, verified_at) "
            "VALUES ({p}, {p}, {p}, {p}, {p}, {p})",
            (ident, question, answer, "[]", by, at),
        )
        KnowledgeRecords._verified_changes += 1
        return ident

    # --- escalations to experts (help channels) ------------------------------------------------

    async def escalated(self, ident: str, where: tuple[str, str, str], question: str, experts: str, at: int) -> None:
        """A question sent to the experts (`where`: platform, channel, who asked); once per `ident`."""
        platform, channel, user = where
        await self.tables.execute(f"DELETE FROM {ESCALATIONS} WHERE id = {{p}}", (ident,))
        await self.tables.execute(
            f"INSERT INTO {ESCALATIONS} (id, platform, channel, user_id, question, experts, escalated_at) "
            "VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})",
            (ident, platform, channel, user, question, experts, at),
        )

    async def expert_replied(self, ident: str, expert: str, at: int) -> None:
        """The first expert's reply to an escalation, relayed to the asker."""
        await self.tables.execute(
            f"UPDATE {ESCALATIONS} SET expert = {{p}}, answered_at = {{p}} WHERE id = {{p}} AND answered_at IS NULL",
            (expert, at, ident),
        )

    async def verify_answer(self, session_key: str, answer_ref: str, by: str, at: int) -> str:
        """Keep the answer a curator's button names (its `answer_ref`) as verified: "saved";
        "stale" when a document it cites changed since; "gone" when no such answer is recorded."""
        rows = await self.tables.fetch(
            f"SELECT t.message_id, EXISTS (SELECT 1 FROM {CITED} c WHERE c.session_key = t.session_key "
            f"AND c.message_id = t.message_id AND c.stale_at IS NOT NULL) FROM {TABLE} t "
            "WHERE t.session_key = {p} AND t.answer_ref = {p} AND t.outcome = 'answered' ORDER BY t.at DESC LIMIT 1",
            (session_key, answer_ref),
        )
        if not rows:
            return "gone"
        message_id, stale = rows[0]
        if stale:
            return "stale"
        return "saved" if await self.verify(session_key, message_id, by, at) is not None else "gone"

    async def verified(self, active_only: bool = False, limit: int = 500) -> list[Verified]:
        where = f"WHERE {ACTIVE}" if active_only else ""
        rows = await self.tables.fetch(
            f"SELECT {VERIFIED_COLUMNS} FROM {VERIFIED} {where} ORDER BY verified_at DESC LIMIT {int(limit)}"
        )
        return [_verified(r) for r in rows]

    async def active_questions(self, limit: int = 500) -> list[tuple[str, str]]:
        """The ids and questions of the active verified answers, newest first: all a turn needs to
        find the one its question matches, without reading every answer and its citations."""
        rows = await self.tables.fetch(
            f"SELECT id, question FROM {VERIFIED} WHERE {ACTIVE} ORDER BY verified_at DESC LIMIT {int(limit)}"
        )
        return [(r[0], r[1]) for r in rows]

    async def active_verified(self, ident: str) -> Verified | None:
        """The verified answer `ident` if it is still active: read when given, as another process
        may have retired it or made it stale since this one read the questions."""
        rows = await self.tables.fetch(
            f"SELECT {VERIFIED_COLUMNS} FROM {VERIFIED} WHERE id = {{p}} AND {ACTIVE}", (ident,)
        )
        return _verified(rows[0]) if rows else None

    async def used(self, ident: str, at: int) -> None:
        await self.tables.execute(
            f"UPDATE {VERIFIED} SET uses = uses + 1, last_used = {{p}} WHERE id = {{p}}", (at, ident)
        )

    async def retire(self, ident: str, at: int) -> bool:
        sql = f"UPDATE {VERIFIED} SET retired_at = {{p}} WHERE id = {{p}} AND retired_at IS NULL"
        retired = bool(await self.tables.execute(sql, (at, ident)))
        KnowledgeRecords._verified_changes += 1
        return retired

    async def verified_stale(self, ident: str, change: str, at: int) -> None:
        await self.tables.execute(
            f"UPDATE {VERIFIED} SET stale_at = {{p}}, change = {{p}} WHERE id = {{p}} AND stale_at IS NULL",
            (at, change, ident),
        )
        KnowledgeRecords._verified_changes += 1
