"""The events of a turn's run on their way to a front-end: steps and drafts, in order, with a
draft still waiting replaced by the newer one that extends it — a front-end slower than the model
(Slack edits a message about once a second) gets the newest words, not a backlog of them.

The run reports to the listener of its task (`reporters`, a context variable that `reported` sets
for the task it starts), so that the graph's nodes need no handle on the stream."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from threadsage.chat.turns import Draft, Progress, Reply
from threadsage.graph.steps import Found, Report, Step
from threadsage.i18n import Language

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


@dataclass(frozen=True)
class _Listener:
    """Where the run of the current turn reports its steps (and its drafts, when wanted)."""

    put: Callable[[RunEvent], None]
    drafts: bool


# Set by `reported` for the task running the turn.
_listener: ContextVar[_Listener | None] = ContextVar("threadsage_listener", default=None)


def reporters(language: Language) -> tuple[Report | None, Callable[[str], None] | None]:
    """What the current turn's run calls with each step it enters and with each draft: (None, None)
    where nobody listens, no draft function where drafts were not asked for."""
    listener = _listener.get()
    if listener is None:
        return None, None

    def step(step: Step, detail: str, found: Found | None) -> None:
        listener.put(Progress(step, detail, language, found))

    def draft(text: str) -> None:
        listener.put(Draft(text, language))

    return step, draft if listener.drafts else None


async def reported(work: Coroutine[Any, Any, list[Reply]], drafts: bool) -> AsyncIterator[RunEvent | Reply]:
    """The steps `work`'s run enters and (when `drafts`) the answer's words as they are written,
    then its replies. The run goes on in a task of its own: showing a step or a draft never holds
    it up; the task is cancelled when the front-end stops listening."""
    events = RunEvents()
    token = _listener.set(_Listener(events.put, drafts))
    try:
        task = asyncio.ensure_future(work)  # the task copies this context, the listener included
    finally:
        _listener.reset(token)
    task.add_done_callback(lambda _: events.put(None))
    try:
        while (event := await events.get()) is not None:
            yield event
        for reply in task.result():
            yield reply
    finally:
        if not task.done():  # the front-end stopped listening
            task.cancel()
            await asyncio.wait([task])
