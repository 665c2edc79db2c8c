"""The Telegram bot for tests: the real python-telegram-bot against the fake Bot API
(tests/fakes/telegram_api.py), on a real chat service. The `fake` and `bot` fixtures in
tests/bots/conftest.py are built from it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fakes.telegram_api import FakeBotAPI
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.runtime import open_chat_service, open_coordinator
from threadsage.bots.telegram import TelegramBot
from threadsage.settings.environment import Settings

TOKEN = "7000001:TEST-token"


def bot_settings(tmp_path: Path, fake: FakeBotAPI, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "THREADSAGE_DATA_DIR": tmp_path / "data",
        "THREADSAGE_EMBEDDINGS": "none",
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": fake.url,
        "TELEGRAM_WEBHOOK_URL": None,
        "THREADSAGE_TELEGRAM_ALLOWED": "*",
        "DATABASE_URL": None,
        "REDIS_URL": None,
        "OPENAI_API_KEY": None,
        **extra,
    }
    return Settings(_env_file=None, **values)


@asynccontextmanager
async def running(settings: Settings, kb: KnowledgeBase) -> AsyncIterator[TelegramBot]:
    async with (
        open_coordinator(settings) as coordinator,
        open_chat_service(settings, kb, coordinator) as chat,
        TelegramBot(settings, chat, coordinator) as bot,
    ):
        yield bot
