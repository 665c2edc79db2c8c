"""How a front-end shows a turn while it runs, and the one loop that drives it.

Every front-end met the same events of `ChatService.stream` — a clicked option accepted, the run's
steps, the answer's words as the model writes them, a click refused, the replies — and each decided
in a loop of its own what to do with them (Slack's thread, DM and panel, Telegram's private chat
and group, the terminal). Here the loop is written once (`run_shown`) and a front-end says only how
it shows each event (`Display`, as Rasa's `OutputChannel`); `Collecting` keeps them all, for tests.
The replies come back to the caller, which delivers them where its platform wants them (after an
edit of the question, say, which Slack answers again).
"""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Protocol

from threadsage.chat.service import ChatService
from threadsage.chat.turns import ACCEPTED, Draft, Progress, Reply, Turn, TurnEvent


class Display(Protocol):
    """What a front-end does with each event of a turn's run (all but the replies, which
    `run_shown` returns). A front-end that has nothing to show for one does nothing."""

    async def accepted(self) -> None:
        """A clicked option has won (once): the choice can be shown, the answer follows."""

    async def progress(self, progress: Progress) -> None:
        """The run entered a new step (searching, checking the answer…)."""

    async def draft(self, draft: Draft) -> None:
        """The answer's words so far; an empty draft withdraws what was shown."""

    async def refused(self, reply: Reply) -> bool:
        """A click that was not accepted (not the asker's, stale, a repeat, busy), with the
        notice saying why: True when shown as such (a toast, a private note), False to have it
        returned with the replies."""


async def run_shown(chat: ChatService, turn: Turn, display: Display, drafts: bool = True) -> list[Reply]:
    """The turn run through `chat`, each event shown by `display` as it comes; its replies.
    `drafts`: whether the front-end shows the answer's words as they are written (a model call
    that streams for nobody is spared). A failure of `display` stops the run at once."""
    replies: list[Reply] = []
    accepted = False
    async with aclosing(chat.stream(turn, drafts)) as events:
        async for event in events:
            if event is ACCEPTED:
                accepted = True
                await display.accepted()
            elif isinstance(event, Progress):
                await display.progress(event)
            elif isinstance(event, Draft):
                await display.draft(event)
            elif isinstance(event, Reply):
                if turn.answer is not None and not accepted and await display.refused(event):
                    continue
                replies.append(event)
    return replies


@dataclass
class Collecting:
    """A display that keeps every event it is shown (Rasa's `CollectingOutputChannel`): for tests,
    and for callers that show nothing while a turn runs."""

    events: list[TurnEvent] = field(default_factory=list)
    show_refusals: bool = False  # whether a refused click's notice is kept apart from the replies

    async def accepted(self) -> None:
        self.events.append(ACCEPTED)

    async def progress(self, progress: Progress) -> None:
        self.events.append(progress)

    async def draft(self, draft: Draft) -> None:
        self.events.append(draft)

    async def refused(self, reply: Reply) -> bool:
        if self.show_refusals:
            self.events.append(reply)
        return self.show_refusals
