"""What Slack sends us, and what of it the bot takes: by the Events API (a route we serve) or
by Socket Mode (a websocket we open).

The signature is checked before bolt parses a body (bolt parses first, so garbage from anyone was
a 500, and its failed-signature message logged the whole body). A signed body that is not a Slack
payload is a 400, which Slack does not retry; an event nobody listens to is acknowledged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request, to_starlette_response
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from threadsage.http.thread import MainLoopBridge
from threadsage.support.background import BackgroundTasks

log = logging.getLogger(__name__)


def events_route(
    app: AsyncApp,
    verifier: SignatureVerifier,
    main_loop: MainLoopBridge,
    ack_first: BackgroundTasks | None,
    arriving: Callable[[bytes], None] = lambda _body: None,
) -> Route:
    """POST /slack/events for the Events API and interactivity, bolt running on `main_loop`. With
    `ack_first` (the tasks of a bot that answers in this process), a signed event is acknowledged
    at once and dispatched to bolt as one of those tasks (bolt's request is built there too, off
    the HTTP thread): the answer to an event is always an empty 200, and an error of bolt's is
    logged by `on_error` (a 500 for Slack to retry would only matter for a delivery that is lost
    unless processed before it is acknowledged, i.e. queued). `arriving` sees each such event
    first, on the bot's loop, in the order the deliveries came.
    """

    async def events(request: Request) -> Response:
        body = await request.body()  # at most 1 MiB (threadsage.http.limits)
        if not _signed(verifier, body, request):
            return JSONResponse({"error": "invalid request"}, status_code=401)
        if ack_first is not None and _is_event_callback(body):
            query = request.scope["query_string"].decode("latin-1")
            main_loop.start(ack_first, _dispatch(app, body, query, request.headers, arriving), "slack-event")
            return Response(status_code=200)
        try:
            bolt_request = to_async_bolt_request(request, body)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError):  # neither JSON nor a form Slack sends
            return JSONResponse({"error": "malformed payload"}, status_code=400)
        if not _is_payload(bolt_request.body):
            return JSONResponse({"error": "malformed payload"}, status_code=400)
        return to_starlette_response(await main_loop.run(app.async_dispatch(bolt_request)))

    return Route("/slack/events", events, methods=["POST"])


@asynccontextmanager
async def socket_mode(app: AsyncApp, client: AsyncWebClient, app_token: str) -> AsyncIterator[None]:
    """Slack's deliveries over Socket Mode while inside: no public URL needed."""
    socket = AsyncSocketModeHandler(app, app_token=app_token, web_client=client)
    await socket.connect_async()  # type: ignore[no-untyped-call]  # slack_bolt leaves it unannotated
    log.info("Slack: Socket Mode connected")
    try:
        yield
    finally:
        await socket.close_async()  # type: ignore[no-untyped-call]


async def on_error(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
    """Bolt's error handler. A request no listener takes is acknowledged if it is an event (an
    event type we do not listen to: a 404 would have Slack retry it) and refused otherwise; any
    other error is logged and stays a 500, so that Slack retries it."""
    if isinstance(error, BoltUnhandledRequestError):
        kind = body.get("type")
        log.debug("no listener for a Slack %s payload", kind)
        return BoltResponse(status=200 if kind in ("event_callback", "app_rate_limited") else 400, body="")
    log.error("a Slack request failed: %s", error, exc_info=error)
    return None


def from_a_person(event: dict[str, Any], context: Any) -> bool:
    """A message someone wrote: not an edit, a join or the like; not from a bot (ourselves, or
    another bot that would answer us back, and so on for ever); with the fields we answer by. A
    message with files, or a thread reply also sent to the channel, is a message like any other."""
    return (
        event.get("subtype") in (None, "file_share", "thread_broadcast")
        and not event.get("bot_id")
        and all(isinstance(event.get(field), str) for field in ("user", "channel", "ts"))
        and event["user"] != context.get("bot_user_id")
    )


def _signed(verifier: SignatureVerifier, body: bytes, request: Request) -> bool:
    """Slack's v0 signature, within its five minutes; slack_sdk checks text, and Slack sends UTF-8."""
    timestamp = request.headers.get("x-slack-request-timestamp", "")
    signature = request.headers.get("x-slack-signature", "")
    try:
        return timestamp.isdigit() and verifier.is_valid(body.decode(), timestamp, signature)
    except UnicodeDecodeError:
        return False


def _is_event_callback(body: bytes) -> bool:
    """An Events API delivery, told apart as bolt would parse it (JSON when it starts with `{`)
    but without building bolt's request: the acknowledgement waits for this parse alone."""
    if not body.startswith(b"{"):
        return False
    try:
        payload = json.loads(body)
    except ValueError:
        return False
    return _is_payload(payload) and payload.get("type") == "event_callback"


async def _dispatch(
    app: AsyncApp, body: bytes, query: str, headers: Headers, arriving: Callable[[bytes], None]
) -> None:
    """An acknowledged event through bolt, on the bot's loop (where its request is built too)."""
    arriving(body)  # before the first await: in the order the deliveries came
    await app.async_dispatch(AsyncBoltRequest(body=body.decode(), query=query, headers=dict(headers)))


def _is_payload(body: object) -> bool:
    """Shaped like what Slack posts, as far as bolt's routing relies on it: an object, and an
    event in it (if any) an object with a type."""
    if not isinstance(body, dict):
        return False
    event = body.get("event")
    return event is None or (isinstance(event, dict) and isinstance(event.get("type"), str))
