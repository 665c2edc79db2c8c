"""Retention: prune the checkpoints that pile up with every step of every conversation.

`prune(checkpointer, older_than)` sorts threads by their latest checkpoint:

* abandoned — the latest checkpoint is older than `older_than`: the thread goes completely
  (checkpoints, writes and, on Postgres, blobs, in every namespace), as `adelete_thread` would;
* live — everything else: each (thread, namespace) keeps its latest checkpoint with its pending
  writes (a paused clarification's interrupt is one) and, on Postgres, the blobs that checkpoint
  references; older checkpoints, their writes and the blobs only they used go.

Feedback (`threadsage_feedback`) is left alone: it is keyed by session key, not thread id, and a
vote outlives the conversation it was given in.

How the age is read. A checkpoint's `ts` lives inside the checkpoint itself, so only the latest
checkpoint of each (thread, namespace) is read — found by the primary key (checkpoint ids are
time-ordered UUIDv6, the order the savers themselves use for "latest"):

* Postgres: `checkpoint ->> 'ts'` from the JSONB column, in one query joining the per-namespace
  heads (an aggregate the primary-key index answers) back to their rows, so only head rows are
  de-TOASTed;
* SQLite: the checkpoint column is a serialized blob, so the head rows come back in one query and
  each is loaded with the saver's own `serde` (one checkpoint per thread, not the whole history
  that `alist` would load with every pending write).

How it deletes. Each thread is pruned in its own short transaction, by ids older than the head
it was judged by (`checkpoint_id < head`), so a turn that runs meanwhile adds checkpoints that
are never touched; an abandoned thread is first checked again in the transaction and spared if it
has come back to life. On SQLite this uses a connection of its own to the same file (`BEGIN
IMMEDIATE`: the bot's writes wait a few milliseconds), never the saver's shared one. On Postgres
it is REPEATABLE READ; a thread another transaction changes meanwhile is skipped (and counted) and
pruned next time. Deletes are our own statements rather than `adelete_thread` so that the counts
in the report are the rows deleted, in the same transaction; they cover the same tables (and the
test checks that no row of an abandoned thread is left). The kept checkpoint's
`parent_checkpoint_id` is cleared when its parent goes, as langgraph's own `prune` does; a head
older than checkpoint format v4 also keeps its parent, where its pending sends live.

With `dry_run=True` the same transactions run and are rolled back: the report is exact.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.config import Settings

log = logging.getLogger(__name__)

_AGE = re.compile(r"^\s*(\d+)\s*([dhm])\s*$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_age(text: str) -> timedelta:
    """'30d', '12h', '90m' → a timedelta; anything else (or zero) → ValueError."""
    match = _AGE.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise ValueError(
            f"expected a whole number of days, hours or minutes such as 30d, 12h or 90m, not {text!r}"
        )
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


@dataclass
class PruneReport:
    backend: str  # "sqlite" | "postgres"
    dry_run: bool = False
    threads_deleted: int = 0
    checkpoints_deleted: int = 0
    writes_deleted: int = 0
    blobs_deleted: int = 0  # Postgres only: SQLite keeps values inside the checkpoint
    threads_kept: int = 0
    threads_skipped: int = 0  # changed by another transaction meanwhile; pruned next time
    deleted_thread_ids: list[str] = field(default_factory=list, repr=False)

    def summary(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        rows = f"{_n(self.checkpoints_deleted, 'checkpoint')}, {_n(self.writes_deleted, 'write')}"
        if self.backend == "postgres":
            rows += f", {_n(self.blobs_deleted, 'blob')}"
        line = (
            f"{verb} {_n(self.threads_deleted, 'abandoned thread')} and {rows}; "
            f"kept {_n(self.threads_kept, 'live thread')} at the latest checkpoint"
        )
        if self.threads_skipped:
            line += f"; {_n(self.threads_skipped, 'thread')} skipped (changed meanwhile, pruned next time)"
        return line + (" (dry run: nothing deleted)" if self.dry_run else "")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass
class _Head:
    """The latest checkpoint of one (thread, namespace)."""

    namespace: str
    checkpoint_id: str
    keep_from: str  # the oldest checkpoint id kept: the head, or its parent before format v4
    ts: datetime | None
    count: int  # checkpoints in this namespace when scanned


async def prune(
    checkpointer: BaseCheckpointSaver,
    older_than: timedelta,
    now: datetime | None = None,
    dry_run: bool = False,
) -> PruneReport:
    """Delete abandoned threads, and all but the latest checkpoint of live ones (module doc)."""
    if older_than <= timedelta(0):
        raise ValueError("older_than must be positive")
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    cutoff = now - older_than
    backend: _Backend = _SQLite(checkpointer) if _is_sqlite(checkpointer) else _Postgres(checkpointer)
    report = PruneReport(backend=backend.name, dry_run=dry_run)
    async with backend.session():
        threads = await backend.heads()
        for thread_id, heads in threads.items():
            stamps = [h.ts for h in heads.values()]
            if any(ts is None for ts in stamps):
                log.warning("thread %s has a checkpoint without a timestamp: kept as is", thread_id)
                report.threads_kept += 1
                continue
            if max(stamps) < cutoff:  # type: ignore[type-var]
                await backend.delete_thread(thread_id, heads, report, dry_run)
            else:
                report.threads_kept += 1
                if any(h.count > 1 for h in heads.values()):  # else nothing to prune
                    await backend.keep_latest(thread_id, heads, report, dry_run)
    return report


async def prune_periodically(checkpointer: BaseCheckpointSaver, settings: Settings, stop: asyncio.Event) -> None:
    """Prune at once, then every `THREADSAGE_PRUNE_EVERY_HOURS`, until `stop` is set; returns at
    once when `THREADSAGE_PRUNE_OLDER_THAN_DAYS` is 0 (off). A failed run is logged and retried
    at the next tick."""
    if settings.prune_older_than_days <= 0:
        log.info("periodic checkpoint pruning is off (THREADSAGE_PRUNE_OLDER_THAN_DAYS=0)")
        return
    older_than = timedelta(days=settings.prune_older_than_days)
    every = settings.prune_every_hours * 3600
    log.info(
        "pruning checkpoints every %g h: sessions idle over %g days are deleted",
        settings.prune_every_hours,
        settings.prune_older_than_days,
    )
    while not stop.is_set():
        try:
            report = await prune(checkpointer, older_than)
            log.info("checkpoint pruning: %s", report.summary())
        except Exception:
            log.exception("checkpoint pruning failed; trying again in %g h", settings.prune_every_hours)
        try:
            await asyncio.wait_for(stop.wait(), timeout=every)
        except TimeoutError:
            pass


# --- back-ends ---------------------------------------------------------------------------


def _is_sqlite(checkpointer: BaseCheckpointSaver) -> bool:
    return type(checkpointer.conn).__module__.startswith("aiosqlite")  # type: ignore[attr-defined]


def _parse_ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


class _Backend:
    name: str

    def session(self) -> Any: ...
    async def heads(self) -> dict[str, dict[str, _Head]]: ...
    async def delete_thread(self, thread_id: str, heads: dict[str, _Head], report: PruneReport, dry_run: bool) -> None: ...
    async def keep_latest(self, thread_id: str, heads: dict[str, _Head], report: PruneReport, dry_run: bool) -> None: ...


_HEADS = """SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, h.n, {columns}
FROM (
    SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id, COUNT(*) AS n
    FROM checkpoints GROUP BY thread_id, checkpoint_ns
) AS h
JOIN checkpoints AS c
    ON c.thread_id = h.thread_id AND c.checkpoint_ns = h.checkpoint_ns AND c.checkpoint_id = h.checkpoint_id"""

_CURRENT_HEADS = "SELECT checkpoint_ns, MAX(checkpoint_id) FROM checkpoints WHERE thread_id = {p} GROUP BY checkpoint_ns"


def _head(namespace: str, checkpoint_id: str, parent: str | None, count: int, ts: Any, version: Any) -> _Head:
    old_format = isinstance(version, int) and version < 4
    return _Head(namespace, checkpoint_id, parent if old_format and parent else checkpoint_id, _parse_ts(ts), count)


def _unchanged(current: list, heads: dict[str, _Head]) -> bool:
    """Whether a thread's heads are still the ones it was judged by (nothing new came in)."""
    return {ns: head for ns, head in current} == {ns: h.checkpoint_id for ns, h in heads.items()}


