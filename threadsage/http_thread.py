"""The HTTP server on a thread and event loop of its own, so that acknowledgements never wait.

Turns run on the process's main event loop; with hundreds in flight, a callback there waits
behind hundreds of others (measured: a burst of 200 Slack events at once, ack p99 207 ms with the
server on that loop). On its own loop, a request waits only for the interpreter, which a busy
thread hands over every few milliseconds. What an endpoint needs of the main loop (the bots, the
turn queue, the readiness checks: their connections belong to that loop) it reaches through
`HomeLoop`, which is a plain `await` when both are the same loop (tests serving on theirs).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import uvicorn
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from threadsage.bots.background import BackgroundTasks
from threadsage.config import Settings
from threadsage.server import ReadinessCheck, create_app

log = logging.getLogger(__name__)

T = TypeVar("T")


class HomeLoop:
    """The event loop a component was started on (by default: the one running now)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop or asyncio.get_running_loop()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """`work` on the home loop, awaited from whichever loop calls."""
        if asyncio.get_running_loop() is self.loop:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    def start(self, tasks: BackgroundTasks, work: Coroutine[Any, Any, object], name: str) -> None:
        """`work` as a background task of the home loop, not awaited: started in call order."""
        try:
            here = asyncio.get_running_loop() is self.loop
        except RuntimeError:
            here = False
        if here:
            tasks.spawn(work, name)
        else:
            self.loop.call_soon_threadsafe(tasks.spawn, work, name)


def on_home_loop(home: HomeLoop, route: Route) -> Route:
    """`route` with its endpoint run on `home`; the body is read first, here (where the request's
    stream lives), and Starlette keeps it for the endpoint."""

    async def endpoint(request: Request) -> Response:
        await request.body()
        response: Response = await home.run(route.endpoint(request))
        return response

    return Route(route.path, endpoint, methods=sorted(route.methods or ()))


@asynccontextmanager
async def http_server(
    settings: Settings, routes: list[Route], ready: ReadinessCheck | None = None
) -> AsyncIterator[None]:
    """/healthz, /readyz, /metrics and the given routes on THREADSAGE_HTTP_PORT while inside,
    served from a thread of their own; `ready` is asked on the caller's loop."""
    home = HomeLoop()

    async def readiness() -> bool:
        return True if ready is None else await ready()

    async def ready_at_home() -> bool:
        return await home.run(readiness())

    config = uvicorn.Config(
        create_app(routes, ready_at_home),
        host="0.0.0.0",
        port=settings.http_port,
        log_level="info",
        log_config=None,  # its lines go through the process's handler (JSON, scrubbed)
        access_log=False,
    )
    server = _Server(config)
    thread = threading.Thread(target=asyncio.run, args=(server.serve(),), name="threadsage-http", daemon=True)
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
