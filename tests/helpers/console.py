"""What the console tests share: the console's token, two questions, a question asked and voted down, and
the console alone on a real HTTP server over its database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import uvicorn

from tests.helpers.app_server import Server
from tests.helpers.slack_harness import Harness, thread_messages
from threadsage.console import console_routes
from threadsage.http.server import create_app
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.settings.environment import Settings

TOKEN = "console-test-password-4b1d"
TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"
GAP = "Can I bring my pet iguana to the office kitchen?"


async def ask_and_vote_down(slack: Harness, question: str) -> str:
    """A question asked by mention, its answer given a 👎: the thread's ts."""
    ts = await slack.mention(question)
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    await slack.click(answer, 1)  # the feedback block's 👎
    await slack.settle()
    return ts


@dataclass
class Served:
    """The console alone on a real HTTP server, over the checkpointer of `settings`."""

    url: str
    checkpointer: Any
    http: aiohttp.ClientSession


@asynccontextmanager
async def console_served(settings: Settings) -> AsyncIterator[Served]:
    async with AsyncExitStack() as stack:
        checkpointer = await stack.enter_async_context(open_checkpointer(settings))
        routes = await console_routes(settings, stack, checkpointer)
        server = Server(
            uvicorn.Config(create_app(routes), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        )
        serving = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
                yield Served(f"http://127.0.0.1:{port}", checkpointer, http)
        finally:
            server.stop()
            await serving


def console_settings(tmp_path: Path, database_url: str = "", token: str = TOKEN) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        THREADSAGE_CONSOLE_TOKEN=token,
        DATABASE_URL=database_url or None,
        OPENAI_API_KEY=None,
        _env_file=None,
    )  # type: ignore[call-arg]
