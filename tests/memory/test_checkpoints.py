"""Checkpoints: Postgres opened by several processes at once on a new database, SQLite files
readable by their owner only, a step's writes saved with its checkpoint, and each checkpoint saved
in one statement as the rows LangGraph's own `aput` writes."""

from __future__ import annotations

import asyncio
import copy
import os
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    empty_checkpoint,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.conversation import QUESTION, llm_chat, route_to
from threadsage.chat import ClarificationAnswer, ReplyKind, Turn
from threadsage.graph.build import build_graph
from threadsage.memory import checkpoints
from threadsage.memory.checkpoints import StepWrites, open_checkpointer, postgres_checkpointer
from threadsage.memory.langgraph_internals import DeltaSnapshot, OneStatementPut
from threadsage.memory.sessions import thread_id
from threadsage.records.votes import FeedbackStore
from threadsage.settings.environment import Settings


async def test_workers_starting_together_on_a_new_database_set_it_up_once(pg_url: str) -> None:
    async def start() -> None:
        async with postgres_checkpointer(pg_url) as saver:
            await FeedbackStore(saver).setup()

    await asyncio.gather(*(start() for _ in range(6)))  # raced into duplicate keys before the lock
    async with postgres_checkpointer(pg_url) as saver:
        assert [t async for t in saver.alist(None)] == []


async def test_a_turn_reads_its_thread_from_the_database_once_under_its_lock(
    tmp_path: Path, pg_url: str, llm: FakeOpenAI, handbook_kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat service's read (what the turn is) and LangGraph's (to run it) are one query; a
    click reads once more before the lock, to accept it at once."""
    reads: list[str] = []
    original = AsyncPostgresSaver.aget_tuple

    async def counted(self: AsyncPostgresSaver, config: RunnableConfig) -> Any:
        reads.append(config["configurable"]["thread_id"])
        return await original(self, config)

    monkeypatch.setattr(AsyncPostgresSaver, "aget_tuple", counted)
    llm.script["RouteDecision"] = route_to("HOW_TO")
    async with llm_chat(tmp_path, llm, handbook_kb, DATABASE_URL=pg_url) as chat:
        [answer] = await chat.handle(Turn("test", "test:w:c:once", "U1", "m1", text=QUESTION))
        assert answer.kind is ReplyKind.ANSWER and reads == [thread_id("test:w:c:once")]
        [follow] = await chat.handle(Turn("test", "test:w:c:once", "U1", "m2", text="And for contractors?"))
        assert follow.kind is ReplyKind.ANSWER and len(reads) == 2
        llm.script["RouteDecision"] = route_to("HOW_TO", clarify=True, clarify_options=["Laptops", "Phones"])
        [ask] = await chat.handle(Turn("test", "test:w:c:click", "U1", "m3", text="How do I get a new one?"))
        llm.script["RouteDecision"] = route_to("HOW_TO")
        reads.clear()
        click = Turn("test", "test:w:c:click", "U1", "c1", answer=ClarificationAnswer(ask.interrupt_id or "", 0))
        [chosen] = await chat.handle(click)
    assert chosen.kind is ReplyKind.ANSWER and reads == [thread_id("test:w:c:click")] * 2


async def test_sqlite_checkpoints_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = Settings(THREADSAGE_DATA_DIR=data, DATABASE_URL=None, _env_file=None)
    previous = os.umask(0)  # the modes must not depend on it
    try:
        async with open_checkpointer(settings) as saver:
            await FeedbackStore(saver).setup()
            modes = {p.name: p.stat().st_mode & 0o777 for p in data.iterdir()}
    finally:
        os.umask(previous)
    assert modes == dict.fromkeys(("checkpoints.sqlite", "checkpoints.sqlite-shm", "checkpoints.sqlite-wal"), 0o600)
    assert data.stat().st_mode & 0o777 == 0o700


def test_no_channel_of_the_graph_rebuilds_its_value_from_saved_writes() -> None:
    """`StepWrites` leaves a node's writes to its step's checkpoint; a `DeltaChannel` would read
    them back from the saved writes, and lose them."""
    graph = build_graph()
    assert graph.channels and not [name for name, c in graph.channels.items() if isinstance(c, DeltaChannel)]


async def test_a_turn_saves_its_writes_with_its_checkpoints_and_an_interrupt_at_once(
    tmp_path: Path, pg_url: str, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    async with llm_chat(tmp_path, llm, handbook_kb, DATABASE_URL=pg_url) as chat:
        [answer] = await chat.handle(Turn("test", "test:w:c:answered", "U1", "m1", text=QUESTION))
        llm.script["RouteDecision"] = route_to("HOW_TO", clarify=True, clarify_options=["Laptops", "Phones"])
        [question] = await chat.handle(Turn("test", "test:w:c:paused", "U1", "m2", text="How do I get a new one?"))
    assert (answer.kind, question.kind) == (ReplyKind.ANSWER, ReplyKind.CLARIFICATION)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        writes = await (await conn.execute("SELECT thread_id, channel FROM checkpoint_writes")).fetchall()
        query = "SELECT count(*) FROM checkpoints WHERE thread_id = %s"
        saved = await (await conn.execute(query, (thread_id("test:w:c:answered"),))).fetchone()
    # one a step: understand (routing a first question), generate, judge (composing: it passed)
    assert saved == (3,)
    assert writes == [(thread_id("test:w:c:paused"), "__interrupt__")]


THEIRS = "/langgraph"  # the thread id LangGraph's own `aput` saves a checkpoint under, beside ours
Put = tuple[dict[str, Any], Checkpoint, CheckpointMetadata]  # the config's ids (its parent's), checkpoint, metadata


class Twice(OneStatementPut):
    """Our put, each checkpoint saved again by LangGraph's own `aput` (a plain saver on the same
    tables) under the thread's id + THEIRS; what each put was given is kept in `puts`."""

    puts: list[Put]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"]
        ids = {key: configurable.get(key) for key in ("thread_id", "checkpoint_ns", "checkpoint_id")}
        self.puts.append((ids, copy.deepcopy(checkpoint), get_serializable_checkpoint_metadata(config, metadata)))
        theirs = {**configurable, "thread_id": configurable["thread_id"] + THEIRS}
        await AsyncPostgresSaver(self.conn).aput({**config, "configurable": theirs}, checkpoint, metadata, new_versions)
        return await super().aput(config, checkpoint, metadata, new_versions)


