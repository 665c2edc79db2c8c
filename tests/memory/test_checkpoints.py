"""Postgres checkpoints opened by several processes at once on a new database."""

from __future__ import annotations

import asyncio

from threadsage.memory.checkpoints import postgres_checkpointer
from threadsage.memory.feedback import FeedbackStore


async def test_workers_starting_together_on_a_new_database_set_it_up_once(pg_url: str) -> None:
    async def start() -> None:
        async with postgres_checkpointer(pg_url) as saver:
            await FeedbackStore(saver).setup()

    await asyncio.gather(*(start() for _ in range(6)))  # raced into duplicate keys before the lock
    async with postgres_checkpointer(pg_url) as saver:
        assert [t async for t in saver.alist(None)] == []
