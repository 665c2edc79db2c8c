"""The console served by the Slack bot's own ASGI app (the Slack fake harness), with a token; the
console alone on its database is `tests.helpers.console.console_served`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.console import TOKEN
from tests.helpers.slack_harness import Harness, on_fake_slack


@pytest.fixture
async def served(tmp_path: Path, handbook_kb) -> AsyncIterator[Harness]:
    async with on_fake_slack(tmp_path, handbook_kb, THREADSAGE_CONSOLE_TOKEN=TOKEN) as harness:
        yield harness


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")