class SavedTwice(StepWrites, Twice):
    """The saver of Postgres threads (`PostgresSaver`), each checkpoint it saves (not those
    `StepWrites` skips) saved by LangGraph's `aput` too."""


class DroppingABlob(SavedTwice):
    """Ours, the last blob of a put lost (what the comparisons below must see)."""

    def _dump_blobs(self, *args: Any) -> list[tuple[str, str, str, str, str, bytes | None]]:
        return super()._dump_blobs(*args)[:-1]


async def differences(saver: type[SavedTwice], tmp_path: Path, pg_url: str, llm: FakeOpenAI, kb: Any) -> list[str]:
    """An answered turn and a paused one, checkpointed by `saver`: how the rows of its checkpoints
    differ from those LangGraph's `aput` wrote, and how what LangGraph's reads give back differs
    from what each put was given (the checkpoint, its blobs, its metadata, its parent), and the
    paused turn's interrupt."""
    puts: list[Put] = []
    saver.puts = puts
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(checkpoints, "PostgresSaver", saver)
        llm.script["RouteDecision"] = route_to("HOW_TO")
        async with llm_chat(tmp_path, llm, kb, DATABASE_URL=pg_url) as chat:
            # a place's categories: a list, saved as a blob, given by the input and no node
            places = ("engineering", "finance", "it", "people")
            await chat.handle(Turn("test", "test:w:c:answered", "U1", "m1", text=QUESTION, categories=places))
            llm.script["RouteDecision"] = route_to("HOW_TO", clarify=True, clarify_options=["Laptops", "Phones"])
            [question] = await chat.handle(Turn("test", "test:w:c:paused", "U1", "m2", text="How do I get one?"))
    found = []
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True, row_factory=dict_row) as conn:
        for thread in {put[0]["thread_id"] for put in puts}:
            for table, columns in TABLES.items():
                ours, theirs = [await _rows(conn, table, columns, thread + side) for side in ("", THEIRS)]
                if ours != theirs:
                    found.append(f"{table} of {thread}: {ours} != {theirs}")
        langgraph = AsyncPostgresSaver(conn)
        for ids, checkpoint, metadata in puts:
            saved = await langgraph.aget_tuple({"configurable": {**ids, "checkpoint_id": checkpoint["id"]}})
            parent = saved and saved.parent_config and saved.parent_config["configurable"]["checkpoint_id"]
            expected = (checkpoint, metadata, ids["checkpoint_id"])
            if saved is None or (saved.checkpoint, saved.metadata, parent) != expected:
                found.append(f"{checkpoint['id']} read back as {saved}, saved as {expected}")
        paused = await langgraph.aget_tuple(
            {"configurable": {"thread_id": thread_id("test:w:c:paused"), "checkpoint_ns": ""}}
        )
    pending = [(channel, [i.id for i in value]) for _, channel, value in paused.pending_writes] if paused else None
    if pending != [("__interrupt__", [question.interrupt_id])]:
        found.append(f"the paused thread's pending writes: {pending}")
    return found


