"""One ASGI app for every HTTP entry point: platform webhooks, health, readiness and metrics.

Each front-end contributes its routes (`/slack/events`, `/telegram/webhook`); the app itself
knows no platform. Endpoints acknowledge at once and leave the work to background tasks. No
body over `MAX_BODY_BYTES` reaches an endpoint (413).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from threadsage.http.limits import BodyLimit
from threadsage.observability.telemetry import render_metrics

ReadinessCheck = Callable[[], Awaitable[bool]]
Running = Callable[[], AbstractAsyncContextManager[None]]


def create_app(
    routes: Sequence[Route], ready: ReadinessCheck | None = None, running: Sequence[Running] = ()
) -> Starlette:
    """The app of `routes`; `running`: what must run on the server's own event loop while it serves
    (an SDK's task group, say), entered at its start and left at its end."""

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for each in running:
                await stack.enter_async_context(each())
            yield

    async def healthz(_request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_request: Request) -> Response:
        ok = await ready() if ready else True
        return JSONResponse({"ready": ok}, status_code=200 if ok else 503)

    async def metrics(request: Request) -> Response:
        body, content_type = render_metrics(request.headers.get("accept", ""))
        return Response(body, media_type=content_type)

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
            *routes,
        ],
        middleware=[Middleware(BodyLimit)],
        lifespan=lifespan,
    )
