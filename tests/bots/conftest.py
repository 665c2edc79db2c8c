"""Fixtures of the bot tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.bots.slack_harness import Harness, running
from tests.fakes.slack_api import FakeSlack


@pytest.fixture
async def slack(tmp_path: Path, handbook_kb) -> AsyncIterator[Harness]:
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, fake=fake) as harness:
        yield harness
    fake.stop()
