"""The served Slack bot for tests: signed HTTP requests into the real bolt app served by uvicorn,
the real slack_sdk client against a fake Slack Web API (tests/fakes/slack_api.py), a real chat
service behind them. Slash commands and message shortcuts go in as Slack sends them (signed,
form-encoded); what the bot acknowledged at once is the response's body."""

from __future__ import annotations

import asyncio
import itertools
import json
import urllib.parse
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp
import uvicorn
from slack_bolt.listener.asyncio_runner import AsyncioListenerRunner

from tests.fakes.slack_api import (
    BOT_USER,
    TEAM,
    FakeSlack,
    action_body,
    command_body,
    ephemeral_action_body,
    event_body,
    shortcut_body,
    signed_headers,
)
from tests.helpers.app_server import Server
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.runtime import open_chat_service
from threadsage.bots.slack import SlackBot
from threadsage.bots.tokens import Signer, load_secret
from threadsage.chat import ChatService
from threadsage.console import console_routes
from threadsage.delivery.coordination import Coordinator, LocalCoordinator
from threadsage.http.server import create_app
from threadsage.settings.environment import Settings

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C111"
DM = "D024BE91L"
AMBIGUOUS = "How do I reset my password?"
TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"
OTHER_ORG = "T0PARTNER"  # a Slack Connect partner's workspace
_ids = itertools.count(1)
# The coroutine in which bolt runs a listener after acknowledging: `Harness.settle` waits for it
BOLT_LISTENER = "run_ack_function_asynchronously"
assert BOLT_LISTENER in {getattr(c, "co_name", "") for c in AsyncioListenerRunner.run.__code__.co_consts}, (
    "slack_bolt no longer runs listeners in run_ack_function_asynchronously: Harness.settle must wait on another name"
)


def dm_message(text: str, channel: str, **fields: str) -> dict[str, Any]:
    """A person's message in their DM with the bot, as Slack's `message.im` event carries it."""
    ts = next_ts()
    return {
        "type": "message",
        "channel": channel,
        "user": "U222",
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel_type": "im",
        **fields,
    }


def mention_event(text: str, user: str = "U222", thread_ts: str | None = None) -> dict[str, Any]:
    """A person's mention of the bot in the channel, as Slack's `app_mention` event carries it."""
    ts = next_ts()
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "ts": ts, "channel": CHANNEL}
    return {**event, "event_ts": ts, **({"thread_ts": thread_ts} if thread_ts else {})}


def thread_reply(text: str, thread_ts: str, user: str = "U222") -> dict[str, Any]:
    """A person's reply in a channel thread, as Slack's `message.channels` event carries it."""
    ts = next_ts()
    return {"type": "message", "channel": CHANNEL, "user": user, "text": text, "ts": ts, "event_ts": ts,
            "thread_ts": thread_ts, "channel_type": "channel"}  # fmt: skip


def file_share(text: str, files: list[dict], channel: str = DM, thread_ts: str | None = None) -> dict:
    """A `file_share` message event as Slack sends it (message.im, or a thread reply in a channel)."""
    ts = next_ts()
    event = {
        "type": "message", "subtype": "file_share", "text": text, "files": files, "upload": False, "user": "U222",
        "display_as_bot": False, "ts": ts, "event_ts": ts, "channel": channel,
        "channel_type": "im" if channel.startswith("D") else "channel",
    }  # fmt: skip
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def next_ts() -> str:
    return f"1710000000.{next(_ids):06d}"


