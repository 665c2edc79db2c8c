"""The typed state of one conversation thread.

`messages` is the thread's memory across turns (a reducer appends), and so is `attached`, the
passages of files sent in the conversation; everything else describes the current turn. A new
question comes in as a small `TurnInput`; the graph's first node, `begin`, resets the per-turn
fields, so callers never need to know them. Documents are plain dicts so that
checkpoints stay readable and portable between checkpointer back-ends.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from threadsage.adapters.documents.attachments import keep_attached
from threadsage.adapters.reasoner import Intent, Passage
from threadsage.adapters.reasoning.research import Finding

Strategy = Literal[
    "direct_reply",
    "fast_retrieval",
    "standard_retrieval",
    "deep_search",
    "code_search",
    "fallback",
    "clarify_needed",
]

INTENT_STRATEGY: dict[str, Strategy] = {
    "CHIT_CHAT": "direct_reply",
    "FACT_LOOKUP": "fast_retrieval",
    "HOW_TO": "standard_retrieval",
    "COMPARISON": "deep_search",
    "CODE_SEARCH": "code_search",
    "UNKNOWN": "fallback",
}


class Decision(TypedDict):
    intent: Intent
    confidence: float
    strategy: Strategy
    reasoning: str
    clarify_prompt: str
    clarify_options: list[str]
    clarify_sources: list[Passage | None]  # the passage each option was made from, if any


class Citation(TypedDict):
    number: int
    title: str
    heading: str
    source: str
    path: str
    snippet: str
    url: NotRequired[str]  # the document's web link, "" or absent (older checkpoints) when it has none


class ClarificationRequest(TypedDict):
    """What the clarify node's interrupt carries to the front-ends (and back, as `asker`)."""

    prompt: str
    options: list[str]
    asker: str  # who may answer (unless anyone may)
    question: str  # the question being clarified
    turn: str  # the turn that asked: a redelivery of that turn finds its clarification already asked


class TurnInput(TypedDict):
    """A new question: the graph's input schema."""

    turn_id: str  # the platform message this run serves: a retried delivery finds it
    question: str
    asker: str
    categories: list[str] | None  # the categories this place may read (None: all)
    attached: NotRequired[list[Passage]]  # passages of files sent with the question


class Step(TypedDict, total=False):
    """One entry of the per-turn trace: what a node decided and why."""

    node: str
    detail: str
    hop: int
    scores: dict[str, float]


class ConversationState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    attached: Annotated[list[Passage], keep_attached]  # files sent in this session: kept across turns
    # the turn
    turn_id: str  # the platform message or click this run serves: a retried delivery finds it
    question: str
    asker: str
    categories: list[str]
    standalone: str
    decision: Decision
    clarify_rounds: int
    focus: list[str]  # document paths the person chose in a clarification
    pinned: Passage | None  # the passage behind the chosen option: first in the evidence
    unpicked: list[str]  # the options of a round answered in words naming none of them: not offered again
    topic: str  # the last question as finally understood, for follow-ups
    # retrieval and answering
    search_query: str
    documents: list[Passage]
    sub_questions: list[str]  # deep search: the steps still planned
    findings: list[Finding]  # deep search: the steps executed
    replans: int
    answer: str
    best_answer: str
    best_score: float
    best_documents: list[Passage]
    hops: int
    llm_calls: int
    # the outcome
    finished_turn: str  # the last turn `compose` finished: a redelivered turn is done only when it is this one
    route: str
    confidence: float
    low_confidence: bool
    unchecked: bool  # the answer was not judged: its judgement failed, or it was extracted without the model
    citations: list[Citation]
    trace: list[Step]
