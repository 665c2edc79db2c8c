"""The two ways the knowledge base ranks chunks, behind `KnowledgeBase.search_blocking`.

- On a Milvus server (`MILVUS_URI`): Milvus's BM25 function, and for hybrid search its own
  hybrid search fused by reciprocal-rank fusion.
- On the embedded default (Milvus Lite): BM25 by the in-process index (`lexical.py`), the dense
  side (if any) by Milvus Lite, fused here by the same reciprocal-rank fusion as Milvus's
  `RRFRanker` (score Σ 1/(k + rank), ranks from 1, BM25's list first on ties). Every hit's row is
  read from the lexical index's one snapshot, so a result never mixes two versions of a document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pymilvus import AnnSearchRequest, MilvusClient, RRFRanker

from threadsage.adapters.knowledge.lexical import LexicalIndex

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


HIT_FIELDS = [
    "doc_id", "source", "path", "title", "heading", "chunk_index", "category", "text",
]  # fmt: skip


@dataclass(frozen=True)
class Query:
    indexed: str  # the query in `index_form`, as BM25 sees it
    terms: list[str]  # what BM25 counts of it (`text.index_terms`)
    vector: list[float] | None  # the dense query vector, for hybrid search
    k: int
    filter_expr: str  # the Milvus filter for categories and paths
    categories: Sequence[str] | None
    paths: Sequence[str] | None
    fields: list[str]  # the hit fields the Milvus collection has (older ones lack the link)


def milvus_search(client: MilvusClient, collection: str, query: Query) -> list[Hit]:
    """Ranked by Milvus itself: its BM25 function, and its hybrid search."""
    if query.vector is not None:
        pool = max(query.k, CANDIDATES_PER_RETRIEVER)
        requests = [
            AnnSearchRequest([query.indexed], "sparse", {"metric_type": "BM25"}, pool, query.filter_expr),
            AnnSearchRequest([query.vector], "dense", {"metric_type": "COSINE"}, pool, query.filter_expr),
        ]
        result = client.hybrid_search(
            collection, reqs=requests, ranker=RRFRanker(RRF_K), limit=query.k, output_fields=query.fields
        )
        return [_milvus_hit(raw, raw["distance"]) for raw in result[0]]
    result = client.search(
        collection,
        data=[query.indexed],
        anns_field="sparse",
        limit=query.k,
        filter=query.filter_expr,
        search_params={"metric_type": "BM25"},
        output_fields=query.fields,
    )
    return [_milvus_hit(raw, raw["distance"]) for raw in result[0]]


def local_search(lexical: LexicalIndex, client: MilvusClient, collection: str, query: Query) -> list[Hit]:
    """BM25 in process; with a query vector, Milvus Lite's dense ranking fused with it."""
    if query.vector is None:
        ranked = lexical.search(query.terms, query.k, query.categories, query.paths)
        return [_hit(row, score) for score, row in ranked]
    pool = max(query.k, CANDIDATES_PER_RETRIEVER)
    lexical_ranking = lexical.search(query.terms, pool, query.categories, query.paths)
    dense = client.search(
        collection,
        data=[query.vector],
        anns_field="dense",
        limit=pool,
        filter=query.filter_expr,
        search_params={"metric_type": "COSINE"},
        output_fields=[],
    )
    rows = {row["id"]: row for _, row in lexical_ranking}
    fused = reciprocal_rank_fusion([list(rows), [str(raw["id"]) for raw in dense[0]]])
    rows |= lexical.rows([id_ for id_, _ in fused if id_ not in rows])
    # A dense hit the snapshot lacks was written but not yet committed: it is not shown yet.
    return [_hit(rows[id_], score) for id_, score in fused if id_ in rows][: query.k]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, id_ in enumerate(ranking, start=1):
            scores[id_] = scores.get(id_, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def _hit(row: dict[str, Any], score: float) -> Hit:
    return Hit(id=row["id"], score=score, url=row.get("url") or "", **{f: row[f] for f in HIT_FIELDS})


def _milvus_hit(raw: dict[str, Any], distance: float) -> Hit:
    # Milvus Lite's gRPC server reports BM25 as a negated distance, a Milvus server as a score.
    return _hit({"id": raw["id"], **raw["entity"]}, abs(float(distance)))
