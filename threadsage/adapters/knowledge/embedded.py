"""The embedded back-end, the default (`MILVUS_URI` unset): Milvus Lite in this process for the
rows and dense vectors (a file under the data dir, `milvus_lite.py`), and BM25 by an in-process
tantivy index beside it (`lexical.py`; why not Milvus Lite's own BM25 is said there).

The lexical index is also what the stored documents are read from: what it has committed is what
is ingested. Writes are staged there and committed by `flush`, so a search sees all of an ingest's
changes or none. A hybrid search fuses the index's BM25 ranking with Milvus Lite's dense one by
reciprocal-rank fusion, and reads every hit's row from the index's one snapshot, so a result never
mixes two versions of a document.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient

from threadsage.adapters.knowledge import milvus_lite
from threadsage.adapters.knowledge.base import KnowledgeBase
from threadsage.adapters.knowledge.collection import DenseUse
from threadsage.adapters.knowledge.embeddings import Embedder
from threadsage.adapters.knowledge.filters import FilterArgs
from threadsage.adapters.knowledge.lexical import TEXT_FIELDS, LexicalIndex
from threadsage.adapters.knowledge.schema import PLACEHOLDER_SPARSE, TEXT_MAX_BYTES, URL_FIELD, fit
from threadsage.adapters.knowledge.search import Hit, Query, rankings_to_fuse, reciprocal_rank_fusion, row_hit
from threadsage.settings.sections import StorageSettings
from threadsage.support.private_files import private_dir
from threadsage.support.text import index_form, index_terms

log = logging.getLogger(__name__)


class EmbeddedKnowledgeBase(KnowledgeBase):
    MAKES_MILVUS_BM25 = False

    def __init__(
        self,
        client: MilvusClient,
        collection: str,
        embedder: Embedder | None,
        describe_uri: str,
        lite_path: Path,
        dense: DenseUse | None = None,
    ) -> None:
        self._lite_path = lite_path
        self._lexical = LexicalIndex(lite_path.parent / "lexical" / collection)
        super().__init__(client, collection, embedder, describe_uri, dense)
        self._catch_up_lexical()

    @classmethod
    def open(
        cls, settings: StorageSettings, embedder: Embedder | None = None, dense: DenseUse | None = None
    ) -> EmbeddedKnowledgeBase:
        """Open the Milvus Lite file under the data dir (one process at a time)."""
        path = settings.milvus_lite_path
        private_dir(path.parent)
        describe = f"the Milvus Lite file {path} (MILVUS_URI is unset)"
        milvus_lite.quiet_expected_noise()
        client = cls.connect(str(path), settings, describe)
        return cls(client, settings.collection, embedder, describe, path, dense)

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]] | None:
        if self._layout is None:
            return None
        return self._lexical.document_frequencies(terms)

    def close(self) -> None:
        self._lexical.close()
        super().close()
        milvus_lite.release(self._lite_path)

    # --- writing ---------------------------------------------------------------------------

    def create(self) -> None:
        if self.exists:
            return
        super().create()
        if self._lexical.count():
            self._lexical.clear()  # left from a Milvus file that was removed: it indexed nothing here

    def drop(self) -> None:
        super().drop()
        self._lexical.clear()

    def _store(self, rows: list[dict[str, Any]]) -> None:
        milvus_bm25 = self._made().milvus_bm25  # a collection made before the in-process index
        for row in rows:
            self._lexical.add(row, index_terms(row["search_text"]))
            if not milvus_bm25:
                # pymilvus checks strings a character at a time: not sending this text twice
                # (the in-process index has its terms) halves the cost of a write.
                row["search_text"], row["sparse"] = "", PLACEHOLDER_SPARSE
        # Upsert: after a crash between this and `flush`, the rows are written again.
        self._client.upsert(self.collection, rows)

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        super().delete_documents(doc_ids)
        self._lexical.delete(doc_ids)

    def delete_stale(self, doc_id: str, keep_hash: str) -> None:
        super().delete_stale(doc_id, keep_hash)
        self._lexical.delete_stale(doc_id, keep_hash)

    def flush(self) -> None:
        """Seal the Milvus Lite writes, and make the ingest's changes searchable, all at once."""
        super().flush()
        self._lexical.commit()

    # --- reading ---------------------------------------------------------------------------

    def count(self) -> int:
        return self._lexical.count() if self.exists else 0

    def _rows(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every chunk's row as the in-process index has committed it (all of its fields)."""
        return self._lexical.iterate()

    def hits_of(
        self, ids: Sequence[str], categories: Sequence[str] | None = None, paths: Sequence[str] | None = None
    ) -> list[Hit]:
        """From the in-process snapshot, as the words' hits are: one committed state for both."""
        if categories is not None and not categories:
            return []
        rows = self._lexical.rows(ids)
        admitted = [rows[i] for i in ids if i in rows]
        return [
            row_hit(row, 0.0)
            for row in admitted
            if (not categories or row["category"] in categories) and (not paths or row["path"] in paths)
        ]

    def _rank(self, query: Query) -> list[Hit]:
        """BM25 in process; with a query vector, Milvus Lite's dense rankings fused with it."""
        if query.vector is None:
            ranked = self._lexical.search(query.terms, query.k, query.categories, query.paths)
            return [row_hit(row, score) for score, row in ranked]
        lexical_ranking = self._lexical.search(query.terms, query.pool, query.categories, query.paths)
        rows = {row["id"]: row for _, row in lexical_ranking}
        everywhere = self._dense_ranking(query.vector, query.filter, query.pool) if query.dense_everywhere else []
        rankings = rankings_to_fuse(
            list(rows), everywhere, self._dense_ranking(query.vector, query.other_languages, query.pool)
        )
        if len(rankings) < 2:  # nothing but BM25 to rank: its own scores, as without embeddings
            return [row_hit(row, score) for score, row in lexical_ranking[: query.k]]
        fused = reciprocal_rank_fusion(rankings)
        rows |= self._lexical.rows([id_ for id_, _ in fused if id_ not in rows])
        # A dense hit the snapshot lacks was written but not yet committed: it is not shown yet.
        return [row_hit(rows[id_], score) for id_, score in fused if id_ in rows][: query.k]

    def _dense_ranking(self, vector: list[float], narrowing: FilterArgs | None, limit: int) -> list[str]:
        """The ids of the passages nearest `vector` among those `narrowing` admits (None: no ranking)."""
        if narrowing is None:
            return []
        return [str(raw["id"]) for raw in self._ranked_by_milvus(vector, "dense", "COSINE", limit, narrowing, [])]

    def _catch_up_lexical(self) -> None:
        """Fill a missing in-process index from the Milvus Lite rows, once: a knowledge base
        ingested before the index existed, or one whose index directory was removed."""
        if self._layout is None or self._lexical.count():
            return
        log.info("Indexing the knowledge base '%s' for search (once)", self.collection)
        fields = [f for f in ("chunk_index", "search_text", *TEXT_FIELDS) if f != URL_FIELD or self._layout.links]
        for row in self._iterate(fields):
            search_text = "\n".join(part for part in (row["title"], row["heading"], row["text"]) if part)
            form = row["search_text"] or fit(index_form(search_text), TEXT_MAX_BYTES)  # as `Chunk.search_text`
            self._lexical.add(row, index_terms(form))
        self._lexical.commit()
