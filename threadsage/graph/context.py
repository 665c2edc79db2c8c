"""What every node may use: the knowledge base, the reasoning back-end, the tools and the brakes.
The back-end's parts that differ in kind (deep search, the web answer) come chosen by the
composition root (app/runtime.py), so that no node asks which back-end it has.

Passed to each run as LangGraph's run-scoped context, so the compiled graph itself holds no
connections and one compiled graph serves the whole process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.adapters.questions.translation import QueryTranslator
from threadsage.adapters.reasoner import Reasoner, TurnImage
from threadsage.adapters.reasoning.rerank import Reranker
from threadsage.adapters.reasoning.research import Researcher
from threadsage.settings.environment import Settings
from threadsage.tools.toolbox import Toolbox
from threadsage.tools.web import WebResult


class WebWriter(Protocol):
    def __call__(self, question: str, results: Sequence[WebResult]) -> Awaitable[str]:
        """An answer to the question from the web results, citing them as [n]."""


@dataclass(frozen=True)
class Policy:
    clarify_threshold: float = 0.6  # route confidence below this → ask back
    max_clarify_rounds: int = 2  # per question; then the best-effort answer
    max_hops: int = 2  # retrieve → answer → judge rounds in the self-check loop
    llm_budget: int = 7  # reasoning calls per turn
    deep_budget: int = 12  # reasoning calls of a deep-search turn, in place of llm_budget
    deep_max_steps: int = 4  # sub-questions executed in one deep search
    deep_max_replans: int = 1  # new plans in one deep search
    good_enough: float = 0.7  # judge score that ends the self-check loop
    retrieve_k: int = 6
    fast_k: int = 3
    rerank_candidates: int = 20  # fused candidates a reranker orders
    rerank_keep: int = 5  # of which the best go on to grading
    history_messages: int = 12  # kept in the thread's memory; older ones are dropped

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        """The brakes of two sections (the graph's, reranking's), read once where the process is put together."""
        return cls(
            clarify_threshold=settings.clarify_threshold,
            max_clarify_rounds=settings.max_clarify_rounds,
            max_hops=settings.max_hops,
            llm_budget=settings.llm_budget,
            deep_budget=settings.deep_search_budget,
            deep_max_steps=settings.deep_search_max_steps,
            deep_max_replans=settings.deep_search_max_replans,
            rerank_candidates=settings.rerank_candidates,
        )


@dataclass(frozen=True)
class BrainContext:
    kb: KnowledgeBase
    reasoner: Reasoner
    researcher: Researcher  # deep search on the same back-end
    policy: Policy = Policy()
    tools: Toolbox = field(default_factory=Toolbox)
    reranker: Reranker | None = None
    translator: QueryTranslator | None = None  # the search query in the documents' language (a model only)
    # The passages' meaning, for the offline back-end, which quotes only from the first few: the
    # search adds the closest in meaning among all passages to its candidates (`meaning.recall`) and
    # reads them all by meaning for the few it keeps (`meaning.ordering`). None keeps the search's order.
    meaning: MeaningIndex | None = None
    web_writer: WebWriter | None = None  # a model's web answer; None: the results' own words are listed
    # The images sent with the current question, for a model that sees them: in the run's context,
    # never in its state, so that no checkpoint holds an image (chat/service.py sets them per turn).
    images: tuple[TurnImage, ...] = ()
