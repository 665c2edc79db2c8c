"""The processes operators run, each with one HTTP server on `THREADSAGE_HTTP_PORT` serving
/healthz, /readyz and /metrics, on a thread of its own (`http_thread`: acknowledgements do not
wait behind turns):

- `serve`: everything in one process — one chat service, Slack (Socket Mode or the Events API)
  and Telegram (long polling or the webhook) (`threadsage run`, `slack`, `telegram`); with
  `REDIS_URL`, through the durable turn queue, front-end and worker in the one process;
- `serve_front_end`: only the webhooks, each delivery put in the turn queue (`threadsage serve`);
- `work`: the turns from the queue, answered and posted (`threadsage worker`).

All stop in order on SIGINT/SIGTERM: no new work is taken (/readyz says 503, deliveries are
refused for the platform to deliver again), the turns in flight are finished or handed back to
the queue, and the HTTP server stops last.

`serve` and `work` also keep the knowledge current (`sources/service.py`): the sources of
`THREADSAGE_SOURCES` synced by one process (a Redis lock), ingests handed over on Milvus Lite."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from threadsage.adapters.knowledge.base import KnowledgeBase
from threadsage.app.retention import prune_periodically
from threadsage.app.runtime import open_chat_service, open_coordinator
from threadsage.bots.tokens import Signer, load_secret
from threadsage.console import console_routes
from threadsage.delivery.jobs import Job, Performer
from threadsage.delivery.outages import ServiceUnavailable, first_leaf
from threadsage.delivery.queue import TurnQueue, consumer_name
from threadsage.http.thread import HomeLoop, http_server, on_home_loop
from threadsage.ingestion.service import knowledge_upkeep
from threadsage.observability.redaction import redact_url
from threadsage.settings.environment import Settings
from threadsage.support.backoff import Backoff, wait_or_stop

if TYPE_CHECKING:
    from telegram import Bot

log = logging.getLogger(__name__)


def configured_platforms(settings: Settings) -> list[str]:
    platforms = []
    if settings.slack_bot_token is not None:
        platforms.append("slack")
    if settings.telegram_bot_token is not None:
        platforms.append("telegram")
    return platforms


async def serve(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    """Everything in this process: the platforms' listeners and the turns behind them.

    With `REDIS_URL`, each delivery is put in the durable turn queue before it is acknowledged, and
    a worker loop of this same process answers it: a turn lost to a crash is answered after a
    restart. Without Redis a crash loses the turns in flight (docs/operations.md)."""
    stop = _stop_on_signals()
    signer = Signer(load_secret(settings))
    routes: list[Route] = []  # served from the HTTP thread: Slack's reaches this loop itself, the others
    home = HomeLoop()  # through `on_home_loop`
    bots = ByPlatform()
    async with AsyncExitStack() as stack:
        coordinator = await stack.enter_async_context(open_coordinator(settings))
        chat = await stack.enter_async_context(open_chat_service(settings, kb, coordinator))
        await stack.enter_async_context(knowledge_upkeep(settings, chat.context.kb))
        queue = (
            await stack.enter_async_context(_connected(TurnQueue(settings), settings)) if settings.redis_url else None
        )
        pruning = asyncio.create_task(prune_periodically(chat.checkpointer, settings, stop, chat.recording.store))
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            dispatch = queue.put if queue else None
            slack = await stack.enter_async_context(
                SlackBot(settings, chat, signer, coordinator, dispatch=dispatch).running()
            )
            bots.add("slack", slack)
            if settings.slack_app_token is not None:
                from slack_bolt.adapter.socket_mode.aiohttp import (
                    AsyncSocketModeHandler,
                )

                socket = AsyncSocketModeHandler(
                    slack.app, app_token=settings.slack_app_token.get_secret_value(), web_client=slack.client
                )
                await socket.connect_async()  # type: ignore[no-untyped-call]  # slack_bolt leaves it unannotated
                stack.push_async_callback(socket.close_async)
                log.info("Slack: Socket Mode connected")
            else:
                routes.append(slack.route())
                log.info("Slack: Events API at POST /slack/events")
        if "telegram" in platforms:
            from threadsage.bots.telegram import TelegramBot

            telegram = await stack.enter_async_context(
                TelegramBot(settings, chat, coordinator, signer, receive=queue is None)
            )
            bots.add("telegram", telegram)
            if queue is not None:
                routes += [
                    on_home_loop(home, r) for r in await _telegram_into(queue, telegram.app.bot, settings, stack)
                ]
            elif telegram.webhook is not None:
                routes.append(on_home_loop(home, telegram.webhook_route()))
        running = asyncio.Event()

        async def ready() -> bool:
            return not stop.is_set() and (queue is None or running.is_set())

        routes += await console_routes(settings, stack, chat.checkpointer, chat.context.kb)  # refused when stopping too
        async with http_server(settings, _refusing_when_stopped(stop, routes), ready):
            answering = asyncio.create_task(_run_queue(settings, bots, running, stop)) if queue else None
            await stop.wait()
            log.info("stopping: finishing the turns in flight")
            if answering is not None:
                await answering
            await pruning
            await stack.aclose()  # the listeners stop, then the bots finish their turns; HTTP goes last


@asynccontextmanager
async def _connected(queue: TurnQueue, settings: Settings) -> AsyncIterator[TurnQueue]:
    """The turn queue connected, to put deliveries in; Redis unreachable is said in one line."""
    try:
        await queue.__aenter__()
    except Exception as exc:  # noqa: BLE001 - said in one line, the process exits
        where = redact_url(settings.redis_url or "")
        raise ServiceUnavailable(f"cannot reach Redis at REDIS_URL={where}: {first_leaf(exc)}") from None
    try:
        yield queue
    finally:
        await queue.__aexit__(None, None, None)


async def _telegram_into(queue: TurnQueue, bot: Bot, settings: Settings, stack: AsyncExitStack) -> list[Route]:
    """Telegram's updates into the queue: by the webhook when one is configured (its route),
    otherwise by long polling that confirms an update only once the queue has it."""
    from threadsage.bots.telegram import TelegramWebhook
    from threadsage.bots.telegram.polling import poll_into

    if settings.telegram_webhook_url:
        webhook = TelegramWebhook(settings, queue.put)
        await webhook.register(bot)
        return [webhook.route()]
    polling = asyncio.create_task(poll_into(bot, queue.put))
    stack.callback(polling.cancel)
    return []


async def serve_front_end(settings: Settings, platforms: list[str]) -> None:
    """`threadsage serve`: the platforms' webhooks, each delivery recorded in the turn queue
    before it is acknowledged. No conversation state, no models: run as many as you like."""
    stop = _stop_on_signals()
    signer = Signer(load_secret(settings))
    queue = TurnQueue(settings)
    # Configuration the receiving ends cannot work with fails here, before anything opens.
    if "slack" in platforms and settings.slack_signing_secret is None:
        raise ValueError("threadsage serve takes Slack's Events API: set SLACK_SIGNING_SECRET")
    telegram = None
    if "telegram" in platforms:
        from threadsage.bots.telegram import TelegramWebhook, build_application

        telegram = TelegramWebhook(settings, queue.put)
    routes: list[Route] = []
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(_connected(queue, settings))
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            slack = await stack.enter_async_context(SlackBot(settings, None, signer, dispatch=queue.put).running())
            routes.append(slack.route())
            log.info("Slack: Events API at POST /slack/events, into the turn queue")
        if telegram is not None:
            bot = await stack.enter_async_context(build_application(settings, polling=False).bot)
            await telegram.register(bot)
            routes.append(on_home_loop(HomeLoop(), telegram.route()))
            log.info("Telegram: webhook at POST /telegram/webhook, into the turn queue")

        async def ready() -> bool:
            return await _answers(queue.redis.ping())

        measuring = asyncio.create_task(_measure_periodically(queue))
        async with http_server(settings, routes + await console_routes(settings, stack), ready):
            await stop.wait()
            log.info("stopping")
        measuring.cancel()


async def work(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    """`threadsage worker`: take turns from the queue, answer them, post the replies. On
    SIGINT/SIGTERM it takes no more, finishes those in flight (up to 30 s) or hands them back to
    the queue; a worker that dies instead has its turns taken over after THREADSAGE_TURN_TIMEOUT."""
    stop = _stop_on_signals()
    signer = Signer(load_secret(settings))
    bots = ByPlatform()
    async with AsyncExitStack() as stack:
        coordinator = await stack.enter_async_context(open_coordinator(settings, check=False))
        chat = await stack.enter_async_context(open_chat_service(settings, kb, coordinator))
        await stack.enter_async_context(knowledge_upkeep(settings, chat.context.kb))
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            bots.add("slack", await stack.enter_async_context(SlackBot(settings, chat, signer, coordinator).running()))
        if "telegram" in platforms:
            from threadsage.bots.telegram import TelegramBot

            telegram = TelegramBot(settings, chat, coordinator, signer, receive=False)
            bots.add("telegram", await stack.enter_async_context(telegram))

        running = asyncio.Event()

        async def ready() -> bool:
            return running.is_set() and not stop.is_set()

        pruning = asyncio.create_task(prune_periodically(chat.checkpointer, settings, stop, chat.recording.store))
        async with http_server(settings, [], ready):
            await _run_queue(settings, bots, running, stop)
        await pruning


class ByPlatform:
    """A worker's performer: each job to the bot of its platform."""

    def __init__(self) -> None:
        self._bots: dict[str, Performer] = {}

    def add(self, platform: str, bot: Performer) -> None:
        self._bots[platform] = bot

    async def perform(self, job: Job) -> None:
        if bot := self._bot(job):
            await bot.perform(job)

    async def give_up(self, job: Job) -> None:
        if bot := self._bot(job):
            await bot.give_up(job)

    def _bot(self, job: Job) -> Performer | None:
        bot = self._bots.get(job.platform)
        if bot is None:
            log.error("no %s bot configured in this worker: job dropped", job.platform)
        return bot


