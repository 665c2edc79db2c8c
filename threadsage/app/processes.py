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

What every process holds (signals, the signer, the stack its parts close on) is `opened` once;
`serve` and `work` add what answering needs (`Process.answering`): the chat service, the
knowledge kept current (`ingestion/service.py`: the sources of `THREADSAGE_SOURCES` synced by one
process, a Redis lock; ingests handed over on Milvus Lite) and retention pruning. Each bot starts
its own listening (Socket Mode, polling, a webhook's route) and hands its deliveries to the turn
queue when given its `put`."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.follow_ups import send_waiting_follow_ups
from threadsage.app.retention import prune_periodically
from threadsage.app.runtime import Runtime, open_runtime
from threadsage.bots import slack, telegram
from threadsage.bots.mcp import mcp_endpoint
from threadsage.bots.platform import Bot, Dispatch, Platform
from threadsage.bots.tokens import Signer, load_secret
from threadsage.chat.digest import Announcer
from threadsage.console import console_routes
from threadsage.delivery.jobs import Job, Performer
from threadsage.delivery.outages import first_leaf
from threadsage.delivery.queue import TurnQueue, consumer_name
from threadsage.http.thread import http_server
from threadsage.ingestion.service import knowledge_upkeep
from threadsage.settings.environment import Settings
from threadsage.support.backoff import Backoff, wait_or_stop

log = logging.getLogger(__name__)


PLATFORMS: tuple[Platform, ...] = (slack.PLATFORM, telegram.PLATFORM)


def configured_platforms(settings: Settings) -> list[str]:
    return [platform.name for platform in PLATFORMS if platform.configured(settings)]


def chosen(names: list[str]) -> list[Platform]:
    return [platform for platform in PLATFORMS if platform.name in names]


@dataclass(frozen=True)
class Process:
    """What every process holds: the event SIGINT/SIGTERM set, the signer of the buttons (the
    same secret on every process), and the stack its parts close on, last opened first closed
    (the listeners, then the bots finishing their turns, then the chat service)."""

    settings: Settings
    stop: asyncio.Event
    signer: Signer
    stack: AsyncExitStack

    async def answering(self, kb: KnowledgeBase | None, check_redis: bool = True) -> Runtime:
        """Open what a process that answers needs, on its stack: the coordinator and the chat
        service (`open_runtime`), the knowledge kept current, and retention pruning until the
        process stops."""
        runtime = await self.stack.enter_async_context(open_runtime(self.settings, kb, check_redis=check_redis))
        await self.stack.enter_async_context(
            knowledge_upkeep(
                self.settings,
                runtime.kb,
                runtime.chat.knowledge.changed,
                runtime.coordinator,
                read_ahead=runtime.chat.context.meaning,
            )
        )
        pruning = prune_periodically(runtime.checkpointer, self.settings, self.stop, runtime.questions)
        self.stack.push_async_callback(self._until_stopped, asyncio.create_task(pruning))
        following_up = send_waiting_follow_ups(runtime.chat, self.stop)
        self.stack.push_async_callback(self._until_stopped, asyncio.create_task(following_up))
        return runtime

    async def bots(
        self, runtime: Runtime, platforms: list[str], dispatch: Dispatch | None = None, receive: bool = True
    ) -> dict[str, Bot]:
        """The bot of each platform, running on the stack: answering through the runtime's chat
        service, receiving deliveries itself when `receive`, handing them to `dispatch` when given."""
        bots: dict[str, Bot] = {}
        for platform in chosen(platforms):
            bot = platform.bot(
                self.settings, runtime.chat, runtime.coordinator, self.signer, dispatch=dispatch, receive=receive
            )
            bots[platform.name] = await self.stack.enter_async_context(bot.running())
        return bots

    def post_digests(self, runtime: Runtime, announcers: dict[str, Announcer]) -> None:
        """The weekly digest's schedule (`THREADSAGE_DIGEST`) until the process stops, posted
        through the bots of this process."""
        if runtime.digest is None:
            return
        runtime.digest.announcers.update(announcers)
        self.stack.push_async_callback(self._until_stopped, asyncio.create_task(runtime.digest.run(self.stop)))

    async def _until_stopped(self, task: asyncio.Task[None]) -> None:
        """A task that ends when the process stops, awaited; cancelled when the process ends
        otherwise (it failed to start)."""
        if not self.stop.is_set():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@asynccontextmanager
async def opened(settings: Settings) -> AsyncIterator[Process]:
    stop = _stop_on_signals()
    async with AsyncExitStack() as stack:
        yield Process(settings, stop, Signer(load_secret(settings, settings.data_dir)), stack)


async def serve(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    """Everything in this process: the platforms' listeners and the turns behind them.

    With `REDIS_URL`, each delivery is put in the durable turn queue before it is acknowledged, and
    a worker loop of this same process answers it: a turn lost to a crash is answered after a
    restart. Without Redis a crash loses the turns in flight (docs/operations.md)."""
    async with opened(settings) as process:
        runtime = await process.answering(kb)
        stack, stop = process.stack, process.stop
        queue = await stack.enter_async_context(TurnQueue(settings, settings)) if settings.redis_url else None
        dispatch = queue.put if queue else None
        bots = await process.bots(runtime, platforms, dispatch=dispatch)
        routes = [route for bot in bots.values() for route in bot.routes]  # served from the HTTP thread
        process.post_digests(runtime, {name: bot.announcer() for name, bot in bots.items()})
        running = asyncio.Event()

        async def ready() -> bool:
            return not stop.is_set() and (queue is None or running.is_set())

        routes += await console_routes(settings, stack, runtime.checkpointer, runtime.kb)  # refused when stopping too
        mcp = mcp_endpoint(settings, runtime.chat, runtime.kb, stop)  # it refuses by itself
        async with http_server(settings, _refusing_when_stopped(stop, routes) + mcp.routes, ready, mcp.running):
            answering = (
                asyncio.create_task(_run_queue(settings, BotsByPlatform(bots), running, stop)) if queue else None
            )
            await stop.wait()
            log.info("stopping: finishing the turns in flight")
            if answering is not None:
                await answering
            await stack.aclose()  # the listeners stop, then the bots finish their turns; HTTP goes last


async def serve_front_end(settings: Settings, platforms: list[str]) -> None:
    """`threadsage serve`: the platforms' webhooks, each delivery recorded in the turn queue
    before it is acknowledged. No conversation state, no models: run as many as you like."""
    queue = TurnQueue(settings, settings)
    signer = Signer(load_secret(settings, settings.data_dir))
    # Configuration the receiving ends cannot work with fails here, before anything opens.
    receiving = [platform.front_end(settings, signer, queue.put) for platform in chosen(platforms)]
    routes: list[Route] = []
    async with opened(settings) as process:
        stack = process.stack
        await stack.enter_async_context(queue)
        for front_end in receiving:
            routes += await stack.enter_async_context(front_end)

        async def ready() -> bool:
            return await _answers(queue.redis.ping())

        measuring = asyncio.create_task(_measure_periodically(queue))
        async with http_server(settings, routes + await console_routes(settings, stack), ready):
            await process.stop.wait()
            log.info("stopping")
        measuring.cancel()


async def work(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    """`threadsage worker`: take turns from the queue, answer them, post the replies. On
    SIGINT/SIGTERM it takes no more, finishes those in flight (up to 30 s) or hands them back to
    the queue; a worker that dies instead has its turns taken over after THREADSAGE_TURN_TIMEOUT."""
    async with opened(settings) as process:
        runtime = await process.answering(kb, check_redis=False)
        bots = await process.bots(runtime, platforms, receive=False)
        process.post_digests(runtime, {name: bot.announcer() for name, bot in bots.items()})
        running = asyncio.Event()

        async def ready() -> bool:
            return running.is_set() and not process.stop.is_set()

        mcp = mcp_endpoint(settings, runtime.chat, runtime.kb, process.stop)
        async with http_server(settings, mcp.routes, ready, mcp.running):
            await _run_queue(settings, BotsByPlatform(bots), running, process.stop)


class BotsByPlatform:
    """A worker's performer: each job to the bot of its platform."""

    def __init__(self, bots: dict[str, Bot]) -> None:
        self._bots: dict[str, Performer] = dict(bots)

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
        queue = TurnQueue(settings, settings, performer, stop, consumer)
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
