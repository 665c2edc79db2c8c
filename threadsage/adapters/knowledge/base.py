"""The knowledge base's interface, and what its two back-ends share.

One Milvus collection per knowledge base (its fields: `schema.py`) holds a row per chunk and, with
embeddings, its dense vector. The back-ends differ in who does BM25:

- `embedded.py`, the default (`MILVUS_URI` unset): Milvus Lite in this process, and BM25 by an
  in-process tantivy index beside its file (`lexical.py`);
- `server.py` (`MILVUS_URI` set): a Milvus server, with its own BM25 function.

`open_knowledge_base` (the package's `__init__`) picks one. Shared here: connecting, the layout of a
collection (`Layout`), the writes and reads Milvus does for both, and a search before the ranking (the
query cut and normalised, the filter, the dense vector). pymilvus is synchronous: `search` runs it in a thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from pymilvus import MilvusClient, MilvusException

from threadsage.adapters.documents.chunking import Chunk
from threadsage.adapters.knowledge import milvus_lite
from threadsage.adapters.knowledge.collection import (
    DenseUse,
    KnowledgeBaseError,
    Layout,
    StoredDocument,
    narrowed,
    unreachable_message,
)
from threadsage.adapters.knowledge.embeddings import Embedder
from threadsage.adapters.knowledge.filters import Filter, FilterArgs, field_in
from threadsage.adapters.knowledge.schema import LANGUAGE_FIELD, URL_FIELD, chunk_row, collection_schema
from threadsage.adapters.knowledge.search import (
    CANDIDATES_PER_RETRIEVER,
    FIRST_HITS_PER_PLACE,
    Hit,
    Query,
    by_place,
    places_known,
    row_hit,
    searched_with_gloss,
)
from threadsage.i18n import Language, language_of
from threadsage.i18n.glossing import can_gloss, glossed
from threadsage.settings.sections import StorageSettings
from threadsage.support.text import index_form, index_terms

MAX_QUERY_CHARS = 2000
# A question in a language that fewer passages than this share are in is glossed (`glossing.py`).
FOREIGN_SHARE = 0.5
SHARE_SECONDS = 300.0
log = logging.getLogger(__name__)


class KnowledgeBase(ABC):
    """Hybrid search over the documents, and the writes ingestion needs."""

    # Whether Milvus computes BM25 in the collections this back-end makes.
    MAKES_MILVUS_BM25: ClassVar[bool]

    def __init__(
        self,
        client: MilvusClient,
        collection: str,
        embedder: Embedder | None,
        describe_uri: str,
        dense: DenseUse | None = None,
    ) -> None:
        self._client = client
        self.collection = collection
        self.embedder = embedder
        self._dense = dense or DenseUse()
        self._uri = describe_uri
        self._closed = False
        # passages' share per language, and when it was counted (`_share_in`)
        self._shares: dict[str, tuple[float, float]] = {}
        try:
            # Milvus Lite (file or server) reads no `filter_params`: see `filters.py`.
            self._inline_filters = str(client.get_server_version()).startswith("milvus_lite")
            self._layout = self._read_layout()  # None: no collection yet
        except MilvusException as exc:
            raise KnowledgeBaseError(unreachable_message(describe_uri, exc, "")) from exc

    @staticmethod
    def connect(uri: str, settings: StorageSettings, describe: str) -> MilvusClient:
        """A client of the Milvus at `uri`; failing, an error that names `describe`."""
        token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
        try:
            return MilvusClient(uri=uri, token=token, timeout=10, grpc_options=milvus_lite.grpc_options(uri))
        except (MilvusException, OSError, RuntimeError) as exc:
            raise KnowledgeBaseError(unreachable_message(describe, exc, uri)) from exc

    def close(self) -> None:
        self._closed = True
        self._client.close()

    def _read_layout(self) -> Layout | None:
        if not self._client.has_collection(self.collection):
            return None
        described = self._client.describe_collection(self.collection)
        self._client.load_collection(self.collection)  # a reopened collection starts released
        fields = described["fields"]
        return Layout(
            dense_dim=next((int(f["params"]["dim"]) for f in fields if f["name"] == "dense"), None),
            links=any(f["name"] == URL_FIELD for f in fields),
            milvus_bm25=bool(described.get("functions")),
            languages=any(f["name"] == LANGUAGE_FIELD for f in fields),
        )

    @property
    def exists(self) -> bool:
        return self._layout is not None

    def check_embeddings(self) -> None:
        """Refuse to mix vectors of different models or sizes in one collection."""
        if self._layout is None:
            return
        built = self._layout.dense_dim
        wanted = self.embedder.dim if self.embedder else None
        if wanted == built:
            return
        what = f"{built}-dimensional embeddings" if built else "no embeddings"
        configured = (
            f"{self.embedder.name} gives {wanted}-dimensional vectors"
            if self.embedder
            else "THREADSAGE_EMBEDDINGS=none gives none"
        )
        raise KnowledgeBaseError(
            f"The knowledge base '{self.collection}' was built with {what}, but {configured}. "
            f"Rebuild it with `threadsage ingest PATH... --rebuild`, or set "
            f"THREADSAGE_EMBEDDINGS back to what it was built with."
        )

    # --- writing ---------------------------------------------------------------------------

    def create(self) -> None:
        """Create the collection if it does not exist yet."""
        if self._layout is not None:
            return
        layout = Layout(self.embedder.dim if self.embedder else None, links=True, milvus_bm25=self.MAKES_MILVUS_BM25)
        schema, index = collection_schema(self._client, layout.dense_dim, layout.milvus_bm25)
        self._client.create_collection(self.collection, schema=schema)
        # Not `create_collection(index_params=…)`: pymilvus then sleeps half a second before it
        # first asks whether each index is built, though a new collection's are ready at once.
        self._client.create_index(self.collection, index, sync=False)
        self._wait_for_indexes()
        self._client.load_collection(self.collection)
        self._layout = layout

    def _wait_for_indexes(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        for name in self._client.list_indexes(self.collection):
            while (described := self._client.describe_index(self.collection, name))["state"] != "Finished":
                if described["state"] == "Failed" or time.monotonic() > deadline:
                    raise KnowledgeBaseError(f"index {name} of '{self.collection}' not built: {described}")
                time.sleep(0.02)

    def drop(self) -> None:
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)
        self._layout = None

    def write_chunks(self, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return
        layout = self._made()
        if not layout.links and any(c.document.url for c in chunks):
            log.warning("'%s' predates links: sources show paths until it is rebuilt (--rebuild)", self.collection)
        vectors = self.embedder.embed_documents([c.search_text for c in chunks]) if self.embedder else None
        self._store(
            [
                chunk_row(c, vectors[i] if vectors else None, layout.links, layout.languages)
                for i, c in enumerate(chunks)
            ]
        )

    @abstractmethod
    def _store(self, rows: list[dict[str, Any]]) -> None:
        """Write these rows (`schema.chunk_row`), to be seen from the next `flush` on."""

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        for start in range(0, len(doc_ids), 500):
            expr, params = self._render(field_in("doc_id", doc_ids[start : start + 500]))
            self._client.delete(self.collection, filter=expr, filter_params=params)

    def delete_stale(self, doc_id: str, keep_hash: str) -> None:
        """Delete the chunks of `doc_id` of every version but `keep_hash`: the second half of
        replacing a document (its new chunks are written first), used by ingestion and sync."""
        stale = field_in("doc_id", [doc_id]) & field_in("content_hash", [keep_hash], negated=True)
        expr, params = self._render(stale)
        self._client.delete(self.collection, filter=expr, filter_params=params)

    def flush(self) -> None:
        """Seal what was written, so that searches right after an ingest are fast."""
        self._shares.clear()
        if self._layout is not None:
            self._client.flush(self.collection)

    # --- reading ---------------------------------------------------------------------------

    def stored_documents(self) -> dict[str, StoredDocument]:
        """Every document in the collection with its content hash, keyed by doc id."""
        if self._layout is None:
            return {}
        docs: dict[str, StoredDocument] = {}
        for row in self._rows(["doc_id", "source", "content_hash"]):
            known = docs.get(row["doc_id"])
            docs[row["doc_id"]] = StoredDocument(
                row["doc_id"], row["source"], row["content_hash"], (known.chunks if known else 0) + 1
            )
        return docs

    def count(self) -> int:
        if self._layout is None:
            return 0
        return sum(1 for _ in self._rows(["doc_id"]))

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]] | None:
        """The number of chunks and how many hold each term (`support.text.terms` form): what the
        offline answerer weighs a question's words by — a word every chunk has says little about
        whether a passage answers. None on a Milvus server, whose BM25 statistics are not readable
        (the embedded back-end reads its index's)."""
        return None

    def category_counts(self) -> dict[str, int]:
        """Documents per category ("" for those ingested without one), for telling people what
        the bot covers. Reads every chunk's id: call it in a thread."""
        if self._layout is None:
            return {}
        documents = {row["doc_id"]: row["category"] for row in self._rows(["doc_id", "category"])}
        return dict(sorted(Counter(documents.values()).items()))

    def passages(self) -> Iterator[Hit]:
        """Every chunk, scored 0 (what the offline reader reads ahead). Reads them all: in a thread."""
        layout = self._layout
        return (row_hit(row, 0.0) for row in self._rows(layout.hit_fields)) if layout else iter(())

    def hits_of(
        self, ids: Sequence[str], categories: Sequence[str] | None = None, paths: Sequence[str] | None = None
    ) -> list[Hit]:
        """The chunks of `ids` that `categories` and `paths` admit (as `search`), in order, scored 0."""
        layout = self._layout
        if not ids or layout is None or (categories is not None and not categories):
            return []
        expr, params = self._render(narrowed(categories, paths) & field_in("id", list(ids)))
        rows = self._client.query(self.collection, filter=expr, filter_params=params, output_fields=layout.hit_fields)
        found = {row["id"]: row for row in rows}
        return [row_hit(found[i], 0.0) for i in ids if i in found]

    def _rows(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        return self._iterate(fields)  # every chunk's row, at least `fields`

    def _iterate(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        iterator = self._client.query_iterator(
            self.collection, batch_size=1000, filter='id != ""', output_fields=fields
        )
        try:
            while batch := iterator.next():
                yield from batch
        finally:
            iterator.close()

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
        """The k best chunks, of k places (`search.by_place`);
        `categories` (None: every one; empty: none) and `paths` (document paths) narrow the search."""
        query = " ".join(query.split())[:MAX_QUERY_CHARS]
        indexed = index_form(query)  # the form BM25 sees; the dense model gets the query as written
        layout = self._layout
        if not indexed or k <= 0 or layout is None or (categories is not None and not categories):
            return []
        narrowing = narrowed(categories, paths)
        # The other-language ranking: for a question in none of the documents' languages.
        language = language_of(query)
        other = layout.languages and layout.dense_dim is not None and language not in self._dense.document_languages
        dense = layout.dense_dim is not None and (self._dense.everywhere or other)
        vector = self.embedder.embed_query(query) if self.embedder and dense else None
        request = Query(
            indexed,
            index_terms(indexed),
            vector,
            max(k, CANDIDATES_PER_RETRIEVER),  # candidates, of which k places are kept
            self._render(narrowing),
            categories,
            paths,
            layout.hit_fields,
            other_languages=(
                self._render(narrowing & field_in(LANGUAGE_FIELD, [language], negated=True))
                if vector is not None and other
                else None
            ),
            dense_everywhere=self._dense.everywhere,
        )
        if self._closed:  # the in-process index would still answer; a closed one must not
            raise KnowledgeBaseError(f"Search failed on {self._uri}: the knowledge base was closed")
        try:
            if request.other_languages is None and (gloss := self._glossed(query, language)):
                some_in_its_language = self._share_in(language) > 0
                return searched_with_gloss(request, gloss, some_in_its_language, lambda r: self._places(r, k), k)
            return self._places(request, k)
        except MilvusException as exc:
            raise KnowledgeBaseError(f"Search failed on {self._uri}: {exc}") from exc

    def _places(self, request: Query, k: int) -> list[Hit]:
        """The best hits of k places: from the first `FIRST_HITS_PER_PLACE` × k hits of the ranking
        when they settle the places (`search.places_known`), else from all of `request`'s. The
        first list is the start of the second (the fused rankings read the same candidates,
        `Query.pool`), so either way the result is the same."""
        first = replace(request, k=min(request.k, FIRST_HITS_PER_PLACE * k))
        hits = self._rank(first)
        if first.k < request.k and not places_known(hits, first.k, k):
            hits = self._rank(request)
        return by_place(hits, k)

    def _glossed(self, query: str, language: Language) -> str:
        """For a question in none of the documents' languages, its words glossed into one of them
        in the form BM25 sees (`glossing.py`: Chinese into English); "" when there is no gloss."""
        if language in self._dense.document_languages:
            return ""
        into = next((d for d in self._dense.document_languages if can_gloss(language, d)), None)
        if into is None or self._share_in(language) >= FOREIGN_SHARE:
            return ""  # the documents are in the question's language, whatever the setting says
        return index_form(glossed(query))

    def _share_in(self, language: Language) -> float:
        """The share of passages in `language` (0 in a collection made before passages had one): a corpus
        mostly in the question's language needs no gloss. Counted again after this process writes, or
        after SHARE_SECONDS when another process (a worker, `threadsage ingest`) may have."""
        layout = self._layout
        if layout is None or not layout.languages:
            return 0.0
        counted = self._shares.get(language)
        if counted is None or time.monotonic() - counted[1] > SHARE_SECONDS:
            total = self._counted(Filter())
            share = self._counted(field_in(LANGUAGE_FIELD, [language])) / total if total else 0.0
            counted = self._shares[language] = (share, time.monotonic())
        return counted[0]

    def _counted(self, narrowing: Filter) -> int:
        """How many passages `narrowing` admits, counted by Milvus."""
        expr, params = self._render(narrowing)
        rows = self._client.query(
            self.collection, filter=expr or 'id != ""', filter_params=params, output_fields=["count(*)"]
        )
        return int(rows[0]["count(*)"])

    @abstractmethod
    def _rank(self, query: Query) -> list[Hit]:
        """The query's k best hits, best first."""

    def _ranked_by_milvus(
        self, data: Any, anns_field: str, metric: str, limit: int, narrowing: FilterArgs, fields: list[str]
    ) -> list[dict[str, Any]]:
        """One ranking by Milvus: `data` (a vector, or text for its BM25) against `anns_field`."""
        expr, params = narrowing
        result: list[list[dict[str, Any]]] = self._client.search(
            self.collection,
            data=[data],
            anns_field=anns_field,
            limit=limit,
            filter=expr,
            filter_params=params,
            search_params={"metric_type": metric},
            output_fields=fields,
        )
        return result[0]

    # --- helpers ---------------------------------------------------------------------------

    def _render(self, narrowing: Filter) -> FilterArgs:
        return narrowing.render(inline=self._inline_filters)

    def _made(self) -> Layout:
        if self._layout is None:
            raise KnowledgeBaseError(f"The knowledge base '{self.collection}' has no collection yet: create it first")
        return self._layout
