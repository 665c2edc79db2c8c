"""The python-telegram-bot `Application` as threadsage configures it, and the configuration
errors it (and the webhook) refuse to start with.

Its updates are processed concurrently, but those of one chat one after another in the order they
came (`ChatsInOrder`), as the turn queue runs them (`webhook.queued`): otherwise they reach their
conversation's lock in whatever order their first awaits end, and a question sent right after a
document sent alone can be answered before the document is read."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeAlias

from telegram import LinkPreviewOptions, Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    BaseUpdateProcessor,
    ContextTypes,
    Defaults,
    ExtBot,
    JobQueue,
)
from telegram.request import HTTPXRequest

from threadsage.bots.telegram.limits import FloodLimits
from threadsage.settings.sections import PlatformSettings
from threadsage.support.background import BackgroundTasks
from threadsage.support.tls import tls_context

ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY]
CONCURRENT_UPDATES = 256  # as many as PTB's `concurrent_updates(True)`

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


def chat_order(update: object) -> str:
    """The order key of an update: its chat's (`telegram:-` for one without a chat)."""
    chat = update.effective_chat if isinstance(update, Update) else None
    return f"telegram:{chat.id if chat else '-'}"


class ChatsInOrder(BaseUpdateProcessor):
    """PTB's concurrent updates, those of one chat in the order PTB took them from its queue."""

    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self.tasks = BackgroundTasks()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        await self.tasks.spawn_in_order(chat_order(update), coroutine, name="telegram-update")

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """The updates still running finish (PTB's `stop` waited for them, unless one was cancelled)."""
        await self.tasks.drain()


class TelegramConfigError(ValueError):
    """The Telegram settings cannot work; the message says which variable to fix."""


def build_application(
    settings: PlatformSettings, polling: bool, limits: FloodLimits | None = None
) -> TelegramApplication:
    """Within Telegram's flood limits (`FloodLimits`), concurrent updates (one chat's in order), no
    link previews; pointed at `TELEGRAM_API_URL` when set. Without polling it has no updater."""
    if settings.telegram_bot_token is None:
        raise TelegramConfigError("TELEGRAM_BOT_TOKEN is not set (get one from @BotFather)")
    tls = {"verify": tls_context()}  # the builder's own requests would load the CA store once each
    builder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .request(HTTPXRequest(connection_pool_size=256, httpx_kwargs=tls))  # the builder's pool sizes
        .get_updates_request(HTTPXRequest(connection_pool_size=1, httpx_kwargs=tls))
        .rate_limiter(limits or FloodLimits())
        .concurrent_updates(ChatsInOrder(CONCURRENT_UPDATES))
        .defaults(Defaults(link_preview_options=LinkPreviewOptions(is_disabled=True)))
    )
    if settings.telegram_api_url:
        api = settings.telegram_api_url.rstrip("/")
        builder = builder.base_url(f"{api}/bot").base_file_url(f"{api}/file/bot")
    if not polling:
        builder = builder.updater(None)
    return builder.build()
