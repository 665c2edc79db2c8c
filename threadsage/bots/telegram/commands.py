"""The bot's commands as Telegram's clients offer them: registered with `setMyCommands` at start-up,
once per language the bot speaks (a client shows the list of its user's `language_code`, else the
default one, in English), and the chat menu button set to show them (`setChatMenuButton` with
`MenuButtonCommands`). Registering is a courtesy: a refusal is logged and the bot answers anyway."""

from __future__ import annotations

import logging

from telegram import Bot, BotCommand, MenuButtonCommands
from telegram.error import TelegramError

from threadsage.i18n import Language, say

log = logging.getLogger(__name__)

COMMANDS = ("ask", "new", "help", "start")  # each handled in `bot` (CommandHandler)
LANGUAGES: dict[Language, str | None] = {"en": None, "zh": "zh"}  # our language → language_code (None: default)


def command_list(language: Language) -> list[BotCommand]:
    return [BotCommand(name, say(f"tg_command_{name}", language)) for name in COMMANDS]


async def register_commands(bot: Bot) -> None:
    try:
        for language, code in LANGUAGES.items():
            await bot.set_my_commands(command_list(language), language_code=code)
        await bot.set_chat_menu_button(menu_button=MenuButtonCommands())
    except TelegramError as exc:
        log.warning("could not register the bot's commands with Telegram: %s", exc)
