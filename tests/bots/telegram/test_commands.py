"""The bot's commands registered with Telegram at start-up, per language, and the menu button that
shows them — through the real python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from tests.fakes.telegram_api import FakeBotAPI
from threadsage.bots.telegram import TelegramBot
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
