"""What the graph asks of a reasoning back-end, the structured answers it expects, and the passages
it passes: the values every adapter may share, so this module imports nothing of ours.

Two back-ends implement `Reasoner`: `LLMReasoner` (any OpenAI-compatible endpoint, in
`reasoning/llm/`) and `OfflineReasoner` (no network, deterministic, in `reasoning/offline/`). The
graph is the same for both; it only ever sees these types. The questions and the documents use
`Passage` too, and the offline back-end uses them: outside `reasoning/`, no package loops back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired, Protocol, TypedDict

from pydantic import BaseModel, Field

Intent = Literal["CHIT_CHAT", "FACT_LOOKUP", "HOW_TO", "COMPARISON", "CODE_SEARCH", "UNKNOWN"]

MAX_OPTION_CHARS = 75  # a Slack button label


class Passage(TypedDict):
    """A retrieved chunk as the graph keeps it in state (plain data, checkpoint-friendly)."""

    id: str
    path: str
    source: str
    title: str
    heading: str
    text: str
    score: float
    url: NotRequired[str]  # where the document can be read on the web (passages saved before links have none)


@dataclass(frozen=True)
class TurnImage:
    """An image sent with the current question, for a chat model that sees it beside its OCR text.
    Handed to the run that answers the question, never kept in its state: no checkpoint holds an
    image, and later turns know it by its text alone."""

    name: str
    media_type: str
    data: bytes


def passage_label(p: Passage) -> str:
    """How a passage is named to people: title and heading path."""
    return label_of(p["title"], p["heading"])


def label_of(title: str, heading: str) -> str:
    """A passage's name from its document's title and its heading path (as the store keeps it)."""
    return " › ".join(part for part in (title, heading.replace(" > ", " › ")) if part)


class RouteDecision(BaseModel):
    """The router's structured decision about one question."""

    intent: Intent = Field(description="What kind of question this is.")
    confidence: float = Field(ge=0, le=1, description="How sure you are of the intent, 0-1.")
    clarify: bool = Field(
        default=False,
        description="True when the question is ambiguous and must be clarified before answering.",
    )
    reasoning: str = Field(default="", description="One short sentence: why.")
    clarify_prompt: str = Field(default="", description="The question to ask back, if clarifying.")
    clarify_options: list[str] = Field(
        default_factory=list,
        description=f"2-3 short answer options (each at most {MAX_OPTION_CHARS} characters).",
    )


class Verdict(BaseModel):
    """A judgement of an answer against the passages it was written from."""

    grounded: float = Field(ge=0, le=1, description="Share of the answer supported by the passages.")
    useful: float = Field(ge=0, le=1, description="How well the answer resolves the question.")
    reasoning: str = Field(default="", description="One short sentence: why.")

    @property
    def score(self) -> float:
        return round((self.grounded + self.useful) / 2, 3)


class GroundedAnswer(BaseModel):
    """Your answer to the question, and the numbers of the excerpts it relies on."""

    answer: str = Field(
        description="The answer, citing every statement with its excerpt number like [1]; or, when the excerpts "
        "do not contain the answer, a short statement that the documents don't cover it."
    )
    used: list[int] = Field(
        default_factory=list,
        description="The numbers of the excerpts the answer relies on; empty when they do not answer the question.",
    )


CITATION = re.compile(r"\[(\d{1,3})\]")


def cited(text: str) -> set[int]:
    """The excerpt numbers an answer cites as [n]."""
    return {int(n) for n in CITATION.findall(text)}


def renumbered(text: str, numbers: Mapping[int, int]) -> str:
    """The text with each [n] that `numbers` maps replaced by [numbers[n]]; the others as they are."""
    return CITATION.sub(lambda m: f"[{numbers.get(int(m.group(1)), int(m.group(1)))}]", text)


class Reasoner(Protocol):
    name: str

    async def contextualise(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        """Rewrite a follow-up into a standalone question, given (role, text) history."""

    async def route(self, question: str, evidence: Sequence[Passage]) -> RouteDecision:
        """Decide intent and confidence; propose clarification options when ambiguous."""

    async def answer(
        self, question: str, passages: Sequence[Passage], images: Sequence[TurnImage] = ()
    ) -> GroundedAnswer:
        """An answer citing passages as [n] (1-based), or saying the passages don't cover it, with
        the passages it relies on: the grading of the passages comes with the answer, in one call.
        `images`: those sent with the question, for a back-end that can see them."""

    async def judge(self, question: str, passages: Sequence[Passage], answer: str) -> Verdict:
        """How grounded and useful an answer is."""

    async def rewrite(self, question: str, passages: Sequence[Passage]) -> str:
        """A better search query for the question, given what was found so far."""

    async def decompose(self, question: str) -> list[str]:
        """Sub-questions (at most 3) whose answers together answer the question."""

    async def chat(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        """A short conversational reply that needs no documents."""


class ModelBusy(Exception):
    """The process-wide budget of model calls for this minute is spent (see
    THREADSAGE_MAX_MODEL_CALLS_PER_MINUTE): the turn ends with a "busy" notice."""
