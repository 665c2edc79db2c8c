"""The replies a finished (or paused) run of the graph gives, and the outcome label of a turn.

A reply is in the language of the question it answers. An answer that cites nothing on a route
that searched the documents (the fallback, or "the documents don't cover this"), or that quotes
the closest passage as possibly not answering, carries the hand-off contact: the one configured
for the category nearest the question (the place's only category, or the category of the best
search hit), else the `*` entry."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

from langgraph.types import Interrupt, StateSnapshot

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.questions.asking import asks_anew
from threadsage.chat.turns import Choice, Reply, ReplyKind, fixed_notice
from threadsage.graph.state import ClarificationRequest
from threadsage.i18n import language_of, opens_as
from threadsage.observability.telemetry import ERRORS
from threadsage.support.handoff import Contact, Handoff

log = logging.getLogger(__name__)

OUTCOMES = {"rate_limited": "rate_limited", "apology": "error", "busy": "busy"}
# Routes whose answer does not come from the documents by design: small talk, asking back, a tool, the web.
NO_HANDOFF_ROUTES = ("direct_reply", "clarify_needed", "tools", "web_search")


def pending_of(snapshot: StateSnapshot) -> Interrupt | None:
    """The clarification a session's run is paused on, if any."""
    return snapshot.interrupts[0] if snapshot.interrupts else None


def answers_pending(request: ClarificationRequest, user_id: str, text: str, anyone: bool) -> bool:
    """Whether `text`, typed by `user_id`, answers the clarification waiting: the asker's words (or
    anyone's, with `anyone`), and not a new question naming none of its options (`asks_anew`)."""
    return (anyone or request["asker"] == user_id) and not asks_anew(text, request["options"])


def request_of(pending: Interrupt) -> ClarificationRequest:
    return cast(ClarificationRequest, pending.value)


def outcome_of(replies: list[Reply]) -> str:
    """The `outcome` label of a turn's replies (see threadsage_turns_total)."""
    if not replies:
        return "duplicate"
    reply = replies[0]
    if reply.kind is not ReplyKind.NOTICE:
        return reply.kind.value
    return OUTCOMES.get(reply.fixed, "notice")


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
        language=language_of(request["question"]),
    )


def answer_reply(state: dict[str, Any], handoff: Contact | None = None) -> Reply:
    language = language_of(state.get("question"))
    if not state.get("answer", "").strip():
        # A bug upstream (or a model returning nothing): never post an empty message.
        log.error("the %s route produced an empty answer; apologising instead", state.get("route"))
        ERRORS.labels("empty_answer").inc()
        return fixed_notice("apology", language)
    return Reply(
        kind=ReplyKind.ANSWER,
        text=state["answer"],
        citations=tuple(state.get("citations", [])),
        confidence=state.get("confidence"),
        low_confidence=state.get("low_confidence", False),
        route=state.get("route"),
        trace=tuple(state.get("trace", [])),
        language=language,
        handoff=handoff,
    )


def quotes_the_closest(answer: str) -> bool:
    """Whether an answer is the closest passage quoted as possibly not answering (in the asker's
    language or another)."""
    return opens_as("closest_passage", answer) or opens_as("closest_in_other_language", answer)


def answers_from_documents(reply: Reply) -> bool:
    """Whether a reply answers from the documents: it cites them, and not as the closest passage
    that may not answer (that is a gap the knowledge loop shows, as a refusal is)."""
    return bool(reply.citations) and not quotes_the_closest(reply.text)


def not_covered(state: dict[str, Any]) -> bool:
    """The documents did not answer: a route that searched them ended citing nothing, or quoting
    the closest passage as possibly not answering (the offline answerer, unsure)."""
    unanswered = not state.get("citations") or quotes_the_closest(state.get("answer", ""))
    return state.get("route") not in (None, *NO_HANDOFF_ROUTES) and unanswered


async def handoff_contact(
    handoff: Handoff, kb: KnowledgeBase, state: dict[str, Any], categories: Sequence[str] | None
) -> Contact | None:
    """Whom a question the documents did not cover is pointed to (None: nobody configured)."""
    if not handoff or not not_covered(state):
        return None
    if categories is not None and len(categories) == 1:
        return handoff.for_category(categories[0])
    hits = await kb.search(state.get("standalone") or state.get("question", ""), 1, categories)
    return handoff.for_category(hits[0].category if hits else None)


async def answered(handoff: Handoff, kb: KnowledgeBase, state: dict[str, Any]) -> Reply:
    """The answer a finished run gives, with its hand-off contact: the same reply whether the turn
    is delivered for the first time or again (see `redelivery`)."""
    return answer_reply(state, await handoff_contact(handoff, kb, state, state.get("categories")))
