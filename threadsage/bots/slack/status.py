"""What a turn shows while it works, and the one that shows it in an assistant thread.

`Shown` is the interface `answering` drives: a step reported (`show`), then a reply delivered or an
apology, then `end`. The placeholder message (`progress.Placeholder`) is one; `Status` is the panel's:
`assistant.threads.setStatus` with the step ("Looking in the documents…"), which Slack shows under
the thread and clears by itself when the bot's reply arrives (or after two minutes without one).
`private.Private` shows nothing but the replies, to their person alone; `streaming.Streaming` wraps
either of the first two and writes the answer's drafts into a streamed message, which its `deliver`
finishes with the citations and buttons.
"""

from __future__ import annotations

import logging
from typing import Protocol

from slack_sdk.errors import SlackApiError

from threadsage.bots.replies import STEPS
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import SlackSender
from threadsage.chat import Draft, Progress, Reply, Turn
from threadsage.i18n import say

log = logging.getLogger(__name__)


class Shown(Protocol):
    @property
    def ts(self) -> str | None:
        """A message the turn shows while it works (none for a status)."""

    async def find(self) -> None: ...
    async def show(self, progress: Progress) -> None: ...
    async def draft(self, draft: Draft) -> None: ...
    async def deliver(self, reply: Reply, turn: Turn) -> None: ...
    async def apologise(self, text: str) -> None: ...
    def stop(self) -> None: ...
    async def end(self) -> None: ...


MAX_LOADING_MESSAGES = 10  # assistant.threads.setStatus: "Maximum of 10 messages"


class Status:
    """The status of an assistant thread: each step set as it comes, with the lines Slack rotates
    through while it lasts (`loading_messages`: the step, then what it does), cleared should the
    turn end with nothing posted in the thread."""

    ts: str | None = None

    def __init__(self, send: SlackSender, place: Place) -> None:
        self.send = send
        self.place = place
        self._showing = False

    async def find(self) -> None:
        """Nothing to take over: a status is not a message."""

    async def show(self, progress: Progress) -> None:
        key = STEPS[progress.step]
        text = say(key, progress.language)
        if progress.detail:
            text = f"{text} ({progress.detail})"
        await self._set(text, [text, *say(f"{key}_more", progress.language).split("|")][:MAX_LOADING_MESSAGES])

    async def draft(self, draft: Draft) -> None:
        """The panel's drafts are streamed into its thread (see `streaming`)."""

    async def give_way(self) -> None:
        """A streamed message takes over: Slack clears the status when the bot's message arrives."""
        self._showing = False

    async def deliver(self, reply: Reply, turn: Turn) -> None:
        await self.send.post(self.place, reply, turn)
        self._showing = False  # Slack clears the status when the bot replies

    async def apologise(self, text: str) -> None:
        await self.send.post_quietly(self.place, text)
        self._showing = False

    def stop(self) -> None:
        """Nothing runs between steps."""

    async def end(self) -> None:
        if self._showing:
            await self._set("")  # the empty status clears it

    async def _set(self, status: str, loading: list[str] | None = None) -> None:
        try:
            await self.send.client.assistant_threads_setStatus(
                channel_id=self.place.channel, thread_ts=self.place.thread_ts, status=status, loading_messages=loading
            )
            self._showing = bool(status)
        except SlackApiError as exc:  # a courtesy: the answer comes anyway
            log.warning("could not set an assistant thread's status: %s", exc.response.get("error"))
