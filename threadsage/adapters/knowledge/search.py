"""What a search asks and returns, shared by the two back-ends (`embedded.py`, `server.py`), and
the reciprocal-rank fusion (k = 60) both use for hybrid search: Milvus's `RRFRanker` on a server,
`reciprocal_rank_fusion` here on the embedded default (score Σ 1/(k + rank), ranks from 1, BM25's
list first on ties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from threadsage.adapters.knowledge.filters import FilterArgs
from threadsage.adapters.reasoner import Passage

RRF_K = 60
# Candidates each retriever contributes before fusion: enough for RRF to reorder the top k.
CANDIDATES_PER_RETRIEVER = 40


@dataclass(frozen=True)
class Hit:
    id: str
    doc_id: str
    source: str
    path: str
    title: str
    heading: str
    chunk_index: int
    category: str
    text: str
    score: float
    url: str = ""  # where the document can be read on the web, if anywhere


def passage(hit: Hit) -> Passage:
    """The hit as the graph keeps it in state."""
    return Passage(
        id=hit.id,
        path=hit.path,
        source=hit.source,
        title=hit.title,
        heading=hit.heading,
        text=hit.text,
        score=hit.score,
        url=hit.url,
    )


HIT_FIELDS = [
    "doc_id", "source", "path", "title", "heading", "chunk_index", "category", "text",
]  # fmt: skip


@dataclass(frozen=True)
class Query:
    indexed: str  # the query in `index_form`, as BM25 sees it
    terms: list[str]  # what BM25 counts of it (`text.index_terms`)
    vector: list[float] | None  # the dense query vector, for hybrid search
    k: int
    filter: FilterArgs  # the Milvus filter for categories and paths, as the server takes it
    categories: Sequence[str] | None
    paths: Sequence[str] | None
    fields: list[str]  # the hit fields the Milvus collection has (older ones lack the link)

    @property
    def pool(self) -> int:
        """How many candidates each retriever gives the fusion."""
        return max(self.k, CANDIDATES_PER_RETRIEVER)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, id_ in enumerate(ranking, start=1):
            scores[id_] = scores.get(id_, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def row_hit(row: dict[str, Any], score: float) -> Hit:
    return Hit(id=row["id"], score=score, url=row.get("url") or "", **{f: row[f] for f in HIT_FIELDS})