async def _run_queue(settings: Settings, performer: Performer, running: asyncio.Event, stop: asyncio.Event) -> None:
    """Run the queue's worker loop until `stop`; if Redis goes away, reconnect (with a growing
    pause) until it is back."""
    backoff = Backoff(0.5, cap=10.0)
    consumer = consumer_name()
    while not stop.is_set():
        queue = TurnQueue(settings, performer, stop, consumer)
        measuring = asyncio.create_task(_measure_periodically(queue))
        try:
            await queue.run(on_started=running.set)
            return
        except Exception as exc:
            if running.is_set():
                running.clear()
                backoff.reset()
            pause = backoff.next()
            log.warning(
                "turn queue unreachable (%s); retrying in %.1f s",
                first_leaf(exc),
                pause,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            await wait_or_stop(pause, stop)
        finally:
            measuring.cancel()


def _refusing_when_stopped(stop: asyncio.Event, routes: list[Route]) -> list[Route]:
    """The platforms' routes, refusing deliveries once the process is stopping: a 503 makes Slack
    and Telegram deliver them again later, to a process that will answer them."""

    def refusing(route: Route) -> Route:
        async def endpoint(request: Request) -> Response:
            if stop.is_set():
                return Response(status_code=503)
            response: Response = await route.endpoint(request)
            return response

        return Route(route.path, endpoint, methods=sorted(route.methods or ()))

    return [refusing(route) for route in routes]


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def _measure_periodically(queue: TurnQueue, every: float = 5.0) -> None:
    """Queue depth and age for /metrics, every few seconds until cancelled; a failed reading is
    skipped."""
    while True:
        try:
            await queue.measure()
        except Exception as exc:  # noqa: BLE001 - a missed reading must not stop the process
            log.debug("could not measure the turn queue: %s", exc)
        await asyncio.sleep(every)


async def _answers(ping: Awaitable[object]) -> bool:
    try:
        await asyncio.wait_for(ping, 2)
        return True
    except Exception:  # noqa: BLE001 - readiness is a yes/no
        return False
