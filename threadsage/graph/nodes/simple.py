"""Strategies that need no retrieval: small talk, and the polite refusal."""

from __future__ import annotations

from langgraph.runtime import Runtime

from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.common import attempted, calls, history, traced
from threadsage.graph.state import ConversationState
from threadsage.i18n import language_of, say


async def direct_reply(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """Small talk; if the model fails, the offline back-end's canned reply in the asker's language."""
    earlier = history(state)
    answer = await attempted(runtime.context.reasoner.chat(state["question"], earlier), "small talk")
    note = "no retrieval" if answer else "model failed: the canned reply"
    return {
        "answer": answer or await OfflineReasoner().chat(state["question"], earlier),
        "documents": [],
        "confidence": state["decision"]["confidence"],
        "llm_calls": calls(state),
        "trace": traced(state, "direct_reply", note),
    }


def fallback(state: ConversationState) -> ConversationState:
    return {
        "answer": say("refusal", language_of(state["question"])),
        "documents": [],
        "confidence": state["decision"]["confidence"],
        "trace": traced(state, "fallback", "out of scope"),
    }
