"""The conversation graph: nodes, explicit path maps, and the brakes on every loop.

begin → contextualise → route ─┬─ clarify ──(resume)──→ route            (≤ max_clarify_rounds)
                               ├─ direct_reply ───────────────→ compose
                               ├─ fallback ───────────────────→ compose
                               ├─ fast_retrieval ─→ generate ─→ compose
                               ├─ standard_retrieval ─→ grade ─→ generate ─→ judge ─┬→ compose
                               ├─ code_search ─→ retrieve ─┘          ↑             ├→ rewrite → retrieve
                               └─ deep_search ─→ plan → research ─→ grade            └→ settle → compose
                                                                     (≤ max_hops, ≤ llm_budget)
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.begin import begin
from threadsage.graph.nodes.clarify import clarify
from threadsage.graph.nodes.compose import compose
from threadsage.graph.nodes.retrieval import (
    after_generate,
    after_grade,
    after_judge,
    generate,
    grade,
    judge,
    plan,
    research,
    retrieve,
    rewrite,
    settle,
)
from threadsage.graph.nodes.simple import direct_reply, fallback
from threadsage.graph.nodes.understand import contextualise, route
from threadsage.graph.state import ConversationState, TurnInput


def strategy(state: ConversationState) -> str:
    return state["decision"]["strategy"]


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[ConversationState, BrainContext, TurnInput, ConversationState]:
    graph = StateGraph(ConversationState, input_schema=TurnInput, context_schema=BrainContext)
    graph.add_node("begin", begin)
    graph.add_node("contextualise", contextualise)
    graph.add_node("route", route)
    graph.add_node("clarify", clarify)
    graph.add_node("direct_reply", direct_reply)
    graph.add_node("fallback", fallback)
    graph.add_node("retrieve", retrieve)
    graph.add_node("grade", grade)
    graph.add_node("generate", generate)
    graph.add_node("judge", judge)
    graph.add_node("rewrite", rewrite)
    graph.add_node("settle", settle)
    graph.add_node("plan", plan)
    graph.add_node("research", research)
    graph.add_node("compose", compose)

    graph.add_edge(START, "begin")
    graph.add_edge("begin", "contextualise")
    graph.add_edge("contextualise", "route")
    graph.add_conditional_edges(
        "route",
        strategy,
        {
            "clarify_needed": "clarify",
            "direct_reply": "direct_reply",
            "fallback": "fallback",
            "fast_retrieval": "generate",  # answers from the router's evidence
            "standard_retrieval": "grade",  # the router's evidence is the first hop's retrieval
            "code_search": "retrieve",
            "deep_search": "plan",
        },
    )
    graph.add_edge("clarify", "route")
    graph.add_edge("plan", "research")
    graph.add_edge("research", "grade")
    graph.add_edge("retrieve", "grade")
    graph.add_conditional_edges(
        "grade", after_grade, {"generate": "generate", "rewrite": "rewrite", "settle": "settle"}
    )
    graph.add_conditional_edges("generate", after_generate, {"judge": "judge", "finish": "compose"})
    graph.add_conditional_edges("judge", after_judge, {"finish": "compose", "rewrite": "rewrite", "settle": "settle"})
    graph.add_edge("rewrite", "retrieve")
    graph.add_edge("settle", "compose")
    graph.add_edge("direct_reply", "compose")
    graph.add_edge("fallback", "compose")
    graph.add_edge("compose", END)
    return graph.compile(checkpointer=checkpointer)


__all__ = ["BrainContext", "build_graph"]
