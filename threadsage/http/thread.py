"""The HTTP server on a thread and event loop of its own, so that acknowledgements never wait.

Turns run on the process's main event loop; with hundreds in flight, a callback there waits
behind hundreds of others (a burst of Slack events then waits too long for its acknowledgements:
docs/performance.md, "A burst of 200 events in `threadsage run` (issue 16)"). On its own loop, a
request waits only for the interpreter, which a busy thread hands over every few milliseconds.
What an endpoint needs of the main loop (the bots, the turn queue, the readiness checks: their
connections belong to that loop) it reaches through `MainLoopBridge`, which is a plain `await`
when both are the same loop (tests serving on theirs). The interpreter is shared all the same: the
server runs on uvloop with httptools, and hands work to the main loop once per burst rather than
once per event (the same section).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import uvicorn
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from threadsage.http.server import ReadinessCheck, Running, create_app
from threadsage.settings.sections import PlatformSettings
from threadsage.support.background import BackgroundTasks

log = logging.getLogger(__name__)

T = TypeVar("T")
READY_WITHIN = 2.0  # seconds the turns' loop and threads have to answer a readiness probe


class MainLoopBridge:
    """Runs work on the main event loop (the one a component was started on; by default the loop
    running now) from the HTTP thread's loop."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop | None = None, quiet: float = 0.002, at_most: float = 0.05
    ) -> None:
        self.loop = loop or asyncio.get_running_loop()
        self.quiet = quiet  # seconds without a new `start` after which the waiting works are handed over
        self.at_most = at_most  # seconds a work may wait for a quiet moment (a steady stream is handed over too)
        self._waiting: deque[tuple[BackgroundTasks, Coroutine[Any, Any, object], str]] = deque()
        self._handing: asyncio.TimerHandle | None = None  # on the calling loop: the next look at the clock
        self._first = self._last = 0.0  # when the waiting batch began, and when it last grew

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """`work` on the main loop, awaited from whichever loop calls."""
        if asyncio.get_running_loop() is self.loop:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    def start(self, tasks: BackgroundTasks, work: Coroutine[Any, Any, object], name: str) -> None:
        """`work` as a background task of the main loop, not awaited: started in call order. From
        another loop, works wait there until `quiet` passes without another (at most `at_most`)
        and are then handed over together: woken once per burst rather than once per work, the
        main loop (and the turns it starts) does not take the interpreter from the thread that is
        still acknowledging the rest of the burst (issue 16)."""
        try:
            caller = asyncio.get_running_loop()
        except RuntimeError:
            caller = None
        if caller is self.loop:
            tasks.spawn(work, name)
            return
        self._waiting.append((tasks, work, name))
        if caller is None:
            self.loop.call_soon_threadsafe(self.start_waiting)
            return
        self._last = caller.time()
        if self._handing is None:
            self._first = self._last
            self._handing = caller.call_later(self.quiet, self._hand_over_when_quiet)

    def _hand_over_when_quiet(self) -> None:
        caller = asyncio.get_running_loop()
        due = min(self._last + self.quiet, self._first + self.at_most)
        if caller.time() < due:
            self._handing = caller.call_at(due, self._hand_over_when_quiet)
            return
        self._handing = None
        self.loop.call_soon_threadsafe(self.start_waiting)

    def start_waiting(self) -> None:
        """Start the works `start` has queued, in order; on the main loop (also before waiting
        for a component's tasks, so that none acknowledged a moment ago is left out)."""
        while self._waiting:
            tasks, work, name = self._waiting.popleft()
            tasks.spawn(work, name)


def on_main_loop(main_loop: MainLoopBridge, route: Route) -> Route:
    """`route` with its endpoint run on `main_loop`; the body is read first, here (where the request's
    stream lives), and Starlette keeps it for the endpoint."""

    async def endpoint(request: Request) -> Response:
        await request.body()
        response: Response = await main_loop.run(route.endpoint(request))
        return response

    return Route(route.path, endpoint, methods=sorted(route.methods or ()))


async def threads_answer(within: float) -> bool:
    """Whether the default thread pool (the knowledge base's searches, the checkpoints, the
    scans of sources run there) takes a piece of work within `within` seconds: a bot whose
    threads are all held answers nobody, though its loop is free."""
    try:
        await asyncio.wait_for(asyncio.to_thread(int), within)
    except TimeoutError:
        return False
    return True


@asynccontextmanager
async def http_server(
    settings: PlatformSettings,
    routes: list[Route],
    ready: ReadinessCheck | None = None,
    running: Sequence[Running] = (),
) -> AsyncIterator[None]:
    """/healthz, /readyz, /metrics and the given routes on THREADSAGE_HTTP_PORT while inside,
    served from a thread of their own; `ready` is asked on the caller's loop, `running` runs on the
    thread's (`create_app`)."""
    main_loop = MainLoopBridge()

    async def readiness() -> bool:
        return await threads_answer(READY_WITHIN) and (True if ready is None else await ready())

    async def ready_at_home() -> bool:
        try:
            return await asyncio.wait_for(main_loop.run(readiness()), READY_WITHIN)
        except TimeoutError:  # the turns' loop is held: whatever it would say, it cannot answer anyone
            return False

    config = uvicorn.Config(
        create_app(routes, ready_at_home, running),
        host="0.0.0.0",
        port=settings.http_port,
        log_level="info",
        log_config=None,  # its lines go through the process's handler (JSON, scrubbed)
        access_log=False,
        # uvloop reads and writes every ready socket in one hold of the interpreter (asyncio's loop
        # lets go of it around each send and receive, and then waits for the turns' thread to hand
        # it back); httptools parses in C. Both cut a burst's acknowledgements (issue 16).
        loop="uvloop",
        http="httptools",
    )
    server = _Server(config)
    thread = threading.Thread(target=server.run, name="threadsage-http", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():  # it could not listen, and has logged why
            raise SystemExit(1)
        await asyncio.sleep(0.01)
    log.info("listening on port %d", settings.http_port)
    try:
        yield
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join)


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: a signal stops the whole process, in order, and this
    server last (uvicorn's own would stop it first, while turns are still being finished)."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
