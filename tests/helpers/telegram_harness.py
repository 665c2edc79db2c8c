"""The Telegram bot for tests: the real python-telegram-bot against the fake Bot API
(tests/fakes/telegram_api.py), on a real chat service. The `fake` and `bot` fixtures in
tests/helpers/fixtures.py are built from it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fakes.telegram_api import BOT, FakeBotAPI
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.runtime import open_chat_service, open_coordinator
from threadsage.bots.telegram import TelegramBot
from threadsage.chat import ChatService
from threadsage.delivery.jobs import Job
from threadsage.settings.environment import Settings

TOKEN = "7000001:TEST-token"
WEBHOOK_SECRET = "s3cret_Token-1"

ANN = {"id": 123456789, "is_bot": False, "first_name": "Ann", "username": "annlee", "language_code": "en"}
BOB = {"id": 222333444, "is_bot": False, "first_name": "Bob", "username": "bob"}
OTHER_BOT = {"id": 7000002, "is_bot": True, "first_name": "Other", "username": "other_bot"}
GROUP = {"id": -1001234567890, "title": "Support", "type": "supergroup"}
FORUM = {"id": -1009876543210, "title": "Help desk", "type": "supergroup", "is_forum": True}
TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"


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
async def running(
    settings: Settings,
    kb: KnowledgeBase,
    wrap: Callable[[ChatService], ChatService] | None = None,
    dispatch: Callable[[Job], Awaitable[object]] | None = None,
) -> AsyncIterator[TelegramBot]:
    """The bot on a real chat service; `wrap` makes another service of it (`drafting.Drafting.of`),
    `dispatch` receives its updates as jobs (the turn queue's `put`)."""
    async with AsyncExitStack() as stack:
        coordinator = await stack.enter_async_context(open_coordinator(settings))
        chat = await stack.enter_async_context(open_chat_service(settings, kb, coordinator))
        yield await stack.enter_async_context(
            TelegramBot(settings, wrap(chat) if wrap else chat, coordinator, dispatch=dispatch).running()
        )


def private(user: dict) -> dict:
    return {"id": user["id"], "first_name": user["first_name"], "username": user["username"], "type": "private"}


async def new_messages(fake: FakeBotAPI, chat: dict, since: int, count: int = 1, timeout: float = 10.0) -> list[dict]:
    """The bot's messages in `chat` after the first `since`, once there are at least `count`."""
    return await fake.wait_for(lambda: (new := fake.sent(chat["id"])[since:]) and len(new) >= count and new, timeout)


async def exchange(fake: FakeBotAPI, chat: dict, user: dict, text: str, **options: Any) -> tuple[dict, dict]:
    """Say something; the question and the bot's (single) reply."""
    since = len(fake.sent(chat["id"]))
    question = fake.say(chat, user, text, **options)
    [reply] = await new_messages(fake, chat, since)
    return question, reply


def mention(text: str) -> str:
    return f"@{BOT['username']} {text}"
