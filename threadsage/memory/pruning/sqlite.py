"""Pruning a SQLite checkpoint file (`AsyncSqliteSaver`).

The checkpoint column is a serialized blob, so the head rows come back in one query and each is
loaded with the saver's own `serde` (one checkpoint per thread, not the whole history that
`alist` would load with every pending write). Deletes go by ids older than the head a thread was
judged by (`checkpoint_id < head`), so a turn that runs meanwhile adds checkpoints that are never
touched, on a connection of its own to the same file (`BEGIN IMMEDIATE`: the bot's writes wait a
few milliseconds), never the saver's shared one. The kept checkpoint's `parent_checkpoint_id` is
cleared when its parent goes, as langgraph's own `prune` does; a head older than checkpoint format
v4 also keeps its parent, where its pending sends live.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.memory.langgraph_internals import (
    CURRENT_HEADS,
    HEADS,
    SQLITE_CUT_PARENT,
    SQLITE_DELETE_OLDER,
    SQLITE_DELETE_THREAD,
    connection,
)
from threadsage.memory.pruning.base import Head, PruneReport, head_of, unchanged


class SQLitePruner:
    """A connection of its own to the saver's file, so that a transaction here never mixes with
    the statements others run on the saver's shared connection."""

    name = "sqlite"

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self.saver = checkpointer
        self.conn: Any = None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        shared: Any = connection(self.saver)
        async with shared.execute("PRAGMA database_list") as cursor:
            path = next((row[2] for row in await cursor.fetchall() if row[1] == "main"), "")
        if not path:
            raise ValueError("pruning needs the checkpoints in a file, not an in-memory SQLite database")
        async with aiosqlite.connect(path, isolation_level=None, timeout=30) as conn:
            self.conn = conn
            yield

    async def heads(self) -> dict[str, dict[str, Head]]:
        threads: dict[str, dict[str, Head]] = {}
        async with self.conn.execute(HEADS.format(columns="c.type, c.checkpoint")) as cursor:
            async for thread_id, ns, checkpoint_id, parent, count, type_, blob in cursor:
                checkpoint = self.saver.serde.loads_typed((type_, blob))
                head = head_of(ns, checkpoint_id, parent, count, checkpoint.get("ts"), checkpoint.get("v"))
                threads.setdefault(thread_id, {})[ns] = head
        return threads

    @asynccontextmanager
    async def _transaction(self, dry_run: bool) -> AsyncIterator[Any]:
        await self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            await self.conn.execute("ROLLBACK")
            raise
        await self.conn.execute("ROLLBACK" if dry_run else "COMMIT")

    async def _rowcount(self, sql: str, params: tuple[str, ...]) -> int:
        async with self.conn.execute(sql, params) as cursor:
            return max(int(cursor.rowcount), 0)

    async def delete_thread(self, thread_id: str, heads: dict[str, Head], report: PruneReport, dry_run: bool) -> None:
        async with self._transaction(dry_run):
            async with self.conn.execute(CURRENT_HEADS.format(p="?"), (thread_id,)) as cursor:
                current = await cursor.fetchall()
            if not unchanged(current, heads):
                report.threads_kept += 1  # a new turn came in since the scan
                return
            writes, checkpoints = SQLITE_DELETE_THREAD
            report.writes_deleted += await self._rowcount(writes, (thread_id,))
            report.checkpoints_deleted += await self._rowcount(checkpoints, (thread_id,))
        report.threads_deleted += 1
        report.deleted_thread_ids.append(thread_id)

    async def keep_latest(self, thread_id: str, heads: dict[str, Head], report: PruneReport, dry_run: bool) -> None:
        writes, checkpoints = SQLITE_DELETE_OLDER
        async with self._transaction(dry_run):
            for ns, head in heads.items():
                key = (thread_id, ns, head.keep_from)
                report.writes_deleted += await self._rowcount(writes, key)
                report.checkpoints_deleted += await self._rowcount(checkpoints, key)
                await self._rowcount(SQLITE_CUT_PARENT, (*key, head.keep_from))
