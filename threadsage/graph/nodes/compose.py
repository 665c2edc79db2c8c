"""Compose the turn's outcome: validated citations, the answer in the thread's memory, and the
mark that the turn is finished (what a redelivered turn goes by)."""

from __future__ import annotations

import logging
import re
from typing import Any

from langchain_core.messages import AIMessage, RemoveMessage
from langgraph.runtime import Runtime

from threadsage.adapters.reasoner import CITATION, Passage
from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.common import traced
from threadsage.graph.state import Citation, ConversationState

log = logging.getLogger(__name__)

SNIPPET_CHARS = 240


def compose(state: ConversationState, runtime: Runtime[BrainContext]) -> dict[str, Any]:
    answer, citations = validate_citations(state.get("answer", ""), state.get("documents", []))
    messages = state.get("messages", [])
    keep = runtime.context.policy.history_messages
    stale = [RemoveMessage(id=m.id) for m in messages[: max(0, len(messages) + 1 - keep)] if m.id]
    return {
        "answer": answer,
        "citations": citations,
        "topic": state.get("standalone", ""),
        "messages": [*stale, AIMessage(content=answer)],
        "finished_turn": state.get("turn_id", ""),
        "trace": traced(state, "compose", f"{len(citations)} citations"),
    }


def validate_citations(answer: str, documents: list[Passage]) -> tuple[str, list[Citation]]:
    """Keep [n] markers that point at a passage, renumbered 1.. in order of first use; drop the
    others (and log them). Returns the rewritten answer and the cited passages."""
    numbering: dict[int, int] = {}
    dropped: list[int] = []

    def renumber(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if not 1 <= n <= len(documents):
            dropped.append(n)
            return ""
        numbering.setdefault(n, len(numbering) + 1)
        return f"[{numbering[n]}]"

    text = CITATION.sub(renumber, answer)
    if dropped:
        log.warning("removed citations that point nowhere: %s", sorted(set(dropped)))
        text = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text))
    citations = [
        Citation(
            number=new,
            title=documents[old - 1]["title"],
            heading=documents[old - 1]["heading"],
            source=documents[old - 1]["source"],
            path=documents[old - 1]["path"],
            snippet=_snippet(documents[old - 1]["text"]),
            url=documents[old - 1].get("url", ""),
        )
        for old, new in numbering.items()
    ]
    return text.strip(), citations


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1].rstrip() + "…"