class _SQLite(_Backend):
    """A connection of its own to the saver's file, so that a transaction here never mixes with
    the statements others run on the saver's shared connection."""

    name = "sqlite"

    def __init__(self, checkpointer: BaseCheckpointSaver) -> None:
        self.saver = checkpointer
        self.conn: Any = None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        import aiosqlite

        shared: Any = self.saver.conn  # type: ignore[attr-defined]
        async with shared.execute("PRAGMA database_list") as cursor:
            path = next((row[2] for row in await cursor.fetchall() if row[1] == "main"), "")
        if not path:
            raise ValueError("pruning needs the checkpoints in a file, not an in-memory SQLite database")
        async with aiosqlite.connect(path, isolation_level=None, timeout=30) as conn:
            self.conn = conn
            yield

    async def heads(self) -> dict[str, dict[str, _Head]]:
        threads: dict[str, dict[str, _Head]] = {}
        async with self.conn.execute(_HEADS.format(columns="c.type, c.checkpoint")) as cursor:
            async for thread_id, ns, checkpoint_id, parent, count, type_, blob in cursor:
                checkpoint = self.saver.serde.loads_typed((type_, blob))
                head = _head(ns, checkpoint_id, parent, count, checkpoint.get("ts"), checkpoint.get("v"))
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

    async def _rowcount(self, sql: str, params: tuple) -> int:
        async with self.conn.execute(sql, params) as cursor:
            return max(cursor.rowcount, 0)

    async def delete_thread(self, thread_id: str, heads: dict[str, _Head], report: PruneReport, dry_run: bool) -> None:
        async with self._transaction(dry_run):
            async with self.conn.execute(_CURRENT_HEADS.format(p="?"), (thread_id,)) as cursor:
                current = await cursor.fetchall()
            if not _unchanged(current, heads):
                report.threads_kept += 1  # a new turn came in since the scan
                return
            report.writes_deleted += await self._rowcount("DELETE FROM writes WHERE thread_id = ?", (thread_id,))
            report.checkpoints_deleted += await self._rowcount("DELETE FROM checkpoints WHERE thread_id = ?", (thread_id,))
        report.threads_deleted += 1
        report.deleted_thread_ids.append(thread_id)

    async def keep_latest(self, thread_id: str, heads: dict[str, _Head], report: PruneReport, dry_run: bool) -> None:
        where = "thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?"
        async with self._transaction(dry_run):
            for ns, head in heads.items():
                key = (thread_id, ns, head.keep_from)
                report.writes_deleted += await self._rowcount(f"DELETE FROM writes WHERE {where}", key)
                report.checkpoints_deleted += await self._rowcount(f"DELETE FROM checkpoints WHERE {where}", key)
                await self._rowcount(
                    "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? AND checkpoint_ns = ? "
                    "AND checkpoint_id = ? AND parent_checkpoint_id < ?",
                    (*key, head.keep_from),
                )


