"""Telegram: the bot and its handlers (`bot`), who it answers (`access`), the PTB application
(`application`), the webhook (`webhook`), long polling into the turn queue (`polling`), sessions of
group reply chains (`chains`), what is sent and its keyboards (`sending`), and the fixed texts
(`texts`)."""

from threadsage.bots.telegram.application import TelegramConfigError, build_application
from threadsage.bots.telegram.bot import TelegramBot
from threadsage.bots.telegram.texts import (
    HELP,
    HINT_GROUP,
    HINT_PRIVATE,
    INVALID_BUTTON,
    NEW_STARTED,
    NOT_ALLOWED,
    NOT_ALLOWED_CLICK,
    START,
    THANKS,
)
from threadsage.bots.telegram.webhook import TelegramWebhook

__all__ = [
    "HELP",
    "HINT_GROUP",
    "HINT_PRIVATE",
    "INVALID_BUTTON",
    "NEW_STARTED",
    "NOT_ALLOWED",
    "NOT_ALLOWED_CLICK",
    "START",
    "THANKS",
    "TelegramBot",
    "TelegramConfigError",
    "TelegramWebhook",
    "build_application",
]
