"""The Milvus knowledge base: hybrid search, and the writes ingestion needs.

One collection per knowledge base (its fields: `knowledge_schema.py`). Search is BM25 alone, or
BM25 + dense fused with reciprocal-rank fusion (k = 60) by Milvus' hybrid search.

The same code runs against a Milvus Lite file (`MILVUS_URI` unset, see `milvus_lite.py`) and a
Milvus server.
pymilvus is synchronous: the async `search` runs it in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pymilvus import AnnSearchRequest, MilvusClient, MilvusException, RRFRanker

from threadsage.adapters import milvus_lite
from threadsage.adapters.chunking import Chunk
from threadsage.adapters.embeddings import Embedder
from threadsage.adapters.knowledge_schema import TEXT_MAX_BYTES, URL_FIELD, collection_schema
from threadsage.adapters.text import index_form
from threadsage.config import Settings
from threadsage.private_files import private_dir
from threadsage.redaction import redact_url

log = logging.getLogger(__name__)

RRF_K = 60
MAX_QUERY_CHARS = 2000
# Candidates each retriever contributes before fusion: enough for RRF to reorder the top k.
CANDIDATES_PER_RETRIEVER = 40

_CATEGORY = re.compile(r"^[\w.-]{1,128}$")


class KnowledgeBaseError(RuntimeError):
    """A knowledge-base problem an operator can act on; the message says how."""


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


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    source: str
    content_hash: str
    chunks: int


_HIT_FIELDS = [
    "doc_id", "source", "path", "title", "heading", "chunk_index", "category", "text",
]  # fmt: skip


class KnowledgeBase:
    def __init__(
        self,
        client: MilvusClient,
        collection: str,
        embedder: Embedder | None,
        describe_uri: str,
        lite_path: Path | None = None,
    ) -> None:
        self._client = client
        self._lite_path = lite_path
        self.collection = collection
        self.embedder = embedder
        self._uri = describe_uri
        # A collection made before links has no url field: it works on without links.
        self._hit_fields = [*_HIT_FIELDS, URL_FIELD]
        self._dense_dim = self._existing_dense_dim()

    # --- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder | None = None) -> KnowledgeBase:
        """Connect to `MILVUS_URI` (or the Milvus Lite file under the data dir)."""
        path = None
        if settings.milvus_uri:
            uri, describe = settings.milvus_uri, f"MILVUS_URI={redact_url(settings.milvus_uri)}"
        else:
            path = settings.milvus_lite_path
            private_dir(path.parent)
            uri = str(path)
            describe = f"the Milvus Lite file {path} (MILVUS_URI is unset)"
            milvus_lite.quiet_expected_noise()
        token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
        try:
            client = MilvusClient(uri=uri, token=token, timeout=10)
        except (MilvusException, OSError, RuntimeError) as exc:
            raise KnowledgeBaseError(_unreachable_message(describe, exc, uri)) from exc
        return cls(client, settings.collection, embedder, describe, path)

    def close(self) -> None:
        self._client.close()
        if self._lite_path is not None:
            milvus_lite.release(self._lite_path)

    def _existing_dense_dim(self) -> int | None:
        """0 for a collection without a dense field, None when there is no collection yet."""
        try:
            if not self._client.has_collection(self.collection):
                return None
            fields = self._client.describe_collection(self.collection)["fields"]
            self._client.load_collection(self.collection)  # a reopened collection starts released
        except MilvusException as exc:
            raise KnowledgeBaseError(_unreachable_message(self._uri, exc, "")) from exc
        self._hit_fields = [*_HIT_FIELDS, URL_FIELD] if any(f["name"] == URL_FIELD for f in fields) else _HIT_FIELDS
        for f in fields:
            if f["name"] == "dense":
                return int(f["params"]["dim"])
        return 0

    @property
    def exists(self) -> bool:
        return self._dense_dim is not None

    def check_embeddings(self) -> None:
        """Refuse to mix vectors of different models or sizes in one collection."""
        if self._dense_dim is None:
            return
        wanted = self.embedder.dim if self.embedder else 0
        if wanted == self._dense_dim:
            return
        built = f"{self._dense_dim}-dimensional embeddings" if self._dense_dim else "no embeddings"
        configured = (
            f"{self.embedder.name} gives {wanted}-dimensional vectors"
            if self.embedder
            else "THREADSAGE_EMBEDDINGS=none gives none"
        )
        raise KnowledgeBaseError(
            f"The knowledge base '{self.collection}' was built with {built}, but {configured}. "
            f"Rebuild it with `threadsage ingest PATH... --rebuild`, or set "
            f"THREADSAGE_EMBEDDINGS back to what it was built with."
        )

    # --- writing ---------------------------------------------------------------------------

    def create(self) -> None:
        """Create the collection if it does not exist yet."""
        if self._dense_dim is not None:
            return
        dim = self.embedder.dim if self.embedder else 0
        schema, index = collection_schema(self._client, dim)
        self._client.create_collection(self.collection, schema=schema, index_params=index)
        self._dense_dim, self._hit_fields = dim, [*_HIT_FIELDS, URL_FIELD]

    def drop(self) -> None:
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)
        self._dense_dim = None

    def stored_documents(self) -> dict[str, StoredDocument]:
        """Every document in the collection with its content hash, keyed by doc id."""
        if self._dense_dim is None:
            return {}
        docs: dict[str, StoredDocument] = {}
        for row in self._iterate(["doc_id", "source", "content_hash"]):
            known = docs.get(row["doc_id"])
            docs[row["doc_id"]] = StoredDocument(
                row["doc_id"], row["source"], row["content_hash"], (known.chunks if known else 0) + 1
            )
        return docs

    def write_chunks(self, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return
        if URL_FIELD not in self._hit_fields and any(c.document.url for c in chunks):
            log.warning("'%s' predates links: sources show paths until it is rebuilt (--rebuild)", self.collection)
        vectors = self.embedder.embed_documents([c.search_text for c in chunks]) if self.embedder else None
        rows = []
        for i, chunk in enumerate(chunks):
            doc = chunk.document
            row = {
                "id": chunk.id,
                "doc_id": doc.doc_id,
                "source": _fit(doc.source, 2048),
                "path": _fit(doc.path, 1024),
                "title": _fit(doc.title, 1024),
                "heading": _fit(chunk.heading, 2048),
                "chunk_index": chunk.index,
                "content_hash": doc.content_hash,
                "category": doc.category,
                "updated_at": doc.updated_at,
                "text": _fit(chunk.text, TEXT_MAX_BYTES),
                "search_text": _fit(index_form(chunk.search_text), TEXT_MAX_BYTES),
            }
            if vectors is not None:
                row["dense"] = vectors[i]
            if URL_FIELD in self._hit_fields:
                row[URL_FIELD] = _fit(doc.url, 2048)
            rows.append(row)
        self._client.insert(self.collection, rows)

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        for start in range(0, len(doc_ids), 500):
            batch = doc_ids[start : start + 500]
            self._client.delete(self.collection, filter=f"doc_id in {_quoted_list(batch)}")

    def delete_stale(self, doc_id: str, keep_hash: str) -> None:
        """Delete the chunks of `doc_id` of every version but `keep_hash`: the second half of
        replacing a document (its new chunks are written first), used by ingestion and sync."""
        stale = f"doc_id in {_quoted_list([doc_id])} and content_hash not in {_quoted_list([keep_hash])}"
        self._client.delete(self.collection, filter=stale)

    def flush(self) -> None:
        """Seal what was written: searches right after an ingest are then fast."""
        if self._dense_dim is not None:
            self._client.flush(self.collection)

    def count(self) -> int:
        if self._dense_dim is None:
            return 0
        return sum(1 for _ in self._iterate(["doc_id"]))

    def category_counts(self) -> dict[str, int]:
        """Documents per category ("" for those ingested without one), for telling people what
        the bot covers. Reads every chunk's id: call it in a thread."""
        if self._dense_dim is None:
            return {}
        documents = {row["doc_id"]: row["category"] for row in self._iterate(["doc_id", "category"])}
        return dict(sorted(Counter(documents.values()).items()))

    # --- searching -------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        k: int = 5,
        categories: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
    ) -> list[Hit]:
        return await asyncio.to_thread(self.search_blocking, query, k, categories, paths)

    def search_blocking(
        self,
        query: str,
        k: int = 5,
        categories: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
    ) -> list[Hit]:
        """The k best chunks; `categories` (None: every one; empty: none) and `paths` (document
        paths) narrow the search."""
        query = " ".join(query.split())[:MAX_QUERY_CHARS]
        indexed = index_form(query)  # the form BM25 sees; the dense model gets the query as written
        if not indexed or k <= 0 or self._dense_dim is None or (categories is not None and not categories):
            return []
        filter_expr = " and ".join(
            f for f in (_category_filter(categories), f"path in {_quoted_list(paths)}" if paths else "") if f
        )
        try:
            if self._dense_dim and self.embedder:
                vector = self.embedder.embed_query(query)
                pool = max(k, CANDIDATES_PER_RETRIEVER)
                requests = [
                    AnnSearchRequest([indexed], "sparse", {"metric_type": "BM25"}, pool, filter_expr),
                    AnnSearchRequest([vector], "dense", {"metric_type": "COSINE"}, pool, filter_expr),
                ]
                result = self._client.hybrid_search(
                    self.collection,
                    reqs=requests,
                    ranker=RRFRanker(RRF_K),
                    limit=k,
                    output_fields=self._hit_fields,
                )
                bm25 = False
            else:
                result = self._client.search(
                    self.collection,
                    data=[indexed],
                    anns_field="sparse",
                    limit=k,
                    filter=filter_expr,
                    search_params={"metric_type": "BM25"},
                    output_fields=self._hit_fields,
                )
                bm25 = True
        except MilvusException as exc:
            raise KnowledgeBaseError(f"Search failed on {self._uri}: {exc}") from exc
        return [_hit(raw, bm25) for raw in result[0]]

    # --- helpers ---------------------------------------------------------------------------

    def _iterate(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        iterator = self._client.query_iterator(
            self.collection, batch_size=1000, filter='id != ""', output_fields=fields
        )
        try:
            while batch := iterator.next():
                yield from batch
        finally:
            iterator.close()


def _hit(raw: dict[str, Any], bm25: bool) -> Hit:
    entity = raw["entity"]
    # Milvus Lite reports BM25 as a negated distance, a Milvus server as a positive score.
    score = abs(raw["distance"]) if bm25 else raw["distance"]
    return Hit(id=raw["id"], score=float(score), url=entity.get(URL_FIELD) or "", **{f: entity[f] for f in _HIT_FIELDS})


def _category_filter(categories: Sequence[str] | None) -> str:
    if not categories:
        return ""
    return f"category in {_quoted_list([validate_category(c) for c in categories])}"


def validate_category(category: str) -> str:
    if category and not _CATEGORY.match(category):
        raise KnowledgeBaseError(f"Invalid category {category!r}: use letters, digits, . _ -")
    return category


def _quoted_list(values: Sequence[str]) -> str:
    return "[" + ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "]"


def _fit(text: str, max_bytes: int) -> str:
    """Milvus limits VARCHAR by bytes; cut on a character boundary."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


def _unreachable_message(describe: str, exc: Exception, uri: str) -> str:
    detail = str(getattr(exc, "message", "") or exc).strip().splitlines()[0][:300]
    hint = milvus_lite.ONE_PROCESS_HINT if milvus_lite.is_lite_file(uri) else ""
    return f"Cannot open the knowledge base at {describe}: {detail}.{hint}"