TABLES = {  # every column but the thread's id: the rest of the primary key, the others
    "checkpoints": ("checkpoint_ns, checkpoint_id", "parent_checkpoint_id, type, checkpoint, metadata"),
    "checkpoint_blobs": ("checkpoint_ns, channel, version", "type, blob"),
}


async def _rows(
    conn: psycopg.AsyncConnection[Any], table: str, columns: tuple[str, str], thread: str
) -> list[dict[str, Any]]:
    key, others = columns
    query = f"SELECT {key}, {others} FROM {table} WHERE thread_id = %s ORDER BY {key}"
    return await (await conn.execute(query, (thread,))).fetchall()  # type: ignore[no-any-return]


async def test_a_checkpoint_is_saved_as_langgraph_saves_it_and_reads_back_through_it(
    tmp_path: Path, pg_url: str, llm: FakeOpenAI, handbook_kb
) -> None:
    assert await differences(SavedTwice, tmp_path, pg_url, llm, handbook_kb) == []


async def test_a_lost_blob_is_a_difference(tmp_path: Path, pg_url: str, llm: FakeOpenAI, handbook_kb) -> None:
    found = await differences(DroppingABlob, tmp_path, pg_url, llm, handbook_kb)
    assert any(f.startswith("checkpoint_blobs of ") for f in found)
    assert any(" read back as " in f for f in found)


async def test_a_checkpoint_saved_again_is_updated_as_langgraph_updates_it(pg_url: str) -> None:
    """Its row takes the new values and metadata, a blob already saved at its version stays."""
    versions = {"found": "1", "route": "1"}
    first = {**empty_checkpoint(), "channel_values": {"found": ["first"], "route": "a"}, "channel_versions": versions}
    again = {**first, "channel_values": {"found": ["again"], "route": "b"}}
    async with postgres_checkpointer(pg_url) as saver:
        for aput, thread in ((saver.aput, "t"), (AsyncPostgresSaver(saver.conn).aput, "t" + THEIRS)):  # type: ignore[attr-defined]
            config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            await aput(config, first, {"step": 1}, versions)
            await aput(config, again, {"step": 2}, versions)
        saved = await saver.aget_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
    assert saved and saved.checkpoint["channel_values"] == {"found": ["first"], "route": "b"}
    assert saved.metadata == {"step": 2}
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True, row_factory=dict_row) as conn:
        for table, columns in TABLES.items():
            assert await _rows(conn, table, columns, "t") == await _rows(conn, table, columns, "t" + THEIRS)


async def test_a_delta_channel_snapshot_is_refused(pg_url: str) -> None:
    """`StepWrites` does not keep the writes a `DeltaChannel` is rebuilt from."""
    checkpoint = {**empty_checkpoint(), "channel_values": {"log": DeltaSnapshot(["a"])}}
    async with postgres_checkpointer(pg_url) as saver:
        with pytest.raises(NotImplementedError, match="DeltaChannel"):
            await saver.aput({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {}, {"log": "1"})
