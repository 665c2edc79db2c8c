"""Postgres checkpoints opened by several processes at once on a new database."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from threadsage.config import Settings
from threadsage.memory.checkpoints import open_checkpointer, postgres_checkpointer
from threadsage.memory.feedback import FeedbackStore


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
