"""The steps a turn passes, as people would name them, and a run of the graph that reports them.

A front-end that shows progress learns only these three steps, never the graph's node names: the
graph can change without any front-end noticing. A step may come with a detail in words: each
step of a deep search reports which sub-question it is looking up ("step 2: …").
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from functools import wraps
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from threadsage.graph.drafts import Drafts, run_drafting


class Step(StrEnum):
    SEARCHING = "searching"
    CHECKING = "checking"
    WRITING = "writing"


# The step each node belongs to; the other (compose) changes nothing people see. `clarify` asks,
# and on resume routes the restated question: a search.
STEP_OF_NODE: dict[str, Step] = {
    "understand": Step.SEARCHING,
    "route": Step.SEARCHING,
    "clarify": Step.SEARCHING,
    "retrieve": Step.SEARCHING,
    "rewrite": Step.SEARCHING,
    "plan": Step.SEARCHING,
    "execute": Step.SEARCHING,
    "replan": Step.SEARCHING,
    "web": Step.SEARCHING,
    "judge": Step.CHECKING,
    "generate": Step.WRITING,
    "direct_reply": Step.WRITING,
    "fallback": Step.WRITING,
    "settle": Step.WRITING,
    "synthesise": Step.WRITING,
}


@dataclass(frozen=True)
class Found:
    """What the search before a step found: its passages, and the documents they are in (title, and
    link: the document's web address, else its source) in the order they rank."""

    passages: int
    documents: tuple[tuple[str, str], ...]


# The nodes that start once a search has found something: what it found is reported with them.
AFTER_A_SEARCH = frozenset({"judge", "generate", "execute", "synthesise"})


def found_of(node: str, state: Any) -> Found | None:
    """The passages the search just done found (a deep search's step: its own), as `node` starts."""
    if node not in AFTER_A_SEARCH or not isinstance(state, dict):
        return None
    findings = state.get("findings") or []
    passages = findings[-1]["passages"] if node in ("execute", "synthesise") and findings else state.get("documents")
    if node == "execute" and not findings:
        return None  # the deep search's first step: nothing looked up yet
    if not passages:
        return None
    documents = dict.fromkeys((p.get("title") or p["path"], p.get("url") or p["source"]) for p in passages)
    return Found(len(passages), tuple(documents))


def detail_of(node: str, state: Any) -> str:
    """What a node starting on `state` is about, when people would want to know."""
    if node == "execute" and isinstance(state, dict) and state.get("sub_questions"):
        return f"step {len(state.get('findings') or []) + 1}: {state['sub_questions'][0][:100]}"
    return ""


# The reporter of the run in progress: set by `run_reporting`, called by the nodes' wrapper.
Report = Callable[[Step, str, Found | None], None]
_reporter: ContextVar[Report | None] = ContextVar("threadsage_steps", default=None)


def reported(name: str, node: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """Node `name` as a coroutine function that first tells the run's reporter (if any) it starts.

    Nodes report themselves rather than the run being streamed (`stream_mode=["tasks",
    "values"]`, which copies the state at every step for the caller). A plain function becomes a
    coroutine function too: LangGraph would run it in a thread, a hop per call for work of
    microseconds that never waits."""
    step = STEP_OF_NODE.get(name)

    @wraps(node)
    async def run(state: Any, *args: Any, **kwargs: Any) -> Any:
        report = _reporter.get()
        if step is not None and report is not None:
            report(step, detail_of(name, state), found_of(name, state))
        result = node(state, *args, **kwargs)
        return await result if inspect.isawaitable(result) else result

    return run


async def run_reporting(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    context: Any,
    report: Report | None,
    drafts: Callable[[str], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """What `graph.ainvoke` returns (the final state, with `__interrupt__` when the run paused),
    calling `report` each time a node of a new step (or with a new detail, or after a search that
    found something) starts, and `drafts` (when given) with the answer's words as they are written
    (drafts.py)."""
    current: tuple[Step, str] | None = None

    def on_node(step: Step, detail: str, found: Found | None) -> None:
        nonlocal current
        if (step, detail) != current or found is not None:
            current = (step, detail)
            report(step, detail, found)  # type: ignore[misc]

    token = _reporter.set(None if report is None else on_node)
    try:
        if drafts is not None:
            return await run_drafting(graph, graph_input, config, context, Drafts(drafts), **options)
        return cast(dict[str, Any], await graph.ainvoke(graph_input, config, context=context, **options))
    finally:
        _reporter.reset(token)
