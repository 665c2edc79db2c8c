"""Checkpoints: Postgres opened by several processes at once on a new database, SQLite files
readable by their owner only, and a step's writes saved with its checkpoint."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psycopg
from langgraph.channels.delta import DeltaChannel

from tests.fakes.openai_server import FakeOpenAI
from tests.graph.test_llm_back_end import QUESTION, llm_chat, route_to
from threadsage.chat import ReplyKind, Turn
from threadsage.config import Settings
from threadsage.graph.build import build_graph
from threadsage.memory.checkpoints import open_checkpointer, postgres_checkpointer
from threadsage.memory.feedback import FeedbackStore
from threadsage.memory.sessions import thread_id


async def test_workers_starting_together_on_a_new_database_set_it_up_once(pg_url: str) -> None:
    async def start() -> None:
        async with postgres_checkpointer(pg_url) as saver:
            await FeedbackStore(saver).setup()

    await asyncio.gather(*(start() for _ in range(6)))  # raced into duplicate keys before the lock
    async with postgres_checkpointer(pg_url) as saver:
        assert [t async for t in saver.alist(None)] == []


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
    # the input's, its start's, then one a node: understand (routing a first question), generate, judge, compose
    assert saved == (6,)
    assert writes == [(thread_id("test:w:c:paused"), "__interrupt__")]
