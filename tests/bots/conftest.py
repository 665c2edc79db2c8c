"""Fixtures of the bot tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.bots import telegram_harness
from tests.bots.slack_harness import Harness, running
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeBotAPI
from threadsage.bots.telegram import TelegramBot


@pytest.fixture
async def slack(tmp_path: Path, handbook_kb) -> AsyncIterator[Harness]:
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, fake=fake) as harness:
        yield harness
    fake.stop()


@pytest.fixture
async def fake() -> AsyncIterator[FakeBotAPI]:
    """The fake Telegram Bot API."""
    api = await FakeBotAPI(telegram_harness.TOKEN).start()
    yield api
    await api.stop()


@pytest.fixture
async def bot(tmp_path: Path, fake: FakeBotAPI, handbook_kb) -> AsyncIterator[TelegramBot]:
    """The Telegram bot on the offline back-end and the demo handbook."""
    async with telegram_harness.running(telegram_harness.bot_settings(tmp_path, fake), handbook_kb) as telegram:
        yield telegram
