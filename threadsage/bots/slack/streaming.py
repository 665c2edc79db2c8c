"""The answer's words shown as the model writes them, with Slack's streaming messages.

In a thread (a mention's, a DM's, the assistant panel's) the first `Draft` starts a streamed reply
(`chat.startStream`, through slack_sdk's `chat_stream`), each later one appends what it adds
(`chat.appendStream`, at most every `APPEND_EVERY` seconds: the newest text then goes in one
call; with many streams at once, as often as Slack's limits have room to spare, see `limits`),
and the turn's reply finishes it: the stream is stopped (`chat.stopStream`) and the message
becomes the reply as every other answer is posted — Block Kit sections, sources, the feedback
buttons and the turn's metadata (`chat.update`). Until the first draft the steps show as
before (the placeholder, or the panel's status); the placeholder then gives way to the stream,
which shows them on as Slack's task timeline above the words (`tasks`).

The placeholder's first step waits `hold` seconds (the placeholder's step time) before it is
posted: words that come sooner stream at once, and a placeholder up for less than that — posted,
then deleted for the stream, two calls of Slack's Web API for a message nobody could read — is
never posted. The question's reaction (`eyes_on`) has already shown that the turn has begun.

A stream cannot take words back: a withdrawn draft (the self-check rejected it) or one that does
not continue the last stops the stream where it is, and the reply replaces it. The stream's
message is remembered (the coordinator) for the turn, so a turn the queue redelivers streams no
second message: it finishes the first.
"""

from __future__ import annotations

import asyncio
import logging

from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.models.messages.chunk import MarkdownTextChunk
from slack_sdk.web.async_chat_stream import AsyncChatStream

from threadsage.bots.pacing import Pacer, optional
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.progress import Placeholder
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.status import Status
from threadsage.bots.slack.tasks import DISPLAY_MODE, Tasks
from threadsage.chat import Draft, Progress, Reply, Turn
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.current import redelivered

log = logging.getLogger(__name__)

APPEND_EVERY = 0.3  # seconds between two appends to a stream
STREAM_KEPT = 24 * 3600.0  # seconds a turn's stream is remembered, for a redelivered turn


