"""The steps a turn passes, as people would name them, and a run of the graph that reports them.

A front-end that shows progress learns only these three steps, never the graph's node names: the
graph can change without any front-end noticing. A step may come with a detail in words: each
step of a deep search reports which sub-question it is looking up ("step 2: …").
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph


class Step(StrEnum):
    SEARCHING = "searching"
    CHECKING = "checking"
    WRITING = "writing"


# The step each node belongs to; the others (clarify, compose) change nothing people see.
STEP_OF_NODE: dict[str, Step] = {
    "understand": Step.SEARCHING,
    "route": Step.SEARCHING,
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


def detail_of(node: str, state: Any) -> str:
    """What a node starting on `state` is about, when people would want to know."""
    if node == "execute" and isinstance(state, dict) and state.get("sub_questions"):
        return f"step {len(state.get('findings') or []) + 1}: {state['sub_questions'][0][:100]}"
    return ""


async def run_reporting(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    context: Any,
    report: Callable[[Step, str], None] | None,
    **options: Any,
) -> dict[str, Any]:
    """What `graph.ainvoke` returns (the final state, with `__interrupt__` when the run paused),
    calling `report` each time a node of a new step (or a new detail) starts. Without `report` it is `ainvoke`."""
    if report is None:
        return cast(dict[str, Any], await graph.ainvoke(graph_input, config, context=context, **options))
    latest: dict[str, Any] = {}
    interrupts: list[Any] = []
    current: tuple[Step, str] | None = None
    parts = graph.astream(
        graph_input, config, context=context, stream_mode=["tasks", "values"], version="v2", **options
    )
    async for part in parts:
        if part["type"] == "values":
            latest = part["data"]
            interrupts.extend(part.get("interrupts", ()))
        elif part["type"] == "tasks" and "input" in part["data"]:  # a node starting (its end has "result")
            task = cast(dict[str, Any], part["data"])
            step = STEP_OF_NODE.get(task["name"])
            now = None if step is None else (step, detail_of(task["name"], task["input"]))
            if now is not None and now != current:
                current = now
                report(*now)
    return {**latest, "__interrupt__": interrupts} if interrupts else latest
