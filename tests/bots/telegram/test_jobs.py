"""Telegram's one kind of job, an update as Telegram sent it: a worker performs one queued by the
previous version (the same JSON), and logs and finishes a job that is not an update it can read
— never raising it back to the queue."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.telegram_harness import bot_settings
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.runtime import open_chat_service, open_coordinator
from threadsage.bots.telegram import TelegramBot
from threadsage.delivery.jobs import Job

ANN = {"id": 123456789, "is_bot": False, "first_name": "Ann", "username": "annlee", "language_code": "en"}
PRIVATE = {"id": 123456789, "type": "private", "first_name": "Ann"}


@asynccontextmanager
async def worker(tmp_path: Path, fake: FakeBotAPI, kb: KnowledgeBase) -> AsyncIterator[TelegramBot]:
    """The bot as `threadsage worker` runs it: it receives nothing itself."""
    settings = bot_settings(tmp_path, fake)
    async with (
        open_coordinator(settings) as coordinator,
        open_chat_service(settings, kb, coordinator) as chat,
        TelegramBot(settings, chat, coordinator, receive=False).running() as bot,
    ):
        yield bot


async def test_a_worker_performs_an_update_queued_as_before_and_drops_what_it_cannot_read(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb: KnowledgeBase, caplog: pytest.LogCaptureFixture
) -> None:
    message = fake.message(PRIVATE, ANN, "What is the rate limit per API key?")
    async with worker(tmp_path, fake, handbook_kb) as bot:
        with caplog.at_level(logging.ERROR, "threadsage.delivery.jobs"):
            await bot.perform(Job("telegram", "callback", {"update_id": 7}, "telegram:1"))
            await bot.perform(Job("telegram", "update", {"message": message}, "telegram:1"))  # no update_id
            await bot.give_up(Job("telegram", "update", {"update_id": "7"}, "telegram:1"))
        assert fake.sent(PRIVATE["id"]) == []
        queued = {"update_id": 1000, "message": message}  # as the webhook or polling received it
        await bot.perform(Job("telegram", "update", queued, f"telegram:{PRIVATE['id']}"))
    [answer] = fake.sent(PRIVATE["id"])
    assert "api-style-guide" in str(answer)
    assert [record.getMessage().partition(" (")[0] for record in caplog.records] == [
        "telegram job of unknown kind 'callback' dropped",
        "telegram update job dropped: its payload cannot be read",
        "telegram update job dropped: its payload cannot be read",
    ]