class Streaming:
    """A `Shown` (see `status`) that streams the drafts of a turn answered in a thread."""

    def __init__(
        self,
        inner: Placeholder | Status,
        send: SlackSender,
        place: Place,
        turn: Turn,
        coordinator: Coordinator,
        hold: float = 0.0,
    ) -> None:
        self.inner = inner
        self.hold = hold  # seconds the first step waits before a placeholder is posted for it
        self.send = send
        self.place = place
        self.turn = turn
        self.coordinator = coordinator
        self._stream: AsyncChatStream | None = None  # open while drafts arrive
        self._stream_ts: str | None = None  # the streamed message, open or stopped
        self._streamed = ""  # what the stream shows
        self._latest = ""  # the newest draft, not yet appended
        self._pacer = Pacer(APPEND_EVERY, self._show_latest)
        self._closed = False  # no more drafts: the stream was stopped (or a redelivered turn)
        self._step: Progress | None = None  # the newest step while the first one waits
        self._held: asyncio.Task[None] | None = None  # shows `_step` once `hold` has passed
        self._posting = False  # `_held` is showing its step: let it finish
        self._waited = False  # the first step has had its wait
        self._tasks = Tasks()  # the steps, shown above the words once they stream

    @property
    def ts(self) -> str | None:
        return self._stream_ts or self.inner.ts

    @property
    def _key(self) -> str:
        return f"slack-stream:{self.turn.message_id}"

    async def find(self) -> None:
        """A redelivered turn finishes the message an earlier try streamed (stopping it, should
        that try have died with it open) rather than streaming another."""
        await self.inner.find()
        if not redelivered():
            return  # no earlier try streamed anything (and the coordinator is not asked on every turn)
        self._stream_ts = await self.coordinator.recall(self._key)
        self._closed = self._stream_ts is not None
        if self._stream_ts is not None:
            try:
                await self.send.client.chat_stopStream(channel=self.place.channel, ts=self._stream_ts)
            except SlackApiError as exc:  # usually stopped already
                log.info("an earlier stream of %s: %s", self.turn.message_id, exc.response.get("error"))

    async def show(self, progress: Progress) -> None:
        if self._stream_ts is not None:
            return
        self._tasks.saw(progress)
        if self._held is not None:
            self._step = progress  # the first step still waits: the newest one is shown
            return
        if not self._waited and self.hold > 0 and self.inner.ts is None:
            self._step, self._waited = progress, True
            self._held = asyncio.create_task(self._show_held())
            return
        self._waited = True
        await self.inner.show(progress)

    async def draft(self, draft: Draft) -> None:
        if self._closed:
            return
        if not draft.text.startswith(self._streamed):  # withdrawn, or rewritten: the reply replaces it
            await self._stop()
            return
        self._latest = draft.text
        await self._pacer.offer()

    async def deliver(self, reply: Reply, turn: Turn) -> None:
        await self._settle_held()
        if self._stream_ts is None:
            await self.inner.deliver(reply, turn)
            return
        await self._stop()
        replacing, self._stream_ts = self._stream_ts, None
        await self.send.post(self.place, reply, turn, replacing)

    async def apologise(self, text: str) -> None:
        await self._settle_held()
        if self._stream_ts is None:
            await self.inner.apologise(text)
            return
        await self._stop()
        replacing, self._stream_ts = self._stream_ts, None
        await self.send.post_quietly(self.place, text, replacing)

    def stop(self) -> None:
        if self._held is not None and not self._posting:
            self._held.cancel()
            self._held = None
        self.inner.stop()
        self._pacer.cancel_soon()

    async def end(self) -> None:
        await self._settle_held()
        await self._stop()
        await self.inner.end()

    async def _show_held(self) -> None:
        """The first step, once it has waited `hold` (the newest by then, and any that came while
        it was being posted: the placeholder paces those)."""
        try:
            await asyncio.sleep(self.hold)
            self._posting = True
            shown = None
            while self._step is not None and self._step is not shown:
                shown = self._step
                await self.inner.show(shown)
        except (SlackApiError, SlackRequestError) as exc:  # the reply, posted anew, meets it (or not) in its turn
            log.warning("could not show a step: %s", exc)
        finally:
            self._posting = False
            if self._held is asyncio.current_task():
                self._held = None

    async def _settle_held(self) -> None:
        """No step is shown after this: one still waiting is dropped (it never posts), one being
        posted is let finish (its placeholder is then replaced or deleted as any other)."""
        held, self._step = self._held, None
        if held is None:
            return
        if not self._posting:
            held.cancel()
        await asyncio.gather(held, return_exceptions=True)
        self._held = None

    async def _show_latest(self) -> None:
        if not self._closed:
            await (self._start() if self._stream is None else self._append())

    async def _start(self) -> None:
        """The stream starts where the channel's posts have room to spare (else `NotNow`: the
        placeholder or status shows on, and the pacer tries again with the newest words)."""
        await self._settle_held()
        recipient = {} if self.place.is_dm else {"recipient_user_id": self.turn.user_id}
        if recipient and self.place.team:
            recipient["recipient_team_id"] = self.place.team
        tasks = self._tasks.started()
        display = {"task_display_mode": DISPLAY_MODE} if tasks else {}
        stream = await self.send.client.chat_stream(
            channel=self.place.channel, thread_ts=self.place.thread_ts, buffer_size=1, **display, **recipient
        )
        try:
            with optional():
                await stream.append(chunks=[*tasks, MarkdownTextChunk(text=self._latest)])
        except SlackApiError as exc:
            log.warning("could not start a stream: %s", exc.response.get("error"))
            self._closed = True  # the reply is posted as usual, in the placeholder's place
            return
        self._stream, self._streamed = stream, self._latest
        self._stream_ts = stream.ts
        if stream.ts is not None:
            await self.coordinator.remember(self._key, stream.ts, STREAM_KEPT)
        await self.inner.give_way()

    async def _append(self) -> None:
        """What the newest draft adds, where Slack's limits have room to spare. Words refused for
        now (`NotNow`) stay in the stream's buffer and go with the next append."""
        stream, added = self._stream, self._latest[len(self._streamed) :]
        if stream is None:
            return
        self._streamed = self._latest
        try:
            with optional():
                await stream.append(markdown_text=added)  # no call when nothing is added or buffered
        except (SlackApiError, SlackRequestError) as exc:  # the reply replaces it anyway
            log.warning("could not append to a stream: %s", exc)
            self._stream, self._closed = None, True

    async def _stop(self) -> None:
        """No more drafts; the stream stopped with what it shows (the reply then replaces it)."""
        self._closed = True
        await self._pacer.cancel()
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            await stream.stop(chunks=self._tasks.finished() or None)
        except (SlackApiError, SlackRequestError) as exc:
            log.warning("could not stop a stream: %s", exc)
