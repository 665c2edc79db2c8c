"""The replies a finished (or paused) run of the graph gives, and the outcome label of a turn."""

from __future__ import annotations

import logging
from typing import Any, cast

from langgraph.types import Interrupt

from threadsage.chat.turns import APOLOGY, BUSY, RATE_LIMITED, Choice, Reply, ReplyKind, notice
from threadsage.graph.state import ClarificationRequest
from threadsage.observability import ERRORS

log = logging.getLogger(__name__)


def request_of(pending: Interrupt) -> ClarificationRequest:
    return cast(ClarificationRequest, pending.value)


def outcome_of(replies: list[Reply]) -> str:
    """The `outcome` label of a turn's replies (see threadsage_turns_total)."""
    if not replies:
        return "duplicate"
    reply = replies[0]
    if reply.kind is not ReplyKind.NOTICE:
        return reply.kind.value
    return {RATE_LIMITED: "rate_limited", APOLOGY: "error", BUSY: "busy"}.get(reply.text, "notice")


def clarification_reply(pending: Interrupt, state: dict[str, Any]) -> Reply:
    request = request_of(pending)
    return Reply(
        kind=ReplyKind.CLARIFICATION,
        text=request["prompt"],
        choices=tuple(Choice(str(i), label) for i, label in enumerate(request["options"])),
        interrupt_id=pending.id,
        route="clarify_needed",
        confidence=state.get("decision", {}).get("confidence"),
        trace=tuple(state.get("trace", [])),
    )


def answer_reply(state: dict[str, Any]) -> Reply:
    if not state.get("answer", "").strip():
        # A bug upstream (or a model returning nothing): never post an empty message.
        log.error("the %s route produced an empty answer; apologising instead", state.get("route"))
        ERRORS.labels("empty_answer").inc()
        return notice(APOLOGY)
    return Reply(
        kind=ReplyKind.ANSWER,
        text=state["answer"],
        citations=tuple(state.get("citations", [])),
        confidence=state.get("confidence"),
        low_confidence=state.get("low_confidence", False),
        route=state.get("route"),
        trace=tuple(state.get("trace", [])),
    )
