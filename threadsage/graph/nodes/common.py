"""Small helpers the nodes share: the trace, the call budget, the thread's history, a model call
that may fail."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TypeVar

from langchain_core.messages import AIMessage, HumanMessage

from threadsage.adapters.reasoner import ModelBusy
from threadsage.graph.state import ConversationState, Step

log = logging.getLogger(__name__)
T = TypeVar("T")


def traced(state: ConversationState, node: str, detail: str, **scores: float) -> list[Step]:
    step = Step(node=node, detail=detail, hop=state.get("hops", 0))
    if scores:
        step["scores"] = {k: round(v, 3) for k, v in scores.items()}
    return [*state.get("trace", []), step]


def history(state: ConversationState) -> list[tuple[str, str]]:
    """Earlier turns as (role, text), without the question being asked now."""
    turns = []
    for message in state.get("messages", [])[:-1]:
        if isinstance(message, HumanMessage):
            turns.append(("user", str(message.content)))
        elif isinstance(message, AIMessage):
            turns.append(("assistant", str(message.content)))
    return turns


def calls(state: ConversationState, n: int = 1) -> int:
    return state.get("llm_calls", 0) + n


async def attempted(call: Awaitable[T], step: str) -> T | None:
    """The model's result, or None when the call failed in any way (a timeout, an error after its
    retries, a reply that could not be used): every model-dependent step has a fallback, and the
    apology is left for a turn where nothing at all can be said. A spent per-minute budget is no
    failure of the step: the turn ends with the "busy" notice."""
    try:
        return await call
    except ModelBusy:
        raise
    except Exception as exc:  # noqa: BLE001 - the caller falls back; the trace and the log say why
        log.warning("%s failed (%s): falling back", step, exc.__class__.__name__)
        return None
