"""All that threadsage uses of LangGraph's savers beyond their public API, held to the versions it
was tested with.

`OneStatementPut` calls the Postgres saver's protected helpers (`_dump_blobs`, `_cursor`), reuses
its SQL (`UPSERT_CHECKPOINT_BLOBS_SQL`, `UPSERT_CHECKPOINTS_SQL`, whose one `VALUES` row it
repeats) and recognises a `DeltaChannel`'s snapshot by its private type (`_DeltaSnapshot`). None
of this is promised between releases, and a change would not fail loudly: the rows would differ
from those LangGraph's reads expect. So importing this module checks the installed versions
against `TESTED` and refuses any other. To widen a range, run tests/memory with the new version
(LangGraph's conformance suite, and the row-by-row comparison with LangGraph's own `aput`), then
change `TESTED` and pyproject.toml together (a test checks that they agree).

Also here, for the same reason: the savers' connection (`conn`, an attribute their docs do not
promise), which our own tables, retention and pruning share (`connection`, `on_sqlite`), and the
SQL that reads or deletes LangGraph's own rows (its table and column names): the pruning's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib.metadata import version
from itertools import chain
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.postgres.base import UPSERT_CHECKPOINT_BLOBS_SQL, UPSERT_CHECKPOINTS_SQL
from langgraph.checkpoint.serde.types import _DeltaSnapshot as DeltaSnapshot
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from psycopg.types.json import Jsonb

# The releases this module was tested with: the same ranges as in pyproject.toml.
TESTED = {
    "langgraph-checkpoint": ">=4.3.2,<4.4",  # `_DeltaSnapshot`
    "langgraph-checkpoint-postgres": ">=3.2.0,<3.3",  # `_dump_blobs`, `_cursor`, the SQL, `conn`, tables
    "langgraph-checkpoint-sqlite": ">=3.1.2,<4",  # `conn`, its tables
}


class UntestedLangGraph(ImportError):
    """An installed LangGraph saver package outside the versions this module was tested with."""


def refuse_untested(installed: Callable[[str], str] = version) -> None:
    for package, tested in TESTED.items():
        found = installed(package)
        if Version(found) not in SpecifierSet(tested):
            raise UntestedLangGraph(
                f"{package} {found} is installed, but threadsage uses its private API and was tested "
                f"with {package}{tested} only (threadsage/memory/langgraph_internals.py). Install a "
                f"tested version: pip install '{package}{tested}'."
            )


refuse_untested()


def connection(saver: Any) -> Any:
    """The saver's connection (Postgres: a connection or a pool; SQLite: an aiosqlite connection)."""
    return saver.conn


def on_sqlite(saver: Any) -> bool:
    """Whether the saver keeps its checkpoints in SQLite (through aiosqlite)."""
    return type(connection(saver)).__module__.startswith("aiosqlite")


# The latest checkpoint of each thread and namespace, with how many it has: `{columns}` of it more.
HEADS = """SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, h.n, {columns}
FROM (
    SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id, COUNT(*) AS n
    FROM checkpoints GROUP BY thread_id, checkpoint_ns
) AS h
JOIN checkpoints AS c
    ON c.thread_id = h.thread_id AND c.checkpoint_ns = h.checkpoint_ns AND c.checkpoint_id = h.checkpoint_id"""

CURRENT_HEADS = "SELECT checkpoint_ns, MAX(checkpoint_id) FROM checkpoints WHERE thread_id = {p} GROUP BY checkpoint_ns"

# Postgres: a thread's rows in each of the saver's tables (checkpoints, writes, blobs).
POSTGRES_THREAD_ROWS = """SELECT
    (SELECT COUNT(*) FROM checkpoints WHERE thread_id = %(t)s),
    (SELECT COUNT(*) FROM checkpoint_writes WHERE thread_id = %(t)s),
    (SELECT COUNT(*) FROM checkpoint_blobs WHERE thread_id = %(t)s)"""