class _Postgres(_Backend):
    """The saver's pool, one connection per thread's transaction."""

    name = "postgres"

    def __init__(self, checkpointer: BaseCheckpointSaver) -> None:
        self.saver = checkpointer

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        yield

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        from psycopg_pool import AsyncConnectionPool

        conn: Any = self.saver.conn  # type: ignore[attr-defined]
        if isinstance(conn, AsyncConnectionPool):
            async with conn.connection() as pooled:
                yield pooled
        else:  # a single connection, shared with the saver: take its turn
            async with self.saver.lock:  # type: ignore[attr-defined]
                yield conn

    async def heads(self) -> dict[str, dict[str, _Head]]:
        from psycopg.rows import tuple_row

        columns = "c.checkpoint ->> 'ts', c.checkpoint ->> 'v'"
        threads: dict[str, dict[str, _Head]] = {}
        async with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(_HEADS.format(columns=columns))
            for thread_id, ns, checkpoint_id, parent, count, ts, version in await cur.fetchall():
                version = int(version) if version and version.isdigit() else None
                threads.setdefault(thread_id, {})[ns] = _head(ns, checkpoint_id, parent, count, ts, version)
        return threads

    @asynccontextmanager
    async def _transaction(self, report: PruneReport, dry_run: bool) -> AsyncIterator[Any]:
        """One thread's transaction on one snapshot; a conflict with another writer skips it."""
        import psycopg
        from psycopg.rows import tuple_row

        async with self._connection() as conn:
            try:
                async with conn.transaction():
                    async with conn.cursor(row_factory=tuple_row) as cur:
                        await cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                        yield cur
                    if dry_run:
                        raise psycopg.Rollback()
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected) as exc:
                log.warning("pruning skipped a thread changed meanwhile: %s", exc)
                report.threads_skipped += 1
                raise _Skipped from None

    async def delete_thread(self, thread_id: str, heads: dict[str, _Head], report: PruneReport, dry_run: bool) -> None:
        counts = {}
        try:
            async with self._transaction(report, dry_run) as cur:
                await cur.execute(_CURRENT_HEADS.format(p="%s"), (thread_id,))
                if not _unchanged(await cur.fetchall(), heads):
                    report.threads_kept += 1  # a new turn came in since the scan
                    return
                for table in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
                    await cur.execute(f"DELETE FROM {table} WHERE thread_id = %s", (thread_id,))
                    counts[table] = cur.rowcount
        except _Skipped:
            return
        report.writes_deleted += counts["checkpoint_writes"]
        report.blobs_deleted += counts["checkpoint_blobs"]
        report.checkpoints_deleted += counts["checkpoints"]
        report.threads_deleted += 1
        report.deleted_thread_ids.append(thread_id)

    async def keep_latest(self, thread_id: str, heads: dict[str, _Head], report: PruneReport, dry_run: bool) -> None:
        where = "thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s"
        versions = (
            "SELECT DISTINCT v.key, v.value FROM checkpoints AS c "
            "CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v WHERE {where}"
        )
        counts = {"writes": 0, "checkpoints": 0, "blobs": 0}
        try:
            async with self._transaction(report, dry_run) as cur:
                for ns, head in heads.items():
                    key = (thread_id, ns, head.keep_from)
                    # blob versions the doomed checkpoints use, then those the kept ones still use
                    await cur.execute(versions.format(where=where), key)
                    freed = set(await cur.fetchall())
                    await cur.execute(f"DELETE FROM checkpoint_writes WHERE {where}", key)
                    counts["writes"] += cur.rowcount
                    await cur.execute(f"DELETE FROM checkpoints WHERE {where}", key)
                    counts["checkpoints"] += cur.rowcount
                    await cur.execute(
                        "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = %s "
                        "AND checkpoint_ns = %s AND checkpoint_id = %s AND parent_checkpoint_id < %s",
                        (*key, head.keep_from),
                    )
                    await cur.execute(versions.format(where="thread_id = %s AND checkpoint_ns = %s"), (thread_id, ns))
                    garbage = sorted(freed - set(await cur.fetchall()))
                    if garbage:
                        await cur.execute(
                            "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s "
                            "AND (channel, version) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                            (thread_id, ns, [c for c, _ in garbage], [v for _, v in garbage]),
                        )
                        counts["blobs"] += cur.rowcount
        except _Skipped:
            return
        report.writes_deleted += counts["writes"]
        report.checkpoints_deleted += counts["checkpoints"]
        report.blobs_deleted += counts["blobs"]


class _Skipped(Exception):
    """A thread's transaction gave way to another writer."""
