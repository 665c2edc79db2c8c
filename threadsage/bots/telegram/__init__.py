"""Telegram: the bot and its handlers (`bot`), who it answers (`access`), the PTB application
(`application`), the webhook (`webhook`), long polling into the turn queue (`polling`), sessions of
group reply chains (`chains`), what is sent and its keyboards (`sending`), and which language it
speaks to whom (`texts`; the words are in `threadsage.i18n`)."""

from threadsage.bots.platform import Platform
from threadsage.bots.telegram.application import TelegramConfigError, build_application
from threadsage.bots.telegram.bot import TelegramBot
from threadsage.bots.telegram.webhook import TelegramWebhook, front_end

__all__ = [
    "PLATFORM",
    "TelegramBot",
    "TelegramConfigError",
    "TelegramWebhook",
    "build_application",
]


PLATFORM = Platform("telegram", lambda settings: settings.telegram_bot_token is not None, TelegramBot, front_end)
