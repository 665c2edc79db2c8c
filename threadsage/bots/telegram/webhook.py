"""The receiving end of Telegram's webhook: checks the secret, parses the update, hands it on as
a `Job` and answers at once. `threadsage serve` runs only this (the job goes to the turn queue,
in order per chat; `registered`); a bot in one process hands it to its own application.

The route may be served from the HTTP thread's loop: the job is handed on, on the loop that made
the route (where the bot and the turn queue live)."""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from telegram import Bot, Update

from threadsage.bots.telegram.application import (
    ALLOWED_UPDATES,
    TelegramConfigError,
    build_application,
    chat_order,
)
from threadsage.bots.tokens import Signer
from threadsage.delivery.jobs import Job
from threadsage.http.thread import MainLoopBridge, on_main_loop
from threadsage.settings.sections import PlatformSettings

log = logging.getLogger(__name__)

UPDATE = "update"  # the one kind of Telegram job: the payload is the update's JSON, as Telegram sent it
WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


class TelegramWebhook:
    def __init__(self, settings: PlatformSettings, dispatch: Callable[[Job], Awaitable[object]]) -> None:
        secret = webhook_secret(settings)
        if secret is None or settings.telegram_webhook_url is None:
            raise TelegramConfigError("the webhook needs TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET")
        self.url = settings.telegram_webhook_url
        self.dispatch = dispatch
        self._secret = secret
        self._settings = settings

    async def register(self, bot: Bot) -> None:
        """Tell Telegram where to post updates (setWebhook), with the secret it must send."""
        await bot.set_webhook(self.url, secret_token=self._secret, allowed_updates=ALLOWED_UPDATES)

    @asynccontextmanager
    async def registered(self) -> AsyncIterator[None]:
        """Registered through a bot client of its own, for a process with no `TelegramBot`."""
        async with build_application(self._settings, polling=False).bot as bot:
            await self.register(bot)
            yield

    def route(self) -> Route:
        return on_main_loop(MainLoopBridge(), Route(WEBHOOK_PATH, self._receive, methods=["POST"]))

    async def _receive(self, request: Request) -> Response:
        """403 without the secret; 400 for anything but an Update posted as JSON (never a 500:
        Telegram would re-deliver it, and the updates after it wait)."""
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self._secret.encode()):
            return Response(status_code=403)
        if request.headers.get("content-type", "").partition(";")[0].strip().lower() != "application/json":
            return Response(status_code=400)
        try:
            data = await request.json()
            update = (
                Update.de_json(data, None)
                if isinstance(data, dict) and isinstance(data.get("update_id"), int)
                else None
            )
        except Exception:  # noqa: BLE001 - PTB raises whatever a body not shaped like an Update makes it raise
            update = None
        if update is None:
            return Response(status_code=400)
        await self.dispatch(queued(update, data))
        return Response(status_code=200)


class UpdateShape(BaseModel):
    """What a job's payload must have to be read as an update (PTB reads the rest, leniently)."""

    model_config = ConfigDict(strict=True)
    update_id: int


def queued(update: Update, data: dict[str, Any]) -> Job:
    """An update (`data` is its JSON) as a job of the turn queue: one chat's updates in order."""
    return Job("telegram", UPDATE, data, order_key=chat_order(update))


def webhook_secret(settings: PlatformSettings) -> str | None:
    """The secret Telegram must send with each update; None without a webhook URL."""
    if not settings.telegram_webhook_url:
        return None
    if settings.telegram_webhook_secret is None:
        raise TelegramConfigError("TELEGRAM_WEBHOOK_URL is set but TELEGRAM_WEBHOOK_SECRET is not: set a random secret")
    secret = settings.telegram_webhook_secret.get_secret_value()
    if not _WEBHOOK_SECRET.fullmatch(secret):
        raise TelegramConfigError("TELEGRAM_WEBHOOK_SECRET must be 1–256 characters of A–Z, a–z, 0–9, _ and -")
    return secret


def front_end(
    settings: PlatformSettings, _signer: Signer, put: Callable[[Job], Awaitable[object]]
) -> AbstractAsyncContextManager[list[Route]]:
    """`threadsage serve`'s Telegram: the webhook, each update put in the turn queue (`put`); its
    settings are checked here (`TelegramWebhook`)."""
    return _front_end(TelegramWebhook(settings, put))


@asynccontextmanager
async def _front_end(webhook: TelegramWebhook) -> AsyncIterator[list[Route]]:
    async with webhook.registered():
        log.info("Telegram: webhook at POST /telegram/webhook, into the turn queue")
        yield [webhook.route()]
