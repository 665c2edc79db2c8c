"""Long polling into the turn queue, for `threadsage run` with Redis.

Telegram keeps an update until a later getUpdates confirms it (its offset). Here the offset moves
past an update only once the turn queue holds it, so a crash loses none: the next process is given
the unconfirmed updates again, and the chat service drops a message it has already answered.
(PTB's own polling confirms what it has fetched, whether or not it was handled.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from telegram import Bot

from threadsage.bots.telegram.application import ALLOWED_UPDATES
from threadsage.bots.telegram.webhook import queued
from threadsage.delivery.jobs import Job
from threadsage.support.backoff import Backoff

log = logging.getLogger(__name__)

POLL_SECONDS = 20  # how long one getUpdates waits for updates


async def poll_into(bot: Bot, dispatch: Callable[[Job], Awaitable[object]]) -> None:
    """Fetch updates and `dispatch` each, until cancelled. A failure (Telegram or the queue
    away) is retried with a growing pause; nothing is confirmed meanwhile."""
    await bot.delete_webhook()
    log.info("telegram bot @%s polling into the turn queue", bot.username)
    offset: int | None = None
    backoff = Backoff(0.5, cap=30.0)
    while True:
        try:
            for update in await bot.get_updates(offset=offset, timeout=POLL_SECONDS, allowed_updates=ALLOWED_UPDATES):
                await dispatch(queued(update, update.to_dict()))
                offset = update.update_id + 1
            backoff.reset()
        except Exception as exc:  # noqa: BLE001 - polling goes on until the process stops
            pause = backoff.next()
            log.warning("telegram polling failed (%s); retrying in %.1f s", exc, pause)
            await asyncio.sleep(pause)
