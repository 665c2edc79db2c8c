"""Pruning Postgres checkpoints (`AsyncPostgresSaver`).

Ages come from `checkpoint ->> 'ts'` of the JSONB column, so only head rows are de-TOASTed. The
deletes are the saver's own `aprune` ("delete" for abandoned threads, "keep_latest" for live ones,
which also frees the blobs only deleted checkpoints used), run inside a REPEATABLE READ transaction
of ours per thread, so that the recheck of an abandoned thread, the deletes and the counts of the
report (the thread's rows before and after, in the same snapshot) go together, and a dry run rolls
them all back. What a turn writes meanwhile is outside that snapshot and left alone; a thread
another transaction changes meanwhile is skipped (and counted) and pruned next time.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from threadsage.memory.langgraph_internals import CURRENT_HEADS, HEADS, POSTGRES_THREAD_ROWS, connection
from threadsage.memory.pruning.base import Head, PruneReport, head_of, unchanged

log = logging.getLogger(__name__)


class PostgresPruner:
    """The saver's pool, one connection per thread's transaction."""

    name = "postgres"

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self.saver = checkpointer

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        yield

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        conn: Any = connection(self.saver)
        if isinstance(conn, AsyncConnectionPool):
            async with conn.connection() as pooled:
                yield pooled
        else:  # a single connection, shared with the saver: take its turn
            async with self.saver.lock:  # type: ignore[attr-defined]
                yield conn

    async def heads(self) -> dict[str, dict[str, Head]]:
        threads: dict[str, dict[str, Head]] = {}
        async with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(HEADS.format(columns="c.checkpoint ->> 'ts'"))
            for thread_id, ns, checkpoint_id, _, count, ts in await cur.fetchall():
                # what a head keeps besides itself, `aprune` decides: no `keep_from` here
                threads.setdefault(thread_id, {})[ns] = head_of(ns, checkpoint_id, None, count, ts, None)
        return threads

    @asynccontextmanager
    async def _transaction(self, report: PruneReport, dry_run: bool) -> AsyncIterator[Any]:
        """One thread's transaction on one snapshot; a conflict with another writer skips it.
        (`aprune` sets REPEATABLE READ itself, which Postgres allows in a savepoint of a
        transaction already at that level.)"""
        async with self._connection() as conn:
            try:
                async with conn.transaction():
                    await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    yield conn
                    if dry_run:
                        raise psycopg.Rollback()
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected) as exc:
                log.warning("pruning skipped a thread changed meanwhile: %s", exc)
                report.threads_skipped += 1
                raise _Skipped from None

    async def delete_thread(self, thread_id: str, heads: dict[str, Head], report: PruneReport, dry_run: bool) -> None:
        try:
            async with self._transaction(report, dry_run) as conn:
                if not unchanged(await _rows(conn, CURRENT_HEADS.format(p="%s"), (thread_id,)), heads):
                    report.threads_kept += 1  # a new turn came in since the scan
                    return
                deleted = await self._prune(conn, thread_id, "delete")
        except _Skipped:
            return
        _count(report, deleted)
        report.threads_deleted += 1
        report.deleted_thread_ids.append(thread_id)

    async def keep_latest(self, thread_id: str, heads: dict[str, Head], report: PruneReport, dry_run: bool) -> None:
        try:
            async with self._transaction(report, dry_run) as conn:
                deleted = await self._prune(conn, thread_id, "keep_latest")
        except _Skipped:
            return
        _count(report, deleted)

    async def _prune(self, conn: Any, thread_id: str, strategy: str) -> tuple[int, int, int]:
        """The saver's own `aprune`, run on this transaction's connection: it joins the
        transaction (as a savepoint), so it sees the same snapshot and rolls back with it. Returns
        the checkpoints, writes and blobs of the thread it deleted, counted in that snapshot (rows
        a turn adds meanwhile are neither deleted nor counted)."""
        [before] = await _rows(conn, POSTGRES_THREAD_ROWS, {"t": thread_id})
        await AsyncPostgresSaver(conn, serde=self.saver.serde).aprune([thread_id], strategy=strategy)
        [after] = await _rows(conn, POSTGRES_THREAD_ROWS, {"t": thread_id})
        return before[0] - after[0], before[1] - after[1], before[2] - after[2]


async def _rows(conn: Any, sql: str, params: Any) -> list[tuple[Any, ...]]:
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(sql, params)
        rows: list[tuple[Any, ...]] = await cur.fetchall()
        return rows


def _count(report: PruneReport, deleted: tuple[int, int, int]) -> None:
    report.checkpoints_deleted += deleted[0]
    report.writes_deleted += deleted[1]
    report.blobs_deleted += deleted[2]


class _Skipped(Exception):
    """A thread's transaction gave way to another writer."""
