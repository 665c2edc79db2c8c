"""Run the configured platforms in one process: one chat service and one HTTP server on
`THREADSAGE_HTTP_PORT` — /healthz, /readyz and /metrics always, plus Slack's Events API or
Telegram's webhook when those are used instead of Socket Mode or long polling.
Stops cleanly on SIGINT/SIGTERM, finishing the turns in flight."""

from __future__ import annotations

import asyncio
import logging
import signal
from contextlib import AsyncExitStack

import uvicorn
from starlette.routing import Route

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.bots.tokens import Signer, load_secret
from threadsage.config import Settings
from threadsage.memory.retention import prune_periodically
from threadsage.runtime import open_chat_service
from threadsage.server import create_app

log = logging.getLogger(__name__)


def configured_platforms(settings: Settings) -> list[str]:
    platforms = []
    if settings.slack_bot_token is not None:
        platforms.append("slack")
    if settings.telegram_bot_token is not None:
        platforms.append("telegram")
    return platforms


async def serve(settings: Settings, platforms: list[str], kb: KnowledgeBase | None = None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    signer = Signer(load_secret(settings))
    routes: list[Route] = []
    async with AsyncExitStack() as stack:
        chat = await stack.enter_async_context(open_chat_service(settings, kb=kb))
        pruning = asyncio.create_task(prune_periodically(chat.graph.checkpointer, settings, stop))
        if "slack" in platforms:
            from threadsage.bots.slack import SlackBot

            slack = await stack.enter_async_context(SlackBot(settings, chat, signer).running())
            if settings.slack_app_token is not None:
                from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

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

            telegram = await stack.enter_async_context(TelegramBot(settings, chat, signer))
            if telegram.webhook_url:
                routes.append(telegram.webhook_route())
        config = uvicorn.Config(
            create_app(routes),
            host="0.0.0.0",
            port=settings.http_port,
            log_level="info",
            log_config=None,  # its lines go through the process's handler (JSON, scrubbed)
            access_log=False,
        )
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # ours stop everything together
        serving = asyncio.create_task(server.serve())
        log.info("listening on port %d", settings.http_port)
        await stop.wait()
        log.info("stopping: finishing the turns in flight")
        server.should_exit = True
        await serving
        await pruning
        # leaving the stack stops the bots (each finishing its turns in flight), then the service
