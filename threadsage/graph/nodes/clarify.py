"""Pause the thread and ask the person which meaning they intended.

LangGraph re-runs this node from the top when the thread is resumed, so nothing before
`interrupt()` may have side effects: it only reads the state.
"""

from __future__ import annotations

from langgraph.types import interrupt

from threadsage.graph.nodes.common import traced
from threadsage.graph.state import ClarificationRequest, ConversationState


def clarify(state: ConversationState) -> ConversationState:
    decision = state["decision"]
    options = decision["clarify_options"]
    reply = interrupt(
        ClarificationRequest(
            prompt=decision["clarify_prompt"],
            options=options,
            asker=state.get("asker", ""),
            question=state["standalone"],
            turn=state.get("turn_id", ""),
        )
    )
    choice = chosen_text(reply, options)
    source = decision["clarify_sources"][options.index(choice)] if choice in options else None
    return {
        "standalone": f"{state['standalone']} ({choice})",
        "focus": [source["path"]] if source else [],
        "pinned": source,
        "unpicked": [] if choice in options else options,
        "clarify_rounds": state.get("clarify_rounds", 0) + 1,
        "trace": traced(state, "clarify", f"answered: {choice[:120]}"),
    }


def chosen_text(reply: object, options: list[str]) -> str:
    """The resume value is {"option": index} for a button or {"text": ...} for a typed answer."""
    if isinstance(reply, dict):
        option = reply.get("option")
        if isinstance(option, int) and 0 <= option < len(options):
            return options[option]
        text = str(reply.get("text") or "").strip()
        if text.isascii() and text.isdigit() and 1 <= int(text) <= len(options):
            return options[int(text) - 1]  # "2" typed in the thread picks the second option
        if text:
            return text
    raise ValueError(f"not an answer to this clarification: {reply!r}")
