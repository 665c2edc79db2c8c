"""The processes operators run, each with one HTTP server on `THREADSAGE_HTTP_PORT` serving
/healthz, /readyz and /metrics:

- `serve`: everything in one process — one chat service, Slack (Socket Mode or the Events API)
  and Telegram (long polling or the webhook) (`threadsage run`, `slack`, `telegram`);
- `serve_front_end`: only the webhooks, each delivery put in the turn queue (`threadsage serve`);
- `work`: the turns from the queue, answered and posted (`threadsage worker`).

All stop cleanly on SIGINT/SIGTERM, finishing the turns in flight."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager

import uvicorn
from starlette.routing import Route

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.bots.tokens import Signer, load_secret
from threadsage.config import Settings
from threadsage.delivery.jobs import Job, Performer
from threadsage.delivery.outages import ServiceUnavailable, first_leaf
from threadsage.delivery.queue import TurnQueue
from threadsage.memory.retention import prune_periodically
from threadsage.redaction import redact_url
from threadsage.runtime import open_chat_service, open_coordinator
from threadsage.server import ReadinessCheck, create_app

log = logging.getLogger(__name__)


def configured_platforms(settings: Settings) -> list[str]:
    platforms = []
    if settings.slack_bot_token is not None:
        platforms.append("slack")
    if settings.telegram_bot_token is not None:
        platforms.append("telegram")
    return platforms


async def serve(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    """Everything in this process: the platforms' listeners and the turns behind them."""
    stop = _stop_on_signals()
    signer = Signer(load_secret(settings))
    routes: list[Route] = []
    async with AsyncExitStack() as stack:
        coordinator = await stack.enter_async_context(open_coordinator(settings))
        chat = await stack.enter_async_context(open_chat_service(settings, kb, coordinator))
        pruning = asyncio.create_task(prune_periodically(chat.checkpointer, settings, stop))
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            slack = await stack.enter_async_context(SlackBot(settings, chat, signer, coordinator).running())
            if settings.slack_app_token is not None:
                from slack_bolt.adapter.socket_mode.aiohttp import (
                    AsyncSocketModeHandler,
                )

                socket = AsyncSocketModeHandler(
                    slack.app, app_token=settings.slack_app_token.get_secret_value(), web_client=slack.client
                )
                await socket.connect_async()
                stack.push_async_callback(socket.close_async)
                log.info("Slack: Socket Mode connected")
            else:
                routes.append(slack.route())
                log.info("Slack: Events API at POST /slack/events")
        if "telegram" in platforms:
            from threadsage.bots.telegram import TelegramBot

            telegram = await stack.enter_async_context(TelegramBot(settings, chat, coordinator, signer))
            if telegram.webhook is not None:
                routes.append(telegram.webhook_route())
        async with http_server(settings, routes):
            await stop.wait()
            log.info("stopping: finishing the turns in flight")
        await pruning
        # leaving the stack stops the bots (each finishing its turns in flight), then the service


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
        try:
            await stack.enter_async_context(queue)
        except Exception as exc:  # noqa: BLE001 - said in one line, the process exits
            where = redact_url(settings.redis_url or "")
            raise ServiceUnavailable(f"cannot reach Redis at REDIS_URL={where}: {first_leaf(exc)}") from None
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            slack = await stack.enter_async_context(SlackBot(settings, None, signer, dispatch=queue.put).running())
            routes.append(slack.route())
            log.info("Slack: Events API at POST /slack/events, into the turn queue")
        if telegram is not None:
            bot = await stack.enter_async_context(build_application(settings, polling=False).bot)
            await telegram.register(bot)
            routes.append(telegram.route())
            log.info("Telegram: webhook at POST /telegram/webhook, into the turn queue")

        async def ready() -> bool:
            return await _answers(queue.worker.redis.ping())

        measuring = asyncio.create_task(_measure_periodically(queue))
        async with http_server(settings, routes, ready):
            await stop.wait()
            log.info("stopping")
        measuring.cancel()


async def work(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    """`threadsage worker`: take turns from the queue, answer them, post the replies. Stops on
    SIGINT/SIGTERM after the turns in flight (up to 30 s); a worker that dies instead has its
    turns taken over by another after THREADSAGE_TURN_TIMEOUT."""
    signer = Signer(load_secret(settings))
    bots = ByPlatform()
    async with AsyncExitStack() as stack:
        coordinator = await stack.enter_async_context(open_coordinator(settings, check=False))
        chat = await stack.enter_async_context(open_chat_service(settings, kb, coordinator))
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            bots.add("slack", await stack.enter_async_context(SlackBot(settings, chat, signer, coordinator).running()))
        if "telegram" in platforms:
            from threadsage.bots.telegram import TelegramBot

            telegram = TelegramBot(settings, chat, coordinator, signer, receive=False)
            bots.add("telegram", await stack.enter_async_context(telegram))

        running = asyncio.Event()
        stopped = asyncio.Event()

        async def ready() -> bool:
            return running.is_set()

        pruning = asyncio.create_task(prune_periodically(chat.checkpointer, settings, stopped))
        async with http_server(settings, [], ready):
            await _run_queue(settings, bots, running)
        stopped.set()
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


async def _run_queue(settings: Settings, performer: Performer, running: asyncio.Event) -> None:
    """Run the queue's worker loop; if Redis goes away, reconnect (with a growing pause) until it
    is back. Returns when a signal stopped the loop."""
    pause = 0.5
    while True:
        queue = TurnQueue(settings, performer)
        measuring = asyncio.create_task(_measure_periodically(queue))
        try:
            await queue.run(on_started=running.set)
            return
        except Exception as exc:  # noqa: BLE001 - turns' own failures never get here: Redis went away
            if running.is_set():
                running.clear()
                pause = 0.5
            log.warning("turn queue unreachable (%s); retrying in %.1f s", first_leaf(exc), pause, exc_info=log.isEnabledFor(logging.DEBUG))
            await asyncio.sleep(pause)
            pause = min(pause * 2, 10.0)
        finally:
            measuring.cancel()


@asynccontextmanager
async def http_server(settings: Settings, routes: list[Route], ready: ReadinessCheck | None = None) -> AsyncIterator[None]:
    """/healthz, /readyz, /metrics and the given routes on THREADSAGE_HTTP_PORT while inside."""
    config = uvicorn.Config(
        create_app(routes, ready),
        host="0.0.0.0",
        port=settings.http_port,
        log_level="info",
        log_config=None,  # its lines go through the process's handler (JSON, scrubbed)
        access_log=False,
    )
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # signals stop the whole process, not just this
    serving = asyncio.create_task(server.serve())
    log.info("listening on port %d", settings.http_port)
    try:
        yield
    finally:
        server.should_exit = True
        await serving


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
