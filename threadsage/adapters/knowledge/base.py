"""The knowledge base: hybrid search, and the writes ingestion needs.

One Milvus collection per knowledge base (its fields: `knowledge_schema.py`). Search is BM25
alone, or BM25 + dense fused with reciprocal-rank fusion (k = 60); how each is ranked, on a
Milvus server and on the embedded Milvus Lite, is in `knowledge_search.py`.

On Milvus Lite (`MILVUS_URI` unset, see `milvus_lite.py`) BM25 is an in-process index beside the
Milvus file (`lexical.py`), which is also what the stored documents are read from: what it has
committed is what is ingested. Writes are staged there and committed by `flush`, so a search sees
all of an ingest's changes or none. pymilvus is synchronous: the async `search` runs it in a
worker thread.
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

from pymilvus import MilvusClient, MilvusException

from threadsage.adapters.documents.chunking import Chunk
from threadsage.adapters.knowledge import milvus_lite
from threadsage.adapters.knowledge.embeddings import Embedder
from threadsage.adapters.knowledge.lexical import TEXT_FIELDS, LexicalIndex
from threadsage.adapters.knowledge.schema import (
    PLACEHOLDER_SPARSE,
    TEXT_MAX_BYTES,
    URL_FIELD,
    chunk_row,
    collection_schema,
    fit,
)
from threadsage.adapters.knowledge.search import HIT_FIELDS, Query, local_search, milvus_search
from threadsage.adapters.knowledge.search import Hit as Hit  # callers import it from here
from threadsage.observability.redaction import redact_url
from threadsage.settings.environment import Settings
from threadsage.support.private_files import private_dir
from threadsage.support.text import index_form, index_terms

MAX_QUERY_CHARS = 2000
log = logging.getLogger(__name__)

_CATEGORY = re.compile(r"^[\w.-]{1,128}$")


class KnowledgeBaseError(RuntimeError):
    """A knowledge-base problem an operator can act on; the message says how."""


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    source: str
    content_hash: str
    chunks: int


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
        # On Milvus Lite, BM25 is ours (`lexical.py`); on a server, Milvus's BM25 function.
        self._lexical = LexicalIndex(lite_path.parent / "lexical" / collection) if lite_path else None
        self._milvus_bm25 = self._lexical is None
        self._closed = False
        # A collection made before links has no url field: it works on without links.
        self._hit_fields = [*HIT_FIELDS, URL_FIELD]
        self._dense_dim = self._existing_dense_dim()
        self._catch_up_lexical()

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
            client = MilvusClient(uri=uri, token=token, timeout=10, grpc_options=milvus_lite.grpc_options(uri))
        except (MilvusException, OSError, RuntimeError) as exc:
            raise KnowledgeBaseError(_unreachable_message(describe, exc, uri)) from exc
        return cls(client, settings.collection, embedder, describe, path)

    def close(self) -> None:
        self._closed = True
        if self._lexical is not None:
            self._lexical.close()
        self._client.close()
        if self._lite_path is not None:
            milvus_lite.release(self._lite_path)

    def _existing_dense_dim(self) -> int | None:
        """0 for a collection without a dense field, None when there is no collection yet."""
        try:
            if not self._client.has_collection(self.collection):
                return None
            described = self._client.describe_collection(self.collection)
            self._client.load_collection(self.collection)  # a reopened collection starts released
        except MilvusException as exc:
            raise KnowledgeBaseError(_unreachable_message(self._uri, exc, "")) from exc
        fields = described["fields"]
        # A Milvus Lite collection made before the in-process index still computes BM25 itself.
        self._milvus_bm25 = bool(described.get("functions"))
        self._hit_fields = [*HIT_FIELDS, URL_FIELD] if any(f["name"] == URL_FIELD for f in fields) else HIT_FIELDS
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
        self._milvus_bm25 = self._lexical is None
        schema, index = collection_schema(self._client, dim, self._milvus_bm25)
        self._client.create_collection(self.collection, schema=schema, index_params=index)
        self._hit_fields = [*HIT_FIELDS, URL_FIELD]
        if self._lexical is not None and self._lexical.count():
            self._lexical.clear()  # left from a Milvus file that was removed: it indexed nothing here
        self._dense_dim = dim

    def drop(self) -> None:
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)
        if self._lexical is not None:
            self._lexical.clear()
        self._dense_dim = None

    def stored_documents(self) -> dict[str, StoredDocument]:
        """Every document in the collection with its content hash, keyed by doc id."""
        if self._dense_dim is None:
            return {}
        docs: dict[str, StoredDocument] = {}
        for row in self._rows(["doc_id", "source", "content_hash"]):
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
        with_url = URL_FIELD in self._hit_fields
        rows = [chunk_row(c, vectors[i] if vectors else None, with_url) for i, c in enumerate(chunks)]
        if self._lexical is None:
            self._client.insert(self.collection, rows)
            return
        for row in rows:
            self._lexical.add(row, index_terms(row["search_text"]))
            if not self._milvus_bm25:
                # pymilvus checks strings a character at a time: not sending this text twice
                # (the in-process index has its terms) halves the cost of a write.
                row["search_text"], row["sparse"] = "", PLACEHOLDER_SPARSE
        # Upsert: after a crash between this and `flush`, the rows are written again.
        self._client.upsert(self.collection, rows)

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        for start in range(0, len(doc_ids), 500):
            batch = doc_ids[start : start + 500]
            self._client.delete(self.collection, filter=f"doc_id in {_quoted_list(batch)}")
        if self._lexical is not None:
            self._lexical.delete(doc_ids)

    def delete_stale(self, doc_id: str, keep_hash: str) -> None:
        """Delete the chunks of `doc_id` of every version but `keep_hash`: the second half of
        replacing a document (its new chunks are written first), used by ingestion and sync."""
        stale = f"doc_id in {_quoted_list([doc_id])} and content_hash not in {_quoted_list([keep_hash])}"
        self._client.delete(self.collection, filter=stale)
        if self._lexical is not None:
            self._lexical.delete_stale(doc_id, keep_hash)

    def flush(self) -> None:
        """Seal what was written: searches right after an ingest are then fast, and on Milvus
        Lite they see the ingest's changes from now on, all at once."""
        if self._dense_dim is not None:
            self._client.flush(self.collection)
        if self._lexical is not None:
            self._lexical.commit()

    def count(self) -> int:
        if self._dense_dim is None:
            return 0
        if self._lexical is not None:
            return self._lexical.count()
        return sum(1 for _ in self._iterate(["doc_id"]))

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]] | None:
        """The number of chunks and how many hold each term (`support.text.terms` form): what the
        offline answerer weighs a question's words by — a word every chunk has says little about
        whether a passage answers. None on a Milvus server, whose BM25 statistics are not readable."""
        if self._lexical is None or self._dense_dim is None:
            return None
        return self._lexical.document_frequencies(terms)

    def category_counts(self) -> dict[str, int]:
        """Documents per category ("" for those ingested without one), for telling people what
        the bot covers. Reads every chunk's id: call it in a thread."""
        if self._dense_dim is None:
            return {}
        documents = {row["doc_id"]: row["category"] for row in self._rows(["doc_id", "category"])}
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
        hybrid = bool(self._dense_dim and self.embedder)
        vector = self.embedder.embed_query(query) if hybrid and self.embedder else None
        request = Query(indexed, index_terms(indexed), vector, k, filter_expr, categories, paths, self._hit_fields)
        if self._closed:  # the in-process index would still answer; a closed one must not
            raise KnowledgeBaseError(f"Search failed on {self._uri}: the knowledge base was closed")
        try:
            if self._lexical is not None:
                return local_search(self._lexical, self._client, self.collection, request)
            return milvus_search(self._client, self.collection, request)
        except MilvusException as exc:
            raise KnowledgeBaseError(f"Search failed on {self._uri}: {exc}") from exc

    # --- helpers ---------------------------------------------------------------------------

    def _rows(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every chunk's row: on Milvus Lite as the in-process index has committed them."""
        return self._lexical.iterate() if self._lexical is not None else self._iterate(fields)

    def _catch_up_lexical(self) -> None:
        """Fill a missing in-process index from the Milvus Lite rows, once: a knowledge base
        ingested before the index existed, or one whose index directory was removed."""
        if self._lexical is None or self._dense_dim is None or self._lexical.count():
            return
        log.info("Indexing the knowledge base '%s' for search (once)", self.collection)
        fields = [f for f in ("chunk_index", "search_text", *TEXT_FIELDS) if f != URL_FIELD or f in self._hit_fields]
        for row in self._iterate(fields):
            search_text = "\n".join(part for part in (row["title"], row["heading"], row["text"]) if part)
            form = row["search_text"] or fit(index_form(search_text), TEXT_MAX_BYTES)  # as `Chunk.search_text`
            self._lexical.add(row, index_terms(form))
        self._lexical.commit()

    def _iterate(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        iterator = self._client.query_iterator(
            self.collection, batch_size=1000, filter='id != ""', output_fields=fields
        )
        try:
            while batch := iterator.next():
                yield from batch
        finally:
            iterator.close()


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


def _unreachable_message(describe: str, exc: Exception, uri: str) -> str:
    detail = str(getattr(exc, "message", "") or exc).strip().splitlines()[0][:300]
    hint = milvus_lite.ONE_PROCESS_HINT if milvus_lite.is_lite_file(uri) else ""
    return f"Cannot open the knowledge base at {describe}: {detail}.{hint}"
