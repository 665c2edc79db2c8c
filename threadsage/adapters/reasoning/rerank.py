"""Rerankers: put the fused search candidates in a better order before an answer is written.

Three kinds, all answering the same question — in which order should these passages come? —
as a list of candidate indices, best first:

- `EndpointReranker`: a `/rerank` endpoint (`THREADSAGE_RERANK_URL`). Two documented request
  shapes: Cohere / Jina / vLLM / Infinity (`{model, query, documents, top_n}` →
  `{results: [{index, relevance_score}]}`) and Hugging Face text-embeddings-inference
  (`{query, texts}` → `[{index, score}]`); either response shape is read.
- `ModelReranker`: one listwise call on the router model (structured output), counted against
  the turn's budget of model calls.
- `LexicalReranker`: no model at all — query-term coverage of the passage and of its title and
  heading, weighted by rarity among the candidates, plus the fused rank as a prior.

A reranker that fails (timeout, HTTP error, garbage) leaves the fused order as it was: ordering is
an improvement, never a reason to lose an answer. Whatever a reranker returns is cleaned by
`complete_order` — unknown and repeated indices dropped, the candidates it left out appended in
their fused order.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import httpx

from threadsage.adapters.reasoner import Passage
from threadsage.settings.sections import RetrievalSettings
from threadsage.support.text import term_set

log = logging.getLogger(__name__)

PASSAGE_CHARS = 2000  # of each candidate sent to an endpoint or a model: enough to judge it


class Reranker(Protocol):
    name: str
    model_calls: int  # reasoning calls one rerank costs (counted against the turn's budget)

    async def order(self, query: str, passages: Sequence[Passage]) -> list[int]:
        """Indices into `passages`, most relevant first (may be partial; raises on failure)."""


def complete_order(order: Sequence[Any], n: int) -> list[int]:
    """A permutation of range(n): the valid, first-seen indices of `order`, then the rest in
    their original order."""
    seen: dict[int, None] = {}
    for i in order:
        if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n:
            seen.setdefault(i, None)
    return [*seen, *(i for i in range(n) if i not in seen)]


async def rerank(reranker: Reranker, query: str, passages: Sequence[Passage]) -> tuple[list[Passage], str]:
    """The passages in the reranker's order, and a note for the trace. On failure: the fused
    order, and the note says why."""
    if len(passages) < 2:
        return list(passages), "nothing to reorder"
    try:
        order = complete_order(await reranker.order(query, passages), len(passages))
    except Exception as exc:  # noqa: BLE001 - a failed rerank keeps the fused order, never fails the turn
        log.warning("rerank by %s failed (%s): keeping the fused order", reranker.name, exc.__class__.__name__)
        return list(passages), f"{reranker.name} failed ({exc.__class__.__name__}): fused order kept"
    moved = sum(1 for rank, i in enumerate(order) if rank != i)
    return [passages[i] for i in order], f"{reranker.name}: {moved} of {len(passages)} moved"


def labelled(p: Passage) -> str:
    """A candidate as a reranker reads it: where it comes from, then its text."""
    where = " › ".join(part for part in (p["title"], p["heading"]) if part)
    return f"{where}\n{p['text']}"[:PASSAGE_CHARS] if where else p["text"][:PASSAGE_CHARS]


# --- a /rerank endpoint ----------------------------------------------------------------------


class EndpointReranker:
    model_calls = 0

    def __init__(
        self,
        url: str,
        api: str = "cohere",
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._url = url
        self._api = api
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout
        self.name = f"rerank endpoint ({api})"

    async def order(self, query: str, passages: Sequence[Passage]) -> list[int]:
        texts = [labelled(p) for p in passages]
        body: dict[str, Any]
        if self._api == "tei":
            body = {"query": query, "texts": texts, "truncate": True}
        else:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self._model:
                body["model"] = self._model
        # A client per call: one request a turn, and nothing to close when the service stops.
        async with httpx.AsyncClient(timeout=self._timeout, headers=self._headers) as client:
            response = await client.post(self._url, json=body)
        response.raise_for_status()
        return ranked_indices(response.json())


def ranked_indices(payload: Any) -> list[int]:
    """Indices, best first, from either documented response: a bare list of `{index, score}`
    (TEI) or `{results: [{index, relevance_score}]}` (Cohere, Jina). Raises on anything else."""
    rows = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(rows, list):
        raise ValueError("a rerank response holds no list of results")
    scored: list[tuple[float, int]] = []
    for row in rows:
        score = row.get("relevance_score", row.get("score")) if isinstance(row, dict) else None
        index = row.get("index") if isinstance(row, dict) else None
        if not isinstance(index, int) or not isinstance(score, int | float) or not math.isfinite(score):
            raise ValueError("a rerank result without an index and a score")
        scored.append((float(score), index))
    return [index for _, index in sorted(scored, key=lambda s: -s[0])]


# --- the router model ------------------------------------------------------------------------


class ModelReranker:
    """`rank(query, passages)` is the model back-end's listwise call (LLMReasoner.rank)."""

    model_calls = 1

    def __init__(self, rank: Callable[[str, Sequence[Passage]], Awaitable[list[int]]], name: str) -> None:
        self._rank = rank
        self.name = f"listwise rerank by {name}"

    async def order(self, query: str, passages: Sequence[Passage]) -> list[int]:
        return [n - 1 for n in await self._rank(query, passages)]  # the model numbers from 1


