"""The server back-end (`MILVUS_URI` set): a Milvus server shared by every process, ranking by
itself — its BM25 function turns `search_text` into a sparse vector. A hybrid search asks it for
each ranking (BM25, dense, dense over the other languages' passages) and fuses them here as the
embedded back-end does (`search.rankings_to_fuse`: which rankings, in which order, each passage
once), by reciprocal rank (k = 60, as Milvus's own `RRFRanker`).

A Milvus Lite server (`python -m milvus_lite server`) serves here too: it computes BM25 itself
(in Python, with statistics per storage segment: fine for tests and small deployments).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from threadsage.adapters.knowledge.base import KnowledgeBase
from threadsage.adapters.knowledge.collection import DenseUse
from threadsage.adapters.knowledge.embeddings import Embedder
from threadsage.adapters.knowledge.filters import FilterArgs
from threadsage.adapters.knowledge.search import Hit, Query, rankings_to_fuse, reciprocal_rank_fusion, row_hit
from threadsage.observability.redaction import redact_url
from threadsage.settings.sections import StorageSettings


class ServerKnowledgeBase(KnowledgeBase):
    MAKES_MILVUS_BM25 = True

    @classmethod
    def open(
        cls, settings: StorageSettings, embedder: Embedder | None = None, dense: DenseUse | None = None
    ) -> ServerKnowledgeBase:
        """Connect to the Milvus at `MILVUS_URI` (with `MILVUS_TOKEN` if set)."""
        uri = settings.milvus_uri or ""
        describe = f"MILVUS_URI={redact_url(uri)}"
        return cls(cls.connect(uri, settings, describe), settings.collection, embedder, describe, dense)

    def _store(self, rows: list[dict[str, Any]]) -> None:
        self._client.insert(self.collection, rows)

    def _rank(self, query: Query) -> list[Hit]:
        if query.vector is None:
            ranked = self._ranked_by_milvus(query.indexed, "sparse", "BM25", query.k, query.filter, query.fields)
            return [_hit(raw) for raw in ranked]
        lexical = self._ranked_by_milvus(query.indexed, "sparse", "BM25", query.pool, query.filter, query.fields)
        vector = query.vector
        everywhere = self._dense_ranking(vector, query, query.filter) if query.dense_everywhere else []
        other = self._dense_ranking(vector, query, query.other_languages) if query.other_languages else []
        rows = {str(raw["id"]): raw for raw in [*other, *everywhere, *lexical]}
        rankings = rankings_to_fuse(*([str(raw["id"]) for raw in r] for r in (lexical, everywhere, other)))
        if len(rankings) < 2:  # nothing but BM25 to rank: its own scores, as without embeddings
            return [_hit(raw) for raw in lexical[: query.k]]
        return [replace(_hit(rows[id_]), score=score) for id_, score in reciprocal_rank_fusion(rankings)[: query.k]]

    def _dense_ranking(self, vector: list[float], query: Query, narrowing: FilterArgs) -> list[dict[str, Any]]:
        return self._ranked_by_milvus(vector, "dense", "COSINE", query.pool, narrowing, query.fields)


def _hit(raw: dict[str, Any]) -> Hit:
    # Milvus Lite's gRPC server reports BM25 as a negated distance, a Milvus server as a score.
    return row_hit({"id": raw["id"], **raw["entity"]}, abs(float(raw["distance"])))
