"""Everything the Slack bot sends: replies (read back first when a turn is redelivered), the
edited clarification, ephemeral notices, apologies and the 👀 while a turn runs.

Only a reply's failure propagates (the turn queue may retry it); the rest is best effort, logged."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from threadsage.bots.slack.blocks import choice_shown, reply_messages
from threadsage.bots.slack.places import Place
from threadsage.bots.tokens import Signer
from threadsage.chat import Reply, Turn
from threadsage.delivery.current import current_delivery

log = logging.getLogger(__name__)

EYES = "eyes"
REPLY_EVENT = "threadsage_reply"  # the metadata event type that marks the bot's replies


class SlackSender:
    def __init__(self, client: AsyncWebClient, signer: Signer) -> None:
        self.client = client
        self.signer = signer

    async def post(self, place: Place, reply: Reply, turn: Turn) -> None:
        """A reply in the place's thread (or the DM itself); long answers take several messages.

        Each message carries its turn and part in its metadata. A turn redelivered by the queue
        (its worker died, perhaps after posting) first reads back what was posted and skips it."""
        delivery = current_delivery.get()
        posted = await self._posted_parts(place, turn) if delivery is not None and delivery.attempt > 1 else set()
        for part, (blocks, fallback) in enumerate(reply_messages(reply, place, turn, self.signer)):
            if part in posted:
                log.info("part %d of the reply to %s was already posted", part, turn.message_id)
                continue
            await self.client.chat_postMessage(
                channel=place.channel,
                thread_ts=place.thread_ts or None,
                text=fallback,
                blocks=blocks,
                unfurl_links=False,
                metadata={"event_type": REPLY_EVENT, "event_payload": {"turn": turn.message_id, "part": part}},
            )

    async def _posted_parts(self, place: Place, turn: Turn) -> set[int]:
        """The parts of this turn's reply already in the thread (or the DM's latest messages);
        none if Slack cannot tell (then posting twice is the lesser harm than not at all)."""
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
            log.warning("could not read back the replies to %s: %s", turn.message_id, exc.response.get("error"))
            return set()
        messages: list[dict] = response.get("messages", [])
        parts = set()
        for message in messages:
            payload = (message.get("metadata") or {}).get("event_payload") or {}
            if payload.get("turn") == turn.message_id:
                parts.add(int(payload.get("part", 0)))
        return parts

    async def show_choice(self, body: dict, label: str, user: str) -> None:
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

    async def ephemeral(self, place: Place, user: str, text: str) -> None:
        try:
            await self.client.chat_postEphemeral(
                channel=place.channel, user=user, text=text, thread_ts=place.thread_ts or None
            )
        except SlackApiError as exc:
            log.warning("could not send an ephemeral notice: %s", exc.response.get("error"))

    async def post_quietly(self, place: Place, text: str) -> None:
        """Plain text, for apologies: a failure is logged, never raised over the first one."""
        try:
            await self.client.chat_postMessage(channel=place.channel, thread_ts=place.thread_ts or None, text=text)
        except SlackApiError as exc:
            log.error("could not post to %s: %s", place.channel, exc.response.get("error"))

    @asynccontextmanager
    async def eyes_on(self, channel: str, ts: str) -> AsyncIterator[None]:
        """👀 on the message while the body runs: the person sees it is being worked on."""
        await self._react(channel, ts, add=True)
        try:
            yield
        finally:
            await self._react(channel, ts, add=False)

    async def _react(self, channel: str, ts: str, add: bool) -> None:
        try:
            if add:
                await self.client.reactions_add(channel=channel, timestamp=ts, name=EYES)
            else:
                await self.client.reactions_remove(channel=channel, timestamp=ts, name=EYES)
        except SlackApiError as exc:
            log.debug("reaction %s failed: %s", "add" if add else "remove", exc.response.get("error"))