# --- no model --------------------------------------------------------------------------------


class LexicalReranker:
    """Coverage of the query's content terms by the passage (and, counted again, by its title and
    heading), each term weighted by its rarity among the candidates; the fused rank is the prior
    that decides between passages the terms cannot tell apart."""

    model_calls = 0
    name = "lexical rerank"

    def __init__(self, label_weight: float = 0.5, prior_weight: float = 1.0) -> None:
        self._label_weight = label_weight
        self._prior_weight = prior_weight

    async def order(self, query: str, passages: Sequence[Passage]) -> list[int]:
        return self.order_now(query, passages)

    def order_now(self, query: str, passages: Sequence[Passage]) -> list[int]:
        wanted = term_set(query)
        if not wanted:
            return list(range(len(passages)))
        bodies = [term_set(p["text"]) for p in passages]
        labels = [term_set(f"{p['title']} {p['heading']}") for p in passages]
        frequency = Counter(t for body, label in zip(bodies, labels, strict=True) for t in wanted & (body | label))
        weight = {t: math.log(1 + len(passages) / (1 + frequency[t])) for t in wanted}
        total = sum(weight.values()) or 1.0

        def score(i: int) -> float:
            covered = sum(weight[t] for t in wanted & (bodies[i] | labels[i])) / total
            in_label = sum(weight[t] for t in wanted & labels[i]) / total
            return covered + self._label_weight * in_label + self._prior_weight / (1 + i)

        return sorted(range(len(passages)), key=lambda i: -score(i))


# --- choosing one ----------------------------------------------------------------------------


class RerankUnavailable(ValueError):
    """THREADSAGE_RERANK asks for something this configuration cannot give."""


def make_reranker(settings: RetrievalSettings, reasoner: object) -> Reranker | None:
    """The reranker `THREADSAGE_RERANK` names. `auto` picks the endpoint when one is configured and
    otherwise none: the listwise model call and the lexical signal are opt-in (measured in
    docs/performance.md, reasons in docs/decisions.md)."""
    kind = settings.rerank
    if kind == "auto":
        kind = "endpoint" if settings.rerank_url else "none"
    if kind == "endpoint":
        if not settings.rerank_url:
            raise RerankUnavailable("THREADSAGE_RERANK=endpoint needs THREADSAGE_RERANK_URL (a /rerank endpoint)")
        key = settings.rerank_api_key.get_secret_value() if settings.rerank_api_key else None
        return EndpointReranker(
            settings.rerank_url, settings.rerank_api, settings.rerank_model, key, settings.rerank_timeout
        )
    if kind == "model":
        rank = getattr(reasoner, "rank", None)
        if rank is None:
            raise RerankUnavailable("THREADSAGE_RERANK=model needs a language model: set OPENAI_API_KEY")
        return ModelReranker(rank, str(getattr(reasoner, "name", "the router model")))
    if kind == "lexical":
        return LexicalReranker()
    return None
