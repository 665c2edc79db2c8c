"""The checkpointer: Postgres when `DATABASE_URL` is set, otherwise a SQLite file.

Every step of a conversation is checkpointed, so a paused clarification survives a restart and
any process with the same database can resume it. A step's own writes are saved with its
checkpoint, not before it in a transaction of their own (`StepWrites`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.constants import TASKS
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from threadsage.config import Settings
from threadsage.private_files import private_dir, private_file

POOL_SIZE = 10
SCHEMA_LOCK = 0x7468726561647361  # the Postgres advisory lock key of table set-up ("threadsa")


KEPT_ALONE = frozenset({*WRITES_IDX_MAP, TASKS})  # an interrupt, a resume value, an error, a scheduled task, a Send


class StepWrites(BaseCheckpointSaver[str]):
    """A checkpointer that keeps a node's writes to the state until the step's checkpoint, which
    holds them anyway, instead of saving them first in a transaction of their own.

    LangGraph saves each finished task's writes at once so that, in a step of several tasks run in
    parallel, a crash does not lose the finished ones; every step of this graph has one task, and
    its checkpoint follows at once. A standard turn went from 11 transactions to 6 (measured in
    docs/performance.md). A process killed between a node's end and its checkpoint's commit runs
    that node again, a window the size of one commit, as before: then it was between the node's
    end and its writes' commit. Writes that no checkpoint holds (an interrupt, a resume value, an
    error, a Send) are saved at once as before. Channels that rebuild their value from saved writes
    (LangGraph's `DeltaChannel`) would need them: the graph has none (tests/memory/test_checkpoints.py).
    """

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        alone = [(channel, value) for channel, value in writes if channel in KEPT_ALONE]
        if alone:
            await super().aput_writes(config, alone, task_id, task_path)


class PostgresSaver(StepWrites, AsyncPostgresSaver):
    pass


class SqliteSaver(StepWrites, AsyncSqliteSaver):
    pass


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[str]]:
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
