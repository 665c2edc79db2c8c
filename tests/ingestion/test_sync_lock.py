"""Two bot processes configured with the same sources and REDIS_URL (two upkeeps here, each
with its own data directory, on a real Redis): only the one holding the Redis lock syncs; when it
stops, the other takes over and picks up what changed meanwhile; a lock left by a process that
died keeps the others waiting only until it expires."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from redis.asyncio import Redis

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.ingestion.service import knowledge_upkeep
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings

pytestmark = [pytest.mark.slow, pytest.mark.timed]  # two upkeeps competing for the Redis lock, taken over within 5 s

REDIS_URL = "redis://127.0.0.1:6379/0"


def synced(settings: Settings) -> int:
    """How many documents this instance's last sync of the handbook saw (0: it never synced)."""
    return StateStore(settings.data_dir / "sources").status("handbook").documents


async def until(condition: Callable[[], bool], seconds: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"{what} not within {seconds} s"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


def instance(data: Path, sources: Path, prefix: str) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=data,
        THREADSAGE_EMBEDDINGS="none",
        THREADSAGE_SOURCES=sources,
        REDIS_URL=REDIS_URL,
        THREADSAGE_REDIS_PREFIX=prefix,
        THREADSAGE_SOURCES_LOCK_SECONDS=2,
        _env_file=None,
    )


def handbook(tmp_path: Path) -> Path:
    """A sources file of one watched folder holding one page."""
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "one.md").write_text("# One\nThe first page.\n")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{name: handbook, type: folder, path: {folder}, every: 1s}}\n")
    return sources


async def test_one_instance_syncs_and_the_other_takes_over(kb: KnowledgeBase, tmp_path: Path) -> None:
    sources = handbook(tmp_path)
    folder = tmp_path / "handbook"
    prefix = f"threadsage-test-{uuid.uuid4().hex[:8]}:"
    instances = [instance(tmp_path / name, sources, prefix) for name in ("a", "b")]
    redis = Redis.from_url(REDIS_URL)
    running = {id(s): AsyncExitStack() for s in instances}
    try:
        for settings in instances:
            await running[id(settings)].enter_async_context(knowledge_upkeep(settings, kb))
        await until(lambda: any(synced(s) for s in instances), 10, "a first sync")
        [leader] = [s for s in instances if synced(s)]
        [other] = [s for s in instances if s is not leader]
        assert await redis.exists(f"{prefix}sources-sync")
        (folder / "two.md").write_text("# Two\nThe second page.\n")
        await until(lambda: synced(leader) == 2, 10, "the leader's sync of a new file")
        await asyncio.sleep(2.5)  # longer than the lock's time: the other still only waits
        assert synced(other) == 0, "only the lock holder syncs"

        await running[id(leader)].aclose()  # the leader stops (and releases the lock)
        (folder / "three.md").write_text("# Three\nThe third page.\n")
        took = await until(lambda: synced(other) == 3, 10, "the other instance's takeover")
        assert took < 5 and synced(leader) == 2
    finally:
        for stack in running.values():
            await stack.aclose()
        await redis.delete(f"{prefix}sources-sync")
        await redis.aclose()


async def test_a_lock_left_by_a_dead_process_is_waited_out(kb: KnowledgeBase, tmp_path: Path) -> None:
    prefix = f"threadsage-test-{uuid.uuid4().hex[:8]}:"
    settings = instance(tmp_path / "a", handbook(tmp_path), prefix)
    redis = Redis.from_url(REDIS_URL)
    try:
        await redis.set(f"{prefix}sources-sync", "a process that died", px=2000)  # as its last renewal left it
        async with knowledge_upkeep(settings, kb):
            took = await until(lambda: synced(settings) == 1, 10, "the sync after the dead holder's lock expired")
        assert 1.5 < took < 5, took
    finally:
        await redis.delete(f"{prefix}sources-sync")
        await redis.aclose()
