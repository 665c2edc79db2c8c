"""One ASGI app for every HTTP entry point: platform webhooks, health and readiness.

Each front-end contributes its routes (`/slack/events`, `/telegram/webhook`); the app itself
knows no platform. Endpoints acknowledge at once and leave the work to background tasks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

ReadinessCheck = Callable[[], Awaitable[bool]]


def create_app(routes: Sequence[Route], ready: ReadinessCheck | None = None) -> Starlette:
    async def healthz(_request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_request: Request) -> Response:
        ok = await ready() if ready else True
        return JSONResponse({"ready": ok}, status_code=200 if ok else 503)

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            *routes,
        ]
    )
