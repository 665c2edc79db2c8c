"""Strategies that need no retrieval: small talk, and the polite refusal."""

from __future__ import annotations

from langgraph.runtime import Runtime

from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.common import calls, history, traced
from threadsage.graph.state import ConversationState
from threadsage.i18n import language_of, say


async def direct_reply(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    answer = await runtime.context.reasoner.chat(state["question"], history(state))
    return {
        "answer": answer,
        "documents": [],
        "confidence": state["decision"]["confidence"],
        "llm_calls": calls(state),
        "trace": traced(state, "direct_reply", "no retrieval"),
    }


def fallback(state: ConversationState) -> ConversationState:
    return {
        "answer": say("refusal", language_of(state["question"])),
        "documents": [],
        "confidence": state["decision"]["confidence"],
        "trace": traced(state, "fallback", "out of scope"),
    }
