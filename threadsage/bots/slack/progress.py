"""The one message a model-backed turn shows while it works.

At the run's first step a short placeholder is posted ("Looking in the documents…"); a next step
replaces its text once the text showing has been up `step_seconds` (1 s by default), and the
turn's reply replaces it (`chat.update`): one message, never two answers. Steps that pass sooner
are not shown one by one — a person cannot read them, and `chat.update` is a Tier 3 method of
Slack's Web API (50+ calls a minute per workspace), which a placeholder changing at every step of
every turn would exceed. The placeholder is marked with the job's key in its metadata, so a turn
redelivered by the queue (its worker died) finds it in the thread and goes on updating it rather
than posting another. Turns that report no steps (the offline back-end answers in milliseconds)
show none; nor does any turn with THREADSAGE_SLACK_PROGRESS=false. The steps are optional calls
(`pacing.optional`): with many turns at once they give way to the replies.

Where Slack cannot stream (the top level of a DM), the answer's drafts are shown the same way:
the placeholder's text becomes the answer so far, at most once every `step_seconds`, and the
answer replaces it. In a thread, a stream takes over from the placeholder (`give_way`).
"""

from __future__ import annotations

import asyncio
import logging
import time

from threadsage.bots.pacing import NotNow, optional
from threadsage.bots.render import to_mrkdwn
from threadsage.bots.replies import STEPS
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import PLACEHOLDER_EVENT, SlackSender
from threadsage.bots.slack.texts import escaped
from threadsage.chat import Draft, Progress, Reply, Turn
from threadsage.i18n import say

log = logging.getLogger(__name__)

DRAFT_CHARS = 3000  # of a draft shown in the placeholder: the answer replaces it whole


class Placeholder:
    def __init__(self, send: SlackSender, place: Place, key: str, enabled: bool, step_seconds: float = 1.0) -> None:
        self.send = send
        self.place = place
        self.key = key
        self.enabled = enabled
        self.step_seconds = step_seconds
        self.ts: str | None = None  # the placeholder showing, if any
        self._shown_at = 0.0  # when its text last changed (time.monotonic())
        self._next: str | None = None  # the latest step's text, not shown yet
        self._later: asyncio.Task[None] | None = None  # shows `_next` when its time comes
        self._updating = False  # `_later` is changing the text: let it finish
        self._drafted = False  # the answer's words have been shown

    async def find(self) -> None:
        """A redelivered job takes over the placeholder an earlier try posted (if any)."""
        if self.enabled:
            found = await self.send.find(self.place, PLACEHOLDER_EVENT, self.key)
            self.ts = found[0]["ts"] if found else None

    async def show(self, progress: Progress) -> None:
        detail = progress.detail
        await self._text(say(STEPS[progress.step], progress.language) + (f" ({escaped(detail)})" if detail else ""))

    async def draft(self, draft: Draft) -> None:
        """The answer so far in the placeholder's place (a withdrawn one: the step that follows).
        The first words show at once — a step waiting for its time gives way to them — the
        next ones at most every `step_seconds`."""
        if not draft.text:
            return
        text = to_mrkdwn(draft.text)[:DRAFT_CHARS]
        if not self._drafted and self.enabled and self.ts is not None:
            self._drafted = True
            await self._settle()
            self._next = None
            await self.send.update_text(self.place.channel, self.ts, text)
            self._shown_at = time.monotonic()
            return
        self._drafted = True
        await self._text(text)

    async def give_way(self) -> None:
        """A streamed message takes over: the placeholder goes (best effort)."""
        await self._settle()
        if self.ts is not None:
            await self.send.delete(self.place.channel, self.ts)
            self.ts = None

    async def _text(self, text: str) -> None:
        if not self.enabled:
            return
        if self.ts is None:
            try:
                with optional():
                    self.ts = await self.send.post_marked(self.place, text, PLACEHOLDER_EVENT, self.key)
            except NotNow:
                return  # the channel's posts are kept for replies: a later step tries again
            self._shown_at = time.monotonic()
            return
        self._next = text
        if self._later is not None:
            return  # a step waits for its time: it will show this one, the latest
        wait = self._shown_at + self.step_seconds - time.monotonic()
        if wait > 0:
            self._later = asyncio.create_task(self._show_next(wait))
            return
        self._next = None
        await self.send.update_text(self.place.channel, self.ts, text)
        self._shown_at = time.monotonic()

    async def deliver(self, reply: Reply, turn: Turn) -> None:
        """The reply, its first message in place of the placeholder (which, should that fail,
        stays for the apology to replace)."""
        await self._settle()
        await self.send.post(self.place, reply, turn, self.ts)
        self.ts = None

    async def apologise(self, text: str) -> None:
        await self._settle()
        replacing, self.ts = self.ts, None
        await self.send.post_quietly(self.place, text, replacing)

    def stop(self) -> None:
        """The turn ends here (cancelled, or failed before its reply): no step is shown after it."""
        if self._later is not None and not self._updating:
            self._later.cancel()

    async def end(self) -> None:
        self.stop()

    async def _show_next(self, wait: float) -> None:
        try:
            await asyncio.sleep(wait)
            text, self._next = self._next, None
            if text is not None and self.ts is not None:
                self._updating = True
                await self.send.update_text(self.place.channel, self.ts, text)  # best effort: logs a failure
                self._shown_at = time.monotonic()
        finally:
            self._updating = False
            if self._later is asyncio.current_task():
                self._later = None

    async def _settle(self) -> None:
        """No step is shown after this: one waiting for its time is dropped, one being shown is
        let finish (an update still in flight could land after the reply and hide it)."""
        later = self._later
        self.stop()
        if later is not None:
            await asyncio.gather(later, return_exceptions=True)
