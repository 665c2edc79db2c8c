"""👍/👎 votes on answers, kept beside the checkpoints (same SQLite file or Postgres database).

One row per (session, answer, person): a second click changes the vote, it never adds a row.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.memory.checkpoints import schema_lock

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
    """On the checkpointer's own connection: an aiosqlite connection or a psycopg pool."""

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self._conn: Any = checkpointer.conn  # type: ignore[attr-defined]
        self._sqlite = type(self._conn).__module__.startswith("aiosqlite")
        self._p = "?" if self._sqlite else "%s"

    async def setup(self) -> None:
        if self._sqlite:
            await self._execute(_CREATE, ())
            return
        async with schema_lock(self._conn):  # processes starting together
            await self._execute(_CREATE, ())

    async def record(self, session_key: str, answer_ref: str, user_id: str, vote: int) -> None:
        params = (session_key, answer_ref, user_id, 1 if vote > 0 else -1, int(time.time()))
        await self._execute(_UPSERT.format(p=self._p), params)

    async def votes(self, session_key: str, answer_ref: str) -> dict[str, int]:
        rows = await self._execute(_SELECT.format(p=self._p), (session_key, answer_ref), fetch=True)
        return {row[0] if self._sqlite else row["user_id"]: row[1] if self._sqlite else row["vote"] for row in rows}

    async def _execute(self, sql: str, params: tuple[object, ...], fetch: bool = False) -> list[Any]:
        if self._sqlite:
            cursor = await self._conn.execute(sql, params)
            rows = await cursor.fetchall() if fetch else []
            await self._conn.commit()
            return list(rows)
        async with self._conn.connection() as conn:
            cursor = await conn.execute(sql, params)
            return await cursor.fetchall() if fetch else []