# SQLite: a thread's writes and checkpoints deleted; those of a namespace older than a checkpoint;
# the parent link of the checkpoint kept, cut.
_OLDER = "thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?"
SQLITE_DELETE_THREAD = ("DELETE FROM writes WHERE thread_id = ?", "DELETE FROM checkpoints WHERE thread_id = ?")
SQLITE_DELETE_OLDER = (f"DELETE FROM writes WHERE {_OLDER}", f"DELETE FROM checkpoints WHERE {_OLDER}")
SQLITE_CUT_PARENT = (
    "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND checkpoint_id = ? AND parent_checkpoint_id < ?"
)


class OneStatementPut(AsyncPostgresSaver):
    """LangGraph's Postgres saver, each checkpoint saved in one statement (`put_sql`), its blobs
    serialised on the event loop.

    LangGraph's `aput` serialises the blobs in a thread, then sends in a pipeline one `INSERT` a
    blob (19 a standard turn) and one for the checkpoint, 7 times a turn. Here the rows are the
    same, made by LangGraph's own helpers (`_dump_blobs`, the metadata, the `Jsonb` columns) and
    statements, with the same conflicts ignored or updated, so LangGraph's reads, the pruning and
    databases saved before read them as before (tests/memory/test_checkpoints.py); the blobs and
    their checkpoint still commit together. A put's blobs (a few KB) serialise in less CPU than
    their hop to a thread and back would cost, so no thread. The client's and the Postgres
    backend's CPU a put, before and after, measured by bench/checkpoint_put.py: see
    docs/performance.md, "Checkpoints and round trips a turn", "One checkpoint statement".
    """

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"]
        thread_id, checkpoint_ns = configurable["thread_id"], configurable["checkpoint_ns"]
        inline, values = split_channel_values(checkpoint["channel_values"])
        versions = {channel: version for channel, version in new_versions.items() if channel in values}
        blobs = self._dump_blobs(thread_id, checkpoint_ns, values, versions)
        params = (
            *chain.from_iterable(blobs),
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            configurable.get("checkpoint_id"),  # its parent's
            Jsonb({**checkpoint, "channel_values": inline}),
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
        )
        async with self._cursor() as cur:
            await cur.execute(put_sql(len(blobs)), params)
        return saved_as(config, checkpoint)


def saved_as(config: RunnableConfig, checkpoint: Checkpoint) -> RunnableConfig:
    """What a saver's `aput` returns: the thread's config naming `checkpoint`, the next one's parent."""
    configurable = config["configurable"]
    return {
        "configurable": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": checkpoint["id"],
        }
    }


BLOB_ROW = "(%s, %s, %s, %s, %s, %s)"  # the one row of LangGraph's UPSERT_CHECKPOINT_BLOBS_SQL


@cache
def put_sql(blobs: int) -> str:
    """A checkpoint and its `blobs` blobs in one statement: LangGraph's UPSERT_CHECKPOINT_BLOBS_SQL
    with a row a blob, then its UPSERT_CHECKPOINTS_SQL. Rows rather than arrays to `unnest`: psycopg
    adapts lists in Python, more CPU a put for the client and the server (docs/performance.md, the
    same section as `OneStatementPut`'s). (Were
    LangGraph's row written otherwise, the statement would keep one row and psycopg refuse a put of
    two blobs or more: the tests would fail.)"""
    if not blobs:
        return UPSERT_CHECKPOINTS_SQL
    insert = UPSERT_CHECKPOINT_BLOBS_SQL.replace(BLOB_ROW, ", ".join([BLOB_ROW] * blobs))
    return f"WITH blobs AS ({insert}) {UPSERT_CHECKPOINTS_SQL}"


def split_channel_values(channel_values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The values a checkpoint's row holds (None and primitives) and those saved as blobs, as
    LangGraph's `aput` splits them. A `DeltaChannel`'s snapshot is refused: `StepWrites` does not
    keep the writes such a channel is rebuilt from."""
    inline: dict[str, Any] = {}
    blobs: dict[str, Any] = {}
    for channel, value in channel_values.items():
        if isinstance(value, DeltaSnapshot):
            raise NotImplementedError(f"channel {channel!r} is a DeltaChannel, which StepWrites does not support")
        if value is None or isinstance(value, str | int | float | bool):
            inline[channel] = value
        else:
            blobs[channel] = value
    return inline, blobs
