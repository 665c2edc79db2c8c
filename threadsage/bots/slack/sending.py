"""Everything the Slack bot sends: replies (read back first when a turn is redelivered), the
placeholder a turn shows while it works, the edited clarification, ephemeral notices and
`response_url` answers, apologies and the 👀 while a turn runs.

What the bot posts for a turn carries the turn in its metadata, so that a redelivered turn can
find it again. Only the failure of a reply or of a message a turn needs propagates (the turn
queue may retry it); the rest is best effort, logged."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook.async_client import AsyncWebhookClient

from threadsage.bots.pacing import NotNow, optional
from threadsage.bots.slack.blocks import NO_HELP, Helping, choice_shown, reply_messages
from threadsage.bots.slack.limits import PacedClient, reply_keys
from threadsage.bots.slack.places import Place
from threadsage.bots.tokens import Signer
from threadsage.chat import Reply, Turn
from threadsage.delivery.current import redelivered

log = logging.getLogger(__name__)

EYES = "eyes"
REPLY_EVENT = "threadsage_reply"  # the metadata event type that marks the bot's replies
PLACEHOLDER_EVENT = "threadsage_progress"  # …its placeholders, replaced by a reply when the turn ends
QUESTION_EVENT = "threadsage_question"  # …the questions it posts for a private answer moved to a DM
SHARED_EVENT = "threadsage_shared"  # …and the line above a private answer shared in its channel
FIRST_REPLIES = 50  # of a thread, read to find its first person's reply (the bot's may come first)
NOT_HERE = {"not_in_channel", "channel_not_found"}  # Slack's errors where the bot may not post


@dataclass(frozen=True)
class ThreadStart:
    """How a thread begins: its first message (None: gone or unreadable) and the ts of the first
    reply a person wrote in it (None: none yet)."""

    root: dict[str, Any] | None
    first_reply: str | None


class SlackSender:
    def __init__(self, client: PacedClient, signer: Signer, mention: bool = False, helping: Helping = NO_HELP) -> None:
        self.client = client
        self.signer = signer
        self.mention = mention  # THREADSAGE_HANDOFF_MENTION
        self.helping = helping  # the help buttons under answers: experts set, help channels

    def answering(self, place: Place) -> AbstractContextManager[None]:
        """A turn in flight in `place`: Slack's limits keep room for its reply (see `limits`)."""
        return self.client.windows.answering(reply_keys(place))

    async def post(self, place: Place, reply: Reply, turn: Turn, replacing: str | None = None) -> None:
        """A reply in the place's thread (or the DM itself); long answers take several messages,
        the first in place of the placeholder `replacing` (its ts), when there is one.

        Each message carries its turn and part in its metadata. A turn redelivered by the queue
        (its worker died, perhaps after posting) first reads back what was posted and skips it."""
        posted = {int(p.get("part", 0)) for p in await self.find(place, REPLY_EVENT, turn.message_id)}
        for part, (blocks, fallback) in enumerate(
            reply_messages(reply, place, turn, self.signer, self.mention, self.helping)
        ):
            if part in posted:
                log.info("part %d of the reply to %s was already posted", part, turn.message_id)
                continue
            metadata = {"event_type": REPLY_EVENT, "event_payload": {"turn": turn.message_id, "part": part}}
            if part == 0 and replacing:
                await self.client.chat_update(
                    channel=place.channel, ts=replacing, text=fallback, blocks=blocks, metadata=metadata
                )
            else:
                await self.client.chat_postMessage(
                    channel=place.channel,
                    thread_ts=place.thread_ts or None,
                    text=fallback,
                    blocks=blocks,
                    unfurl_links=False,
                    metadata=metadata,
                )

    async def post_marked(self, place: Place, text: str, event_type: str, key: str) -> str:
        """A plain message marked with `key` in its metadata (a placeholder, an /ask question);
        its ts."""
        response = await self.client.chat_postMessage(
            channel=place.channel,
            thread_ts=place.thread_ts or None,
            text=text,
            metadata={"event_type": event_type, "event_payload": {"turn": key}},
        )
        return str(response["ts"])

    async def find(self, place: Place, event_type: str, key: str) -> list[dict[str, Any]]:
        """What a redelivered turn already posted: the metadata payloads (with the message's ts)
        of the messages marked `event_type` and `key` in the thread (or the DM's latest
        messages). Nothing on a first delivery, or if Slack cannot tell (then posting twice is
        the lesser harm than not at all)."""
        if not redelivered():
            return []
        try:
            if place.thread_ts:
                response = await self.client.conversations_replies(
                    channel=place.channel, ts=place.thread_ts, include_all_metadata=True, limit=200
                )
            else:
                response = await self.client.conversations_history(
                    channel=place.channel, include_all_metadata=True, limit=50
                )
        except SlackApiError as exc:
            log.warning("could not read back what %s posted: %s", key, exc.response.get("error"))
            return []
        found = []
        messages: list[dict[str, Any]] = response.get("messages", [])
        for message in messages:
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            if metadata.get("event_type") == event_type and payload.get("turn") == key:
                found.append({**payload, "ts": message["ts"]})
        return found

    async def first_of_thread(self, channel: str, thread: str) -> dict[str, Any] | None:
        """A thread's first message (a person's or the bot's), with its metadata; None when it is
        gone or cannot be read."""
        return _root(await self._thread(channel, thread, 1), thread)

    async def thread_start(self, channel: str, thread: str) -> ThreadStart:
        """A thread's first message and the ts of its first reply by a person, from one read (an
        expert's reply is relayed only if its thread's root is an escalation and it came first)."""
        messages = await self._thread(channel, thread, FIRST_REPLIES)
        return ThreadStart(_root(messages, thread), _first_person_reply(messages, thread))

    async def _thread(self, channel: str, thread: str, limit: int) -> list[dict[str, Any]]:
        """A thread's first `limit` messages, root first, with their metadata; none when it is gone
        or cannot be read."""
        try:
            response = await self.client.conversations_replies(
                channel=channel, ts=thread, include_all_metadata=True, limit=limit
            )
        except SlackApiError as exc:
            log.info("no thread %s in %s: %s", thread, channel, exc.response.get("error"))
            return []
        messages: list[dict[str, Any]] = response.get("messages", [])
        return messages

    async def update_text(self, channel: str, ts: str, text: str) -> None:
        """A placeholder shows the next step (best effort, and only where Slack's limits have room
        to spare: the answer replaces it anyway)."""
        try:
            with optional():
                await self.client.chat_update(channel=channel, ts=ts, text=text)
        except NotNow:
            log.debug("a placeholder's step skipped: no room to spare in Slack's limits")
        except SlackApiError as exc:
            log.warning("could not update a placeholder: %s", exc.response.get("error"))

    async def delete(self, channel: str, ts: str) -> None:
        """One of the bot's messages removed (best effort: a placeholder a stream replaced)."""
        try:
            await self.client.chat_delete(channel=channel, ts=ts)
        except SlackApiError as exc:
            log.warning("could not delete a message: %s", exc.response.get("error"))

    async def respond(
        self, response_url: str, text: str, blocks: list[dict[str, Any]] | None = None, replace: bool = False
    ) -> None:
        """An ephemeral message through a command's, shortcut's or click's `response_url` (`text`
        is the fallback of `blocks`, when given); `replace`: in place of the clicked message."""
        try:
            client = AsyncWebhookClient(response_url, session=self.client.session)
            kind = {"replace_original": True} if replace else {"response_type": "ephemeral"}
            response = await client.send(text=text, blocks=blocks, **kind)
        except Exception as exc:  # noqa: BLE001 - best effort: the person may simply not see it
            log.warning("could not answer through a response_url: %s", exc)
            return
        if response.status_code != 200:
            log.warning("a response_url refused the answer: HTTP %d %s", response.status_code, response.body)

    async def permalink(self, channel: str, ts: str) -> str | None:
        try:
            return str((await self.client.chat_getPermalink(channel=channel, message_ts=ts))["permalink"])
        except SlackApiError as exc:
            log.info("no permalink for a message in %s: %s", channel, exc.response.get("error"))
            return None

    async def show_choice(self, body: dict[str, Any], label: str, user: str) -> None:
        """The clarification message keeps its question, loses its buttons, shows the choice."""
        container = body.get("container", {})
        blocks, text = choice_shown(body, label, user)
        try:
            await self.client.chat_update(
                channel=container.get("channel_id") or body["channel"]["id"],
                ts=container["message_ts"],
                text=text,
                blocks=blocks,
            )
        except SlackApiError as exc:
            log.warning("could not update the clarification message: %s", exc.response.get("error"))

    async def ephemeral(self, place: Place, user: str, text: str, blocks: list[dict[str, Any]] | None = None) -> None:
        try:
            await self.client.chat_postEphemeral(
                channel=place.channel, user=user, text=text, thread_ts=place.thread_ts or None, blocks=blocks
            )
        except SlackApiError as exc:
            log.warning("could not send an ephemeral notice: %s", exc.response.get("error"))

    async def post_quietly(self, place: Place, text: str, replacing: str | None = None) -> None:
        """Plain text, for apologies (in place of a placeholder, if one shows): a failure is
        logged, never raised over the first one."""
        try:
            if replacing:
                await self.client.chat_update(channel=place.channel, ts=replacing, text=text)
            else:
                await self.client.chat_postMessage(channel=place.channel, thread_ts=place.thread_ts or None, text=text)
        except SlackApiError as exc:
            log.error("could not post to %s: %s", place.channel, exc.response.get("error"))

    @asynccontextmanager
    async def eyes_on(self, channel: str, ts: str) -> AsyncIterator[None]:
        """👀 on the message while the body runs: the person sees it is being worked on (where
        Slack's limits have room to spare; taken off again only where it was put)."""
        with optional():
            added = await self._react(channel, ts, add=True)
        try:
            yield
        finally:
            if added:
                await self._react(channel, ts, add=False)

    async def _react(self, channel: str, ts: str, add: bool) -> bool:
        """A reaction is a courtesy: one that fails (Slack's refusal, the connection, or no room
        in the limits) is logged and the answer goes on (seen: a burst of 200 turns whose 👀 met
        reset connections)."""
        try:
            if add:
                await self.client.reactions_add(channel=channel, timestamp=ts, name=EYES)
            else:
                await self.client.reactions_remove(channel=channel, timestamp=ts, name=EYES)
        except NotNow:
            return False
        except SlackApiError as exc:
            log.debug("reaction %s failed: %s", "add" if add else "remove", exc.response.get("error"))
            return False
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("reaction %s failed: %s", "add" if add else "remove", type(exc).__name__)
            return False
        return True


def _root(messages: list[dict[str, Any]], thread: str) -> dict[str, Any] | None:
    """The thread's own first message, if the read began with it."""
    return messages[0] if messages and messages[0].get("ts") == thread else None


def _first_person_reply(messages: list[dict[str, Any]], thread: str) -> str | None:
    """The ts of the earliest reply written by a person (not a bot) among a thread's messages."""
    people = [m for m in messages if m.get("ts") != thread and m.get("user") and not m.get("bot_id")]
    first = min(people, key=lambda m: float(m["ts"]), default=None)
    return str(first["ts"]) if first is not None else None