@dataclass
class Harness:
    fake: FakeSlack
    bot: SlackBot
    chat: ChatService
    url: str
    http: aiohttp.ClientSession

    async def send(self, body: bytes, headers: dict | None = None, content_type: str = "application/json") -> int:
        sent = {"Content-Type": content_type, **signed_headers(SECRET, body), **(headers or {})}
        async with self.http.post(f"{self.url}/slack/events", data=body, headers=sent) as response:
            return response.status

    async def event(self, event: dict, event_id: str | None = None, shared: bool = False, **headers) -> int:
        return await self.send(event_body(event, event_id or f"Ev{next(_ids)}", shared), headers)

    async def mention(
        self,
        text: str,
        user: str = "U222",
        thread_ts: str | None = None,
        user_team: str | None = None,
        shared: bool = False,
    ) -> str:
        event = mention_event(text, user, thread_ts)
        if user_team:
            event["user_team"] = event["team"] = user_team
        assert await self.event(event, shared=shared) == 200
        return str(event["ts"])

    async def click(
        self, message: dict, index: int, user: str = "U222", value: str | None = None, user_team: str = TEAM
    ) -> int:
        """The `index`th button of the message's first block of buttons (of Slack's feedback buttons:
        0 is 👍, 1 is 👎)."""
        block = next(b for b in message["blocks"] if b["type"] in ("actions", "context_actions"))
        element = block["elements"][0 if block["type"] == "context_actions" else index]
        button = element
        if element["type"] == "feedback_buttons":
            button = element["positive_button" if index == 0 else "negative_button"]
        body = action_body(
            message,
            message["channel"],
            user,
            element["action_id"],
            value or button["value"],
            button["text"]["text"],
            next_ts(),
            user_team,
            element["type"],
        )
        return await self.send(body, content_type="application/x-www-form-urlencoded")

    async def form(self, body: bytes) -> tuple[int, str]:
        """A form-encoded request (commands, interactivity): its status and body."""
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(SECRET, body)}
        async with self.http.post(f"{self.url}/slack/events", data=body, headers=headers) as response:
            return response.status, await response.text()

    async def ask(self, text: str, user: str = "U222", channel: str = CHANNEL, team: str = TEAM) -> tuple[str, str]:
        """`/ask text`: the acknowledgement's body, and the name of the command's response_url."""
        name = f"ask-{next(_ids)}"
        body = command_body(text, self.fake.response_url(name), f"trigger-{name}", channel, user, team)
        status, acknowledged = await self.form(body)
        assert status == 200
        return acknowledged, name

    async def shortcut(self, message: dict, user: str = "U333", channel: str = CHANNEL) -> str:
        """The "Ask threadsage" shortcut on `message`: the name of the shortcut's response_url."""
        name = f"shortcut-{next(_ids)}"
        body = shortcut_body(message, channel, user, self.fake.response_url(name), f"trigger-{name}")
        assert await self.form(body) == (200, "")
        return name

    async def click_private(
        self, message: dict, action_id: str, user: str = "U222", channel: str = CHANNEL, value: str | None = None
    ) -> str:
        """A button of a private (ephemeral) answer, sent as `message` (what its response_url was
        given): the name of the click's own response_url. `action_id` names the button (a
        clarification's: its option's)."""
        button = next(
            e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"] if e["action_id"] == action_id
        )
        name = f"click-{next(_ids)}"
        body = ephemeral_action_body(
            channel,
            user,
            action_id,
            value or button["value"],
            button["text"]["text"],
            self.fake.response_url(name),
            next_ts(),
        )
        assert await self.send(body, content_type="application/x-www-form-urlencoded") == 200
        return name

    def private(self, name: str) -> list[dict]:
        """What a response_url was sent (text, blocks, response_type…)."""
        return list(self.fake.ephemerals.get(name, []))

    def responses(self, name: str) -> list[str]:
        """What the bot posted to a response_url."""
        return [r["text"] for r in self.fake.of("response_url") if r["url"] == name]

    async def settle(self) -> None:
        """Until nothing the requests started is left: bolt runs a listener after acknowledging, in
        a task of its own (a click's, a command's), which may start the bot's tasks; an event is
        one of the bot's tasks at once, and its listener's task exists before that one ends."""
        while True:
            if listeners := {t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__name__", "") == BOLT_LISTENER}:
                await asyncio.wait(listeners, timeout=30)
            elif self.bot.tasks.pending:
                await self.bot.tasks.drain(30)
            else:
                return


@asynccontextmanager
async def running(
    tmp_path: Path,
    kb: KnowledgeBase,
    database_url: str = "",
    fake: FakeSlack | None = None,
    progress: bool | None = None,
    coordinator: Coordinator | None = None,
    wrap: Callable[[ChatService], ChatService] | None = None,
    **overrides,
) -> AsyncIterator[Harness]:
    """The bot served on a real chat service; `progress` overrides whether the service reports
    its steps (the offline back-end does not), `coordinator` is the one it shares (a fresh local
    one by default), `wrap` makes another service of it (`drafting.Drafting.of`), `overrides` are
    settings."""
    fake = fake or FakeSlack().start()
    settings = Settings(
        **{
            "THREADSAGE_DATA_DIR": tmp_path / "data",
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": fake.api_url,
            "DATABASE_URL": database_url or None,
            "OPENAI_API_KEY": None,
            "_env_file": None,
            **overrides,
        }
    )
    async with AsyncExitStack() as stack:
        coordinator = coordinator or LocalCoordinator()
        chat = await stack.enter_async_context(open_chat_service(settings, kb, coordinator))
        chat = chat if progress is None else replace(chat, progress=progress)
        chat = chat if wrap is None else wrap(chat)
        bot = await stack.enter_async_context(
            SlackBot(
                settings, chat, coordinator, Signer(load_secret(settings, settings.data_dir)), receive=False
            ).running()
        )
        console = await console_routes(settings, stack, chat.checkpointer, kb)  # with THREADSAGE_CONSOLE_TOKEN
        server = Server(
            uvicorn.Config(
                create_app([bot.route(), *console]), host="127.0.0.1", port=0, log_level="warning", lifespan="off"
            )
        )
        serving = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            async with aiohttp.ClientSession() as http:  # closed first: no connection left to wait for
                try:
                    yield Harness(fake, bot, chat, f"http://127.0.0.1:{port}", http)
                finally:
                    await bot.tasks.drain(30)
        finally:
            server.stop()
            await serving


@asynccontextmanager
async def on_fake_slack(tmp_path: Path, kb: KnowledgeBase, **overrides: Any) -> AsyncIterator[Harness]:
    """`running` against a fake Slack of its own, stopped afterwards; `overrides` as there."""
    fake = FakeSlack().start()
    try:
        async with running(tmp_path, kb, fake=fake, **overrides) as harness:
            yield harness
    finally:
        fake.stop()


def thread_messages(fake: FakeSlack, thread_ts: str) -> list[dict]:
    return [m for m in fake.posted() if m.get("thread_ts") == thread_ts]


def as_text(message: dict) -> str:
    return json.dumps(message.get("blocks", [])) + message.get("text", "")


def user_message(text: str, user: str = "U444", thread_ts: str | None = None) -> dict:
    """A person's message as Slack shows it inside payloads."""
    ts = next_ts()
    return {"type": "message", "user": user, "text": text, "ts": ts, **({"thread_ts": thread_ts} if thread_ts else {})}


def ephemeral_click(ephemeral: dict, user: str, value: str, action_id: str = "verify") -> bytes:
    """A click on a button of an ephemeral message as Slack sends it: the container says so and
    names the thread; the message itself is not in the payload (java-slack-sdk#1200)."""
    message = {"ts": next_ts(), "thread_ts": ephemeral.get("thread_ts"), "text": ephemeral.get("text", "")}
    body = action_body(message, ephemeral["channel"], user, action_id, value, "button", next_ts())
    payload = json.loads(urllib.parse.unquote(body.decode().removeprefix("payload=")))
    payload["container"]["is_ephemeral"] = True
    del payload["message"]
    return ("payload=" + urllib.parse.quote(json.dumps(payload))).encode()
