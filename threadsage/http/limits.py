"""A ceiling on request bodies, enforced before any endpoint reads a body whole.

Webhooks are reachable by anyone: without a ceiling, one unsigned POST of tens of MiB is read into
memory (and parsed, and logged) before its signature is even looked at. Slack's and Telegram's
payloads are a few kB, so 1 MiB leaves a wide margin.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 1 << 20


class BodyTooLarge(Exception):
    """Raised from `receive` once a streamed body passes the ceiling; `BodyLimit` answers 413."""


class BodyLimit:
    """Pure ASGI middleware: 413 for a declared Content-Length over `limit` without reading a byte
    (and before uvicorn sends `100 Continue`); a body streamed without one is counted as it
    arrives and refused the moment it passes the ceiling. The connection is then closed, so
    the rest is never read."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await _refuse(send)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            if started:  # an endpoint that answered before reading all of its body: nothing to add
                return
            await _refuse(send)


async def _refuse(send: Send) -> None:
    body = b"request body too large\n"
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
