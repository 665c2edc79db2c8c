"""The one message a model-backed turn shows while it works.

At the run's first step a short placeholder is posted ("Looking in the documents…"); each next step
updates it, and the turn's reply replaces it (`chat.update`): one message, never two answers. The
placeholder is marked with the job's key in its metadata, so a turn redelivered by the queue (its
worker died) finds it in the thread and goes on updating it rather than posting another. Turns
that report no steps (the offline back-end answers in milliseconds) show none; nor does any turn
with THREADSAGE_SLACK_PROGRESS=false.
"""

from __future__ import annotations

import logging

from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import PLACEHOLDER_EVENT, SlackSender
from threadsage.bots.slack.texts import STEPS, escaped
from threadsage.chat import Progress, Reply, Turn
from threadsage.i18n import say

log = logging.getLogger(__name__)


class Placeholder:
    def __init__(self, send: SlackSender, place: Place, key: str, enabled: bool) -> None:
        self.send = send
        self.place = place
        self.key = key
        self.enabled = enabled
        self.ts: str | None = None  # the placeholder showing, if any

    async def find(self) -> None:
        """A redelivered job takes over the placeholder an earlier try posted (if any)."""
        if self.enabled:
            found = await self.send.find(self.place, PLACEHOLDER_EVENT, self.key)
            self.ts = found[0]["ts"] if found else None

    async def show(self, progress: Progress) -> None:
        if not self.enabled:
            return
        detail = progress.detail
        text = say(STEPS[progress.step], progress.language) + (f" ({escaped(detail)})" if detail else "")
        if self.ts is None:
            self.ts = await self.send.post_marked(self.place, text, PLACEHOLDER_EVENT, self.key)
        else:
            await self.send.update_text(self.place.channel, self.ts, text)

    async def deliver(self, reply: Reply, turn: Turn) -> None:
        """The reply, its first message in place of the placeholder (which, should that fail,
        stays for the apology to replace)."""
        await self.send.post(self.place, reply, turn, self.ts)
        self.ts = None

    async def apologise(self, text: str) -> None:
        replacing, self.ts = self.ts, None
        await self.send.post_quietly(self.place, text, replacing)
