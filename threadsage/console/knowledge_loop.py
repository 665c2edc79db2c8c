"""What the console shows of the knowledge loop (`threadsage.chat.knowledge_loop`): the answers gone stale,
grouped by the document that changed, with how many people saw them; the gaps a new or changed
document closed, and what became of each follow-up; the verified answers with their use counts; the
questions sent to experts from help channels, answered or open.
Each bounded (LIMIT), on the indexes of `threadsage.records.knowledge`."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from typing import Any

from threadsage.records.knowledge import CITED, CLOSES, ESCALATIONS, KnowledgeRecords
from threadsage.records.turns import TABLE

STALE_DOCUMENTS = 50
PER_DOCUMENT = 10
CLOSED_LIMIT = 200


class LoopData:
    def __init__(self, records: KnowledgeRecords) -> None:
        self.records = records
        self.tables = records.tables

    async def stale(self, limit: int = STALE_DOCUMENTS) -> list[dict[str, Any]]:
        """The documents whose change left answers stale, the latest first: which change, how
        many answers, how many people asked them, and the newest of those answers."""
        groups = await self.tables.fetch(
            "SELECT c.doc_id, MAX(c.title), MAX(c.path), MAX(c.change), MAX(c.stale_at), COUNT(*), "
            f"COUNT(DISTINCT COALESCE(c.user_id, c.session_key)) FROM {CITED} c WHERE c.stale_at IS NOT NULL "
            f"GROUP BY c.doc_id ORDER BY 5 DESC LIMIT {int(limit)}"
        )
        if not groups:
            return []
        docs = [g[0] for g in groups]
        marks = ", ".join("{p}" for _ in docs)
        rows = await self.tables.fetch(
            "SELECT c.doc_id, t.at, t.platform, t.channel, t.user_id, t.question, t.answer FROM "
            f"{CITED} c JOIN {TABLE} t ON t.session_key = c.session_key AND t.message_id = c.message_id "
            f"WHERE c.stale_at IS NOT NULL AND c.doc_id IN ({marks}) ORDER BY t.at DESC "
            f"LIMIT {PER_DOCUMENT * len(docs)}",
            docs,
        )
        newest: dict[str, list[dict[str, Any]]] = defaultdict(list)
        names = ("at", "platform", "channel", "user_id", "question", "answer")
        for doc, *row in rows:
            newest[doc].append(dict(zip(names, row, strict=True)))
        return [
            {"doc_id": doc, "title": title, "path": path, "change": change, "stale_at": int(at),
             "answers": int(answers), "people": int(people), "newest": newest[doc][:PER_DOCUMENT]}
            for doc, title, path, change, at, answers, people in groups
        ]  # fmt: skip

    async def closed(self, limit: int = CLOSED_LIMIT) -> list[dict[str, Any]]:
        """The gaps closed, the latest first: the question, the document, the follow-up."""
        # The newest closings first, then their turns by key: joined before the LIMIT, Postgres
        # hashed every recorded turn (docs/performance.md, "The knowledge loop's console queries").
        rows = await self.tables.fetch(
            "SELECT c.closed_at, c.platform, c.channel, t.user_id, t.question, t.at, c.title, c.path, c.answer, "
            f"c.citations, c.follow_up FROM (SELECT * FROM {CLOSES} ORDER BY closed_at DESC LIMIT {int(limit)}) c "
            f"JOIN {TABLE} t ON t.session_key = c.session_key AND t.message_id = c.message_id "
            "ORDER BY c.closed_at DESC"
        )
        names = ("closed_at", "platform", "channel", "user_id", "question", "at", "title", "path", "answer",
                 "citations", "follow_up")  # fmt: skip
        found = [dict(zip(names, row, strict=True)) for row in rows]
        for row in found:
            row["citations"] = json.loads(row["citations"])
        return found

    async def escalations(self, limit: int = CLOSED_LIMIT) -> list[dict[str, Any]]:
        """The questions sent to experts, the latest first, with who answered and when."""
        rows = await self.tables.fetch(
            "SELECT escalated_at, platform, channel, user_id, question, experts, expert, answered_at "
            f"FROM {ESCALATIONS} ORDER BY escalated_at DESC LIMIT {int(limit)}"
        )
        names = ("escalated_at", "platform", "channel", "user_id", "question", "experts", "expert", "answered_at")
        return [dict(zip(names, row, strict=True)) for row in rows]

    async def verified(self) -> list[dict[str, Any]]:
        return [asdict(v) for v in await self.records.verified()]
