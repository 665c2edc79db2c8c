from __future__ import annotations

from pathlib import Path

import pytest

from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.votes import FeedbackStore
from threadsage.settings.environment import Settings


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def test_a_second_vote_replaces_the_first(tmp_path: Path, database_url: str) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=database_url or None, _env_file=None)
    async with open_checkpointer(settings) as checkpointer:
        store = FeedbackStore(checkpointer)
        await store.setup()
        await store.setup()  # idempotent
        await store.record("s1", "a1", "U1", 1)
        await store.record("s1", "a1", "U2", -1)
        await store.record("s1", "a1", "U1", -1)
        await store.record("s1", "a2", "U1", 1)
        assert await store.votes("s1", "a1") == {"U1": -1, "U2": -1}
        assert await store.votes("s1", "a2") == {"U1": 1}
