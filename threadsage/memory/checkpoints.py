"""The checkpointer: Postgres when `DATABASE_URL` is set, otherwise a SQLite file.

Every step of a conversation is checkpointed, so a paused clarification survives a restart and
any process with the same database can resume it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from threadsage.config import Settings
from threadsage.private_files import private_dir, private_file

POOL_SIZE = 10
SCHEMA_LOCK = 0x7468726561647361  # the Postgres advisory lock key of table set-up ("threadsa")


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[str]]:
    if settings.database_url:
        async with postgres_checkpointer(settings.database_url) as saver:
            yield saver
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        database = private_file(private_dir(settings.data_dir) / "checkpoints.sqlite")
        async with AsyncSqliteSaver.from_conn_string(str(database)) as saver:
            await saver.setup()
            yield saver


@asynccontextmanager
async def postgres_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """An `AsyncPostgresSaver` on a pool (autocommit, dict rows, no prepared statements, as the
    saver requires); `setup()` creates or migrates its tables once. A schema other than the
    default goes in the URL: `?options=-csearch_path%3Dname`."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    kwargs = {"autocommit": True, "row_factory": dict_row, "prepare_threshold": None}
    pool = AsyncConnectionPool[AsyncConnection[DictRow]](url, min_size=1, max_size=POOL_SIZE, kwargs=kwargs, open=False)
    async with pool:
        saver = AsyncPostgresSaver(pool)
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
