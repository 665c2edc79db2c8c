"""The rerank step of standard retrieval: a wider pool of fused candidates, reordered, the best kept.

Runs at the start of `generate`, before the answer grades its passages (seed 000: HOW_TO = hybrid
+ rerank, top 5). The passages already
found come first in the pool, so a reranker that fails leaves them where they were; a passage the
person pinned by choosing a clarification option stays first whatever the reranker thinks.
A reranker that costs a model call runs only when the budget still leaves room for answering and
judging after it.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.rerank import rerank
from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.common import calls, traced
from threadsage.graph.nodes.evidence import search
from threadsage.graph.state import ConversationState

AFTER_RERANK = 2  # generate (which grades its passages), judge


async def reranked(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """The state update of a rerank (nothing when no reranker applies to this route)."""
    ctx = runtime.context
    reranker = ctx.reranker
    if reranker is None or state.get("route") != "standard_retrieval" or not state.get("documents"):
        return {}
    if reranker.model_calls and calls(state, reranker.model_calls + AFTER_RERANK) > ctx.policy.llm_budget:
        return {"trace": traced(state, "rerank", "skipped: the model calls left are needed for the answer")}
    wider = await search(state, ctx, state["search_query"], ctx.policy.rerank_candidates, state.get("focus") or None)
    pool = _unique([*state.get("documents", []), *wider])
    ordered, note = await rerank(reranker, state["standalone"], pool)
    if pinned := state.get("pinned"):
        ordered = [pinned, *(p for p in ordered if p["id"] != pinned["id"])]
    return {
        "documents": ordered[: ctx.policy.rerank_keep],
        "llm_calls": calls(state, reranker.model_calls),
        "trace": traced(state, "rerank", note),
    }


def _unique(passages: list[Passage]) -> list[Passage]:
    """The first of each passage, in order."""
    first: dict[str, Passage] = {}
    for p in passages:
        first.setdefault(p["id"], p)
    return list(first.values())
