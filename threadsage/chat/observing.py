"""What watches turns go by without taking part in them: the console's record of each turn
(`recording.Recording`) and the clarification metrics (`ClarificationCounts`). The chat service
tells every observer the same moments of a turn — it began, its run ended (or paused to ask), it
answers a pending clarification, it ended (or was handed back), a vote, a clarification dropped —
and knows nothing of what they do with them."""

from __future__ import annotations

from typing import Any

from langgraph.types import Interrupt

from threadsage.chat.turns import Reply, Turn
from threadsage.observability.telemetry import CLARIFICATIONS


class TurnObserver:
    """An observer hears of every moment and keeps what it wants; each moment does nothing here."""

    def begin(self, turn: Turn) -> None:
        """A turn starts."""

    def ran(self, turn: Turn, state: dict[str, Any]) -> None:
        """The graph's state when the turn's run ended (or paused to ask: `__interrupt__`)."""

    def answering(self, turn: Turn, pending: Interrupt, option: int | None, label: str) -> None:
        """The turn answers the clarification `pending`: by option `option`, or in words."""

    def discard(self, turn: Turn) -> None:
        """The turn did not end here (handed back to the queue, or its stream closed early)."""

    async def end(self, turn: Turn, replies: list[Reply], outcome: str) -> None:
        """The turn ended with `replies`; `outcome` as the service reported it."""

    async def voted(self, session_key: str, answer_ref: str) -> None:
        """A 👍/👎 on the answer `answer_ref` names."""

    async def abandoned(self, platform: str, session_key: str, pending: Interrupt) -> None:
        """A pending clarification was dropped unanswered."""


class ClarificationCounts(TurnObserver):
    """`threadsage_clarifications_total`: clarifications asked, answered and abandoned, by platform."""

    def ran(self, turn: Turn, state: dict[str, Any]) -> None:
        if state.get("__interrupt__"):
            CLARIFICATIONS.labels(turn.platform, "asked").inc()

    def answering(self, turn: Turn, pending: Interrupt, option: int | None, label: str) -> None:
        CLARIFICATIONS.labels(turn.platform, "answered").inc()

    async def abandoned(self, platform: str, session_key: str, pending: Interrupt) -> None:
        CLARIFICATIONS.labels(platform, "abandoned").inc()
