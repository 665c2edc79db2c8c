"""Start a new question: remember it in the thread and clear what the last turn left behind.

The input of a run is only a `TurnInput`; everything else in the state that describes a turn is
reset here, so no caller has to know the state's fields.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from threadsage.graph.state import ConversationState


def begin(state: ConversationState) -> ConversationState:
    question = state["question"]
    return {
        "messages": [HumanMessage(content=question)],
        "standalone": question,
        "route": "",
        "clarify_rounds": 0,
        "focus": [],
        "pinned": None,
        "unpicked": [],
        "search_query": question,
        "documents": [],
        "sub_questions": [],
        "findings": [],
        "replans": 0,
        "answer": "",
        "best_answer": "",
        "best_score": -1.0,
        "best_documents": [],
        "hops": 0,
        "llm_calls": 0,
        "confidence": 0.0,
        "low_confidence": False,
        "unchecked": False,
        "citations": [],
        "trace": [],
    }
