"""The server back-end (`MILVUS_URI` set): a Milvus server shared by every process, ranking by
itself — its BM25 function turns `search_text` into a sparse vector, and a hybrid search is its
hybrid search, BM25 and dense (cosine) candidates fused by its `RRFRanker` (k = 60).

A Milvus Lite server (`python -m milvus_lite server`) serves here too: it computes BM25 itself
(in Python, with statistics per storage segment: fine for tests and small deployments).
"""

from __future__ import annotations

from typing import Any

from pymilvus import AnnSearchRequest, RRFRanker

from threadsage.adapters.knowledge.base import KnowledgeBase
from threadsage.adapters.knowledge.embeddings import Embedder
from threadsage.adapters.knowledge.search import RRF_K, Hit, Query, row_hit
from threadsage.observability.redaction import redact_url
from threadsage.settings.environment import Settings


class ServerKnowledgeBase(KnowledgeBase):
    MAKES_MILVUS_BM25 = True

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder | None = None) -> ServerKnowledgeBase:
        """Connect to the Milvus at `MILVUS_URI` (with `MILVUS_TOKEN` if set)."""
        uri = settings.milvus_uri or ""
        describe = f"MILVUS_URI={redact_url(uri)}"
        return cls(cls.connect(uri, settings, describe), settings.collection, embedder, describe)

    def _store(self, rows: list[dict[str, Any]]) -> None:
        self._client.insert(self.collection, rows)

    def _rank(self, query: Query) -> list[Hit]:
        if query.vector is None:
            ranked = self._ranked_by_milvus(query.indexed, "sparse", "BM25", query.k, query.filter, query.fields)
            return [_hit(raw) for raw in ranked]
        expr, params = query.filter
        requests = [
            AnnSearchRequest(
                [query.indexed], "sparse", {"metric_type": "BM25"}, query.pool, expr=expr, expr_params=params
            ),
            AnnSearchRequest(
                [query.vector], "dense", {"metric_type": "COSINE"}, query.pool, expr=expr, expr_params=params
            ),
        ]
        fused = self._client.hybrid_search(
            self.collection, reqs=requests, ranker=RRFRanker(RRF_K), limit=query.k, output_fields=query.fields
        )
        return [_hit(raw) for raw in fused[0]]


def _hit(raw: dict[str, Any]) -> Hit:
    # Milvus Lite's gRPC server reports BM25 as a negated distance, a Milvus server as a score.
    return row_hit({"id": raw["id"], **raw["entity"]}, abs(float(raw["distance"])))
