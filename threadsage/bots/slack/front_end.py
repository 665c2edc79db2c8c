"""`threadsage serve`'s Slack: the Events API in front of the turn queue, no chat service behind."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.routing import Route

from threadsage.bots.slack.app import SlackBot
from threadsage.bots.tokens import Signer
from threadsage.delivery.jobs import Job
from threadsage.settings.environment import Settings

log = logging.getLogger(__name__)


def front_end(
    settings: Settings, signer: Signer, put: Callable[[Job], Awaitable[object]]
) -> AbstractAsyncContextManager[list[Route]]:
    """`threadsage serve`'s Slack: the Events API, each delivery put in the turn queue (`put`), by a
    `SlackBot` (hence the whole `Settings`)."""
    if settings.slack_signing_secret is None:
        raise ValueError("threadsage serve takes Slack's Events API: set SLACK_SIGNING_SECRET")
    return _front_end(settings, signer, put)


@asynccontextmanager
async def _front_end(
    settings: Settings, signer: Signer, put: Callable[[Job], Awaitable[object]]
) -> AsyncIterator[list[Route]]:
    async with SlackBot(settings, None, signer=signer, dispatch=put, receive=False).running() as bot:
        log.info("Slack: Events API at POST /slack/events, into the turn queue")
        yield [bot.route()]
