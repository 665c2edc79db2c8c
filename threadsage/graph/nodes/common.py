"""Small helpers the nodes share: the trace, the call budget, the thread's history."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from threadsage.graph.state import ConversationState, Step


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
