"""The knowledge base as an MCP server (the Model Context Protocol's Streamable HTTP transport, the
official `mcp` SDK) at `/mcp` on the bot's HTTP port, for editors and agents (Claude Desktop, Cursor,
VS Code): tools `search` and `ask` (threadsage/bots/mcp/tools.py), each bearer token of
`THREADSAGE_MCP_TOKENS` reading only its categories (docs/mcp.md).

Stateless and answered in JSON: no session lives in the server (a conversation's memory is the chat
service's, named by the `conversation` id `ask` returns), so any process that answers can serve any
request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.bots.mcp.access import Readers
from threadsage.bots.mcp.tools import READER, knowledge_server
from threadsage.chat import ChatService
from threadsage.http.server import Running
from threadsage.http.thread import MainLoopBridge
from threadsage.settings.mcp import McpSettings

PATH = "/mcp"


@dataclass(frozen=True)
class McpEndpoint:
    routes: list[Route]  # `/mcp`, behind the bearer-token gate; none while unconfigured
    running: list[Running]  # the SDK's session manager, run on the HTTP server's loop


def mcp_endpoint(settings: McpSettings, chat: ChatService, kb: KnowledgeBase, stop: asyncio.Event) -> McpEndpoint:
    """The MCP server of this process, nothing while `THREADSAGE_MCP_TOKENS` names no token. Built on
    the main loop (the tools reach it from the HTTP thread); refuses requests once `stop` is set."""
    readers = Readers(settings.mcp_readers())
    if not readers:
        return McpEndpoint([], [])
    server = knowledge_server(chat, kb, MainLoopBridge())
    server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True, host="0.0.0.0")
    manager = server.session_manager

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with manager.run():
            yield

    gate = _Gate(manager.handle_request, readers, stop)
    return McpEndpoint([Route(PATH, gate, methods=["GET", "POST", "DELETE"])], [running])


class _Gate:
    """Lets through only requests that carry a configured bearer token, with their reader in the
    ASGI scope for the tools; 401 otherwise (RFC 6750), 503 while the process stops."""

    def __init__(self, app: ASGIApp, readers: Readers, stop: asyncio.Event) -> None:
        self.app, self.readers, self.stop = app, readers, stop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reader = self.readers.of(Headers(scope=scope).get("authorization"))
        response: Response | None = None
        if reader is None:
            response = JSONResponse(
                {"error": "invalid_token", "error_description": "A bearer token of THREADSAGE_MCP_TOKENS is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        elif self.stop.is_set():
            response = Response(status_code=503)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app({**scope, READER: reader}, receive, send)
