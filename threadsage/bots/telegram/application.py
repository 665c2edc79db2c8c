"""The python-telegram-bot `Application` as threadsage configures it, and the configuration
errors it (and the webhook) refuse to start with."""

from __future__ import annotations

from typing import Any, TypeAlias

from telegram import LinkPreviewOptions, Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, Defaults, ExtBot, JobQueue
from telegram.request import HTTPXRequest

from threadsage.bots.telegram.limits import FloodLimits
from threadsage.settings.sections import PlatformSettings
from threadsage.support.tls import tls_context

ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY]

# The application the builder below makes: PTB's default context and data types, on a bot whose rate
# limiter takes no arguments per request.
TelegramApplication: TypeAlias = Application[
    ExtBot[None],
    ContextTypes.DEFAULT_TYPE,
    dict[Any, Any],
    dict[Any, Any],
    dict[Any, Any],
    JobQueue[ContextTypes.DEFAULT_TYPE],
]


class TelegramConfigError(ValueError):
    """The Telegram settings cannot work; the message says which variable to fix."""


def build_application(
    settings: PlatformSettings, polling: bool, limits: FloodLimits | None = None
) -> TelegramApplication:
    """Within Telegram's flood limits (`FloodLimits`), concurrent updates, no link previews;
    pointed at `TELEGRAM_API_URL` when set. Without polling it has no updater."""
    if settings.telegram_bot_token is None:
        raise TelegramConfigError("TELEGRAM_BOT_TOKEN is not set (get one from @BotFather)")
    tls = {"verify": tls_context()}  # the builder's own requests would load the CA store once each
    builder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .request(HTTPXRequest(connection_pool_size=256, httpx_kwargs=tls))  # the builder's pool sizes
        .get_updates_request(HTTPXRequest(connection_pool_size=1, httpx_kwargs=tls))
        .rate_limiter(limits or FloodLimits())
        .concurrent_updates(True)
        .defaults(Defaults(link_preview_options=LinkPreviewOptions(is_disabled=True)))
    )
    if settings.telegram_api_url:
        api = settings.telegram_api_url.rstrip("/")
        builder = builder.base_url(f"{api}/bot").base_file_url(f"{api}/file/bot")
    if not polling:
        builder = builder.updater(None)
    return builder.build()
