"""👍/👎 votes on answers, kept beside the checkpoints (same SQLite file or Postgres database).

One row per (session, answer, person): a second click changes the vote, it never adds a row. The
answer is named by `answer_ref`, the short reference of the turn that gave it (`turn_ref`), which
the recorded turns keep too: a vote joins the question and answer it judged.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.records.tables import Tables

_CREATE = """CREATE TABLE IF NOT EXISTS threadsage_feedback (
    session_key TEXT NOT NULL,
    answer_ref TEXT NOT NULL,
    user_id TEXT NOT NULL,
    vote SMALLINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session_key, answer_ref, user_id)
)"""
_UPSERT = """INSERT INTO threadsage_feedback (session_key, answer_ref, user_id, vote, updated_at)
VALUES ({p}, {p}, {p}, {p}, {p})
ON CONFLICT (session_key, answer_ref, user_id)
DO UPDATE SET vote = excluded.vote, updated_at = excluded.updated_at"""
_SELECT = "SELECT user_id, vote FROM threadsage_feedback WHERE session_key = {p} AND answer_ref = {p}"


class FeedbackStore:
    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self._tables = Tables(checkpointer)

    async def setup(self) -> None:
        await self._tables.create([_CREATE])

    async def record(self, session_key: str, answer_ref: str, user_id: str, vote: int) -> None:
        params = (session_key, answer_ref, user_id, 1 if vote > 0 else -1, int(time.time()))
        await self._tables.execute(_UPSERT, params)

    async def votes(self, session_key: str, answer_ref: str) -> dict[str, int]:
        rows = await self._tables.fetch(_SELECT, (session_key, answer_ref))
        return dict(rows)
