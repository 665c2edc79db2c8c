"""The chat service's side of the turn record (`threadsage.records.turns`): what it learns of
each turn in flight — the graph's final state, the clarification answered — gathered under the
turn's (session, message) and written once when the turn ends. Without a store it does nothing.

A failure to record is logged and never reaches the person: the answer matters more than its row.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from langgraph.types import Interrupt

from threadsage.chat.observing import TurnObserver
from threadsage.chat.replies import answers_from_documents, outcome_of, request_of
from threadsage.chat.turns import Reply, Turn, turn_ref
from threadsage.delivery.current import redelivered
from threadsage.records.turns import Answered, QuestionStore, TurnRecord, outcome_of_turn

log = logging.getLogger(__name__)


@dataclass
class Recording(TurnObserver):
    store: QuestionStore | None = None
    _open: dict[tuple[str, str], TurnRecord] = field(default_factory=dict)

    def begin(self, turn: Turn) -> None:
        """Start gathering a turn's facts: questions and clarification answers, not files alone."""
        if self.store is not None and ((turn.text or "").strip() or turn.answer is not None):
            question = (turn.text or "").strip()
            self._open[(turn.session_key, turn.message_id)] = TurnRecord(
                turn.session_key,
                turn.message_id,
                turn.platform,
                turn.user_id,
                turn_ref(turn.message_id),
                question,
                turn.categories,
                started=time.monotonic(),
                redelivered=redelivered(),
            )

    def ran(self, turn: Turn, state: dict[str, Any]) -> None:
        """The graph's state when the turn's run ended (or paused to ask)."""
        if record := self._open.get((turn.session_key, turn.message_id)):
            record.state = state

    def answering(self, turn: Turn, pending: Interrupt, option: int | None, label: str) -> None:
        """The turn answers the clarification `pending`: by option `option`, or in words."""
        if record := self._open.get((turn.session_key, turn.message_id)):
            record.answered = Answered(request_of(pending).get("turn", ""), option, label)

    def discard(self, turn: Turn) -> None:
        """Forget a turn that did not end here: its redelivery records it, and nothing is kept for it."""
        self._open.pop((turn.session_key, turn.message_id), None)

    async def end(self, turn: Turn, replies: list[Reply], outcome: str) -> None:
        """Write the turn's row; `outcome` is what the service reported (a duplicate is not a turn)."""
        record = self._open.pop((turn.session_key, turn.message_id), None)
        if record is None or self.store is None or outcome == "duplicate":
            return
        if replies:
            first = replies[0]
            record.outcome = outcome_of_turn(
                first.kind.value, first.route, answers_from_documents(first), first.low_confidence, outcome_of(replies)
            )
        else:
            record.outcome = "refused" if outcome == "rate_limited" else "error"
        record.latency_ms = int((time.monotonic() - record.started) * 1000)
        try:
            await self.store.record(record)
        except Exception:
            log.exception("could not record turn %s for the console", turn.message_id)

    async def voted(self, session_key: str, answer_ref: str) -> None:
        """A 👍/👎 was given on the answer `answer_ref` names: its row counts it."""
        if self.store is None:
            return
        try:
            await self.store.voted(session_key, answer_ref)
        except Exception:
            log.exception("could not count a vote into the console's record")

    async def abandoned(self, platform: str, session_key: str, pending: Interrupt) -> None:
        """A pending clarification was dropped unanswered."""
        if self.store is None:
            return
        try:
            await self.store.abandoned(session_key, request_of(pending).get("turn", ""))
        except Exception:
            log.exception("could not record an abandoned clarification")
