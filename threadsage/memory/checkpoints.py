"""The checkpointer: Postgres when `DATABASE_URL` is set, otherwise a SQLite file.

Every step of a conversation is checkpointed, so a paused clarification survives a restart and
any process with the same database can resume it. A step's own writes are saved with its
checkpoint, not before it in a transaction of their own (`StepWrites`). In Postgres a checkpoint
and its blobs are one statement, not one a row (`PostgresSaver`, by `OneStatementPut` in
langgraph_internals.py, the one module that uses LangGraph's private API): seven saves a turn made
the saver's statements a large share of a worker's CPU (docs/performance.md, "Checkpoints and
round trips a turn"). Either way the rows are LangGraph's, as its own
saver writes them. Under a session's lock a turn reads its thread's latest checkpoint once
(`caching_latest_checkpoints`), not once for the chat service and again for LangGraph.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.constants import TASKS
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from threadsage.memory.langgraph_internals import OneStatementPut, saved_as
from threadsage.settings.sections import StorageSettings
from threadsage.support.private_files import private_dir, private_file

POOL_SIZE = 10
SCHEMA_LOCK = 0x7468726561647361  # the Postgres advisory lock key of table set-up ("threadsa")


INPUT = "input"  # a skipped input checkpoint, in `StepWrites._skipped`
MAX_SKIPPED = 10_000  # skipped checkpoints awaiting the next put (it follows within a step)
KEPT_ALONE = frozenset({*WRITES_IDX_MAP, TASKS})  # an interrupt, a resume value, an error, a scheduled task, a Send


class StepWrites(BaseCheckpointSaver[str]):
    """A checkpointer that keeps a node's writes to the state until the step's checkpoint, which
    holds them anyway, instead of saving them first in a transaction of their own.

    LangGraph saves each finished task's writes at once so that, in a step of several tasks run in
    parallel, a crash does not lose the finished ones; every step of this graph has one task, and
    its checkpoint follows at once: about half the transactions of a turn (docs/performance.md,
    "Checkpoints and round trips a turn"). A process killed between a node's end and its checkpoint's commit runs
    that node again, a window the size of one commit, as before: then it was between the node's
    end and its writes' commit. Writes that no checkpoint holds (an interrupt, a resume value, an
    error, a Send) are saved at once as before. Channels that rebuild their value from saved writes
    (LangGraph's `DeltaChannel`) would need them: the graph has none (tests/memory/test_checkpoints.py).

    For the same reason a run's input checkpoint (`source: "input"`) is not saved: it holds the
    state before the input, which the thread's latest checkpoint already holds. Nor is the next,
    the input applied (LangGraph's start task, which makes no model call): its new channel values
    are saved with the checkpoint of the first node's step. A process killed before that has saved
    nothing of the turn: its redelivery runs it from the start, repeating at most the first node's
    one model call — what resuming from the input applied repeated too.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Skipped checkpoints by id: INPUT, or the channels given new values, for the next put to save.
        self._skipped: dict[str, set[str] | str] = {}

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        alone = [(channel, value) for channel, value in writes if channel in KEPT_ALONE]
        if alone:
            _forget_reads()
            await super().aput_writes(config, alone, task_id, task_path)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        skipped = self._skipped.pop(str(config["configurable"].get("checkpoint_id")), None)
        if metadata.get("source") == "input" or skipped == INPUT:
            # the input, or the input applied (the put after the input): kept for the next put
            self._skip(checkpoint["id"], INPUT if metadata.get("source") == "input" else set(new_versions))
            return saved_as(config, checkpoint)
        if skipped:
            versions = checkpoint["channel_versions"]
            new_versions = {**{c: versions[c] for c in skipped if c in versions}, **new_versions}
        _forget_reads()
        return await super().aput(config, checkpoint, metadata, new_versions)

    def _skip(self, checkpoint_id: str, carried: set[str] | str) -> None:
        self._skipped[checkpoint_id] = carried
        while len(self._skipped) > MAX_SKIPPED:  # left by runs that died between two puts
            del self._skipped[next(iter(self._skipped))]

    async def adelete_thread(self, thread_id: str) -> None:
        _forget_reads()
        await super().adelete_thread(thread_id)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Within `caching_latest_checkpoints`, a thread's latest checkpoint comes from the database
        once."""
        reads = _reads.get()
        configurable = config["configurable"]
        if reads is None or configurable.get("checkpoint_id"):
            return await super().aget_tuple(config)
        thread = (str(configurable["thread_id"]), str(configurable.get("checkpoint_ns", "")))
        if thread not in reads:
            reads[thread] = await super().aget_tuple(config)
        return reads[thread]


# The latest checkpoints read in the current `caching_latest_checkpoints` scope, by (thread, namespace).
_reads: ContextVar[dict[tuple[str, str], CheckpointTuple | None] | None] = ContextVar("threadsage_reads", default=None)


@contextmanager
def caching_latest_checkpoints() -> Iterator[None]:
    """A scope (a turn, under its session's lock) in which a thread's latest checkpoint is read
    from the database once, until a write: the chat service reads it to tell what the turn is (a
    redelivery, the answer to a pending clarification), then LangGraph reads it again to run —
    the same rows, fetched and deserialised twice (three times for a click). Only under the lock:
    another process may write the thread otherwise."""
    token = _reads.set({})
    try:
        yield
    finally:
        _reads.reset(token)


def _forget_reads() -> None:
    reads = _reads.get()
    if reads:
        reads.clear()


class PostgresSaver(StepWrites, OneStatementPut):
    pass


class SqliteSaver(StepWrites, AsyncSqliteSaver):
    pass


@asynccontextmanager
async def open_checkpointer(settings: StorageSettings) -> AsyncIterator[BaseCheckpointSaver[str]]:
    if settings.database_url:
        async with postgres_checkpointer(settings.database_url) as saver:
            yield saver
    else:
        database = private_file(private_dir(settings.data_dir) / "checkpoints.sqlite")
        async with SqliteSaver.from_conn_string(str(database)) as saver:
            await saver.setup()
            yield saver


@asynccontextmanager
async def postgres_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """A `PostgresSaver` on a pool (autocommit, dict rows, no prepared statements, as the
    saver requires); `setup()` creates or migrates its tables once. A schema other than the
    default goes in the URL: `?options=-csearch_path%3Dname`."""
    kwargs = {"autocommit": True, "row_factory": dict_row, "prepare_threshold": None}
    pool = AsyncConnectionPool[AsyncConnection[DictRow]](url, min_size=1, max_size=POOL_SIZE, kwargs=kwargs, open=False)
    async with pool:
        saver = PostgresSaver(pool)
        async with schema_lock(pool):
            await saver.setup()
        yield saver


@asynccontextmanager
async def schema_lock(pool: AsyncConnectionPool[AsyncConnection[DictRow]]) -> AsyncIterator[None]:
    """One process at a time creates or migrates tables. Workers starting together on a new
    database otherwise race through the saver's migrations (seen: a duplicate key in
    `checkpoint_migrations`, and the worker exiting).

    The others poll rather than block: a migration's `CREATE INDEX CONCURRENTLY` waits for every
    open transaction, a blocked `pg_advisory_lock` call included — a deadlock (seen)."""
    async with pool.connection() as conn:
        while not await _try_lock(conn):  # noqa: ASYNC110 - polling on purpose (above)
            await asyncio.sleep(0.1)
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


async def _try_lock(conn: AsyncConnection[DictRow]) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (SCHEMA_LOCK,))).fetchone()
    return bool(row and row["ok"])
