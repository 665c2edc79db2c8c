"""The conversation graph: nodes, explicit path maps, and the brakes on every loop.

understand ────────────────────┬─ (arithmetic or dates only) ─────────────→ compose
        (a follow-up) ─────────┼─ route ─┬─ clarify (+ route, on resume) → a strategy below (≤ max_clarify_rounds)
        (a first question) ────┴─────────┤  (routed within understand: the same strategies)
                                         ├─ direct_reply (+ compose) ─────────────→ end
                                         ├─ fallback ─┬─ (web search on) web ─┬→ compose
                                         │            └──────────────────────┴→ fallback (+ compose)
                                         ├─ fast_retrieval ─→ generate (+ compose) → end
                                         ├─ standard_retrieval ───────→ generate ─┬→ judge ─┬→ (+ compose) → end
                                         ├─ code_search ─→ retrieve ─┘            ├─────────┼→ rewrite → retrieve
                                         │                                        └─────────┴→ settle (+ compose)
                                         │       (generate reports the passages its answer relies on; none: no judge)
                                         │                          (≤ max_hops, ≤ llm_budget)
                                         └─ deep_search ─→ plan → execute ─┬→ execute (the next step)
                                                                 ↑         ├→ replan ─┘
                                                                 └─────────┴→ synthesise (+ compose)
                                                 (≤ deep_max_steps, ≤ deep_max_replans, ≤ deep_budget)

understand is begin → contextualise → tools in one step, and → route too when contextualise made no
model call (a first question): a step is a checkpoint, and a step makes at most one model call.
"(+ compose)", "(+ route)": the next function runs in the node's own step (`followed_by`; generate
and judge compose when they finish the turn); every path ends after compose; a clarification
answered is routed again, to the same strategies.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Hashable
from functools import cache, wraps
from typing import Any, ParamSpec, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.clarify import clarify
from threadsage.graph.nodes.compose import compose
from threadsage.graph.nodes.deep import after_execute, execute, next_step, plan, replan, synthesise
from threadsage.graph.nodes.retrieval import (
    after_generate,
    after_judge,
    generate,
    judge,
    retrieve,
    rewrite,
    settle,
)
from threadsage.graph.nodes.simple import direct_reply, fallback
from threadsage.graph.nodes.tools import after_web, web
from threadsage.graph.nodes.understand import route, understand
from threadsage.graph.state import ConversationState, TurnInput
from threadsage.graph.steps import reported

P = ParamSpec("P")
R = TypeVar("R")


def async_edge(function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """A conditional edge's function as a coroutine function. LangGraph runs a plain function of a
    graph run with `ainvoke` in a thread: a hop per call, for work that never waits, and the hops
    showed in a worker's profile (docs/performance.md, "Checkpoints and round trips a turn",
    "No thread per plain function")."""

    @wraps(function)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return function(*args, **kwargs)

    return run


def strategy(state: ConversationState, runtime: Runtime[BrainContext]) -> str:
    """The decided strategy; out-of-scope questions go to the web first when a web search is configured."""
    chosen = state["decision"]["strategy"]
    return "web" if chosen == "fallback" and runtime.context.tools.web is not None else chosen


def after_understand(state: ConversationState, runtime: Runtime[BrainContext]) -> str:
    """Answered by a tool; or routed already (a first question: `understand` cleared the last
    turn's route and set this one's); or a follow-up, to `route`."""
    route = state.get("route")
    if route == "tools":
        return "answered"
    return strategy(state, runtime) if route else "route"


def followed_by(
    node: Callable[..., Any], then: Callable[..., Any], when: Callable[..., str] | None = None
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """`node`, then `then` on the state it leaves, as one step — with `when` (the node's outgoing
    edge), only when it says "finish", which then maps to the end. A step is a checkpoint, and
    one of its own buys nothing where `then` makes no model call (a crash within the step repeats
    at most `node`'s one). So: compose after a node that ends the turn (direct_reply, fallback,
    settle, synthesise; generate and judge when they finish it), and route after a clarification
    is answered."""
    runtimes = [len(inspect.signature(f).parameters) > 1 for f in (node, then)]

    async def run(state: ConversationState, runtime: Runtime[BrainContext]) -> dict[str, Any]:
        update: dict[str, Any] = {}
        for function, takes_runtime in zip((node, then), runtimes, strict=True):
            current = {**state, **update}
            if function is then and when is not None and when(current, runtime) != "finish":
                break
            result = function(current, runtime) if takes_runtime else function(current)
            update = {**update, **(await result if inspect.isawaitable(result) else result)}
        return update

    run.__name__ = node.__name__
    return run


# Where each strategy goes, from `route`, `understand` and `clarify`.
STRATEGIES: dict[Hashable, str] = {
    "clarify_needed": "clarify",
    "direct_reply": "direct_reply",
    "fallback": "fallback",
    "web": "web",
    "fast_retrieval": "generate",  # answers from the router's evidence
    "standard_retrieval": "generate",  # the router's evidence is the first hop's retrieval
    "code_search": "retrieve",
    "deep_search": "plan",
}

NODES: dict[str, Callable[..., Any]] = {
    "understand": understand,
    "route": route,
    "clarify": followed_by(clarify, route),
    "direct_reply": followed_by(direct_reply, compose),
    "fallback": followed_by(fallback, compose),
    "retrieve": retrieve,
    "generate": followed_by(generate, compose, when=after_generate),
    "judge": followed_by(judge, compose, when=after_judge),
    "rewrite": rewrite,
    "settle": followed_by(settle, compose),
    "web": web,
    "plan": plan,
    "execute": execute,
    "replan": replan,
    "synthesise": followed_by(synthesise, compose),
    "compose": compose,
}


Graph = CompiledStateGraph[ConversationState, BrainContext, TurnInput, ConversationState]


def build_graph(checkpointer: BaseCheckpointSaver[Any] | None = None) -> Graph:
    """The graph saving its steps with `checkpointer`: one compiled graph a process, each caller
    given a copy holding its own checkpointer (`Pregel.copy`, as LangGraph's `with_config` makes
    one). Compiling costs about 20 ms of CPU (every node's signature, type hints and closure are
    read), paid by each chat service a test opens."""
    return _compiled().copy(update={"checkpointer": checkpointer})


@cache
def _compiled() -> Graph:
    graph = StateGraph(ConversationState, input_schema=TurnInput, context_schema=BrainContext)
    for name, node in NODES.items():
        graph.add_node(name, reported(name, node))

    graph.add_edge(START, "understand")
    graph.add_conditional_edges(
        "understand", async_edge(after_understand), {"answered": "compose", "route": "route", **STRATEGIES}
    )
    graph.add_conditional_edges("route", async_edge(strategy), STRATEGIES)
    graph.add_conditional_edges("clarify", async_edge(strategy), STRATEGIES)
    graph.add_conditional_edges("plan", async_edge(next_step), {"execute": "execute", "synthesise": "synthesise"})
    graph.add_conditional_edges(
        "execute", async_edge(after_execute), {"execute": "execute", "replan": "replan", "synthesise": "synthesise"}
    )
    graph.add_conditional_edges("replan", async_edge(next_step), {"execute": "execute", "synthesise": "synthesise"})
    graph.add_edge("synthesise", END)
    graph.add_conditional_edges("web", async_edge(after_web), {"answered": "compose", "fallback": "fallback"})
    graph.add_edge("retrieve", "generate")
    graph.add_conditional_edges(
        "generate",
        async_edge(after_generate),
        {"judge": "judge", "finish": END, "rewrite": "rewrite", "settle": "settle"},
    )
    graph.add_conditional_edges(
        "judge", async_edge(after_judge), {"finish": END, "rewrite": "rewrite", "settle": "settle"}
    )
    graph.add_edge("rewrite", "retrieve")
    graph.add_edge("settle", END)
    graph.add_edge("direct_reply", END)
    graph.add_edge("fallback", END)
    graph.add_edge("compose", END)
    return graph.compile()


__all__ = ["BrainContext", "build_graph"]
