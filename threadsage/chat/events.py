"""The events of a turn's run on their way to a front-end: steps and drafts, in order, with a
draft still waiting replaced by the newer one that extends it — a front-end slower than the model
(Slack edits a message about once a second) gets the newest words, not a backlog of them."""

from __future__ import annotations

import asyncio
from collections import deque

from threadsage.chat.turns import Draft, Progress

RunEvent = Progress | Draft


class RunEvents:
    def __init__(self) -> None:
        self._waiting: deque[RunEvent | None] = deque()
        self._ready = asyncio.Event()

    def put(self, event: RunEvent | None) -> None:
        """Queue `event` (None: the run has ended)."""
        last = self._waiting[-1] if self._waiting else None
        if isinstance(event, Draft) and isinstance(last, Draft) and event.text.startswith(last.text) and last.text:
            self._waiting[-1] = event  # the newer words, which include the older ones
        else:
            self._waiting.append(event)
        self._ready.set()

    async def get(self) -> RunEvent | None:
        while not self._waiting:
            self._ready.clear()
            await self._ready.wait()
        return self._waiting.popleft()
