"""The steps a turn passes, as people would name them, and a run of the graph that reports them.

A front-end that shows progress learns only these three steps, never the graph's node names: the
graph can change without any front-end noticing.
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


# The step each node belongs to; the others (begin, clarify, compose) change nothing people see.
STEP_OF_NODE: dict[str, Step] = {
    "contextualise": Step.SEARCHING,
    "route": Step.SEARCHING,
    "retrieve": Step.SEARCHING,
    "rewrite": Step.SEARCHING,
    "plan": Step.SEARCHING,
    "execute": Step.SEARCHING,
    "replan": Step.SEARCHING,
    "web": Step.SEARCHING,
    "grade": Step.CHECKING,
    "judge": Step.CHECKING,
    "generate": Step.WRITING,
    "direct_reply": Step.WRITING,
    "fallback": Step.WRITING,
    "settle": Step.WRITING,
    "synthesise": Step.WRITING,
}


async def run_reporting(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    context: Any,
    report: Callable[[Step], None] | None,
    **options: Any,
) -> dict[str, Any]:
    """What `graph.ainvoke` returns (the final state, with `__interrupt__` when the run paused),
    calling `report` each time a node of a new step starts. Without `report` it is `ainvoke`."""
    if report is None:
        return cast(dict[str, Any], await graph.ainvoke(graph_input, config, context=context, **options))
    latest: dict[str, Any] = {}
    interrupts: list[Any] = []
    current: Step | None = None
    parts = graph.astream(
        graph_input, config, context=context, stream_mode=["tasks", "values"], version="v2", **options
    )
    async for part in parts:
        if part["type"] == "values":
            latest = part["data"]
            interrupts.extend(part.get("interrupts", ()))
        elif part["type"] == "tasks" and "input" in part["data"]:  # a node starting (its end has "result")
            step = STEP_OF_NODE.get(part["data"]["name"])
            if step is not None and step is not current:
                current = step
                report(step)
    return {**latest, "__interrupt__": interrupts} if interrupts else latest
