"""The bot's commands registered with Telegram at start-up, per language, and the menu button that
shows them — through the real python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from pathlib import Path

from telegram import MenuButtonCommands

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.telegram_harness import bot_settings, running
from threadsage.bots.telegram import TelegramBot
from threadsage.delivery.jobs import Job
from threadsage.i18n import say


async def test_commands_are_registered_in_english_and_chinese_and_the_menu_shows_them(
    bot: TelegramBot, fake: FakeBotAPI
) -> None:
    english, chinese = fake.commands[""], fake.commands["zh"]
    assert [c["command"] for c in english] == [c["command"] for c in chinese] == ["ask", "new", "help", "start"]
    assert english[0]["description"] == say("tg_command_ask") and chinese[0]["description"] == say(
        "tg_command_ask", "zh"
    )
    assert fake.menu_button == {"type": "commands"}
    handled = {command for handler in bot.app.handlers[0] for command in getattr(handler, "commands", ())}
    assert {c["command"] for c in english} <= handled  # each offered command is one the bot handles


async def test_polling_into_the_turn_queue_registers_them_too(tmp_path: Path, fake: FakeBotAPI, handbook_kb) -> None:
    """`threadsage run` with Redis: the process polls into the queue, and still speaks for the bot."""

    async def put(_job: Job) -> None: ...

    async with running(bot_settings(tmp_path, fake), handbook_kb, dispatch=put) as bot:
        chinese = await bot.app.bot.get_my_commands(language_code="zh")
        assert [c.command for c in chinese] == ["ask", "new", "help", "start"]
        assert chinese[0].description == say("tg_command_ask", "zh")
        assert isinstance(await bot.app.bot.get_chat_menu_button(), MenuButtonCommands)
