"""BM25 in this process for the embedded default: a tantivy index beside the Milvus Lite file.

Why not Milvus Lite's own BM25: it scores in pure Python over whole posting lists (search time
grows linearly with the index) and keeps BM25 statistics per storage segment, so a file ingested
alone after a large ingest scores so low that its own facts are not found. Tantivy (compiled, well
kept) ranks with statistics over the whole index, and fast (the figures before and after:
docs/performance.md, "Ingestion and search speed").

What it holds: per chunk, the terms BM25 counts (`text.index_terms`, the same analysis Milvus's
analyzer applied), plus what a search hit shows and what ingestion compares (source, content
hash). Hits are thus read from one snapshot: staged changes (`add`, `delete`) become visible
together at `commit`, so a search sees a document's old chunks or its new ones, never a mix.
Milvus Lite keeps the rows and the dense vectors.

Another process's commits are picked up too: the reader reloads when the index's meta file
changes (tantivy's "on commit" policy), and `refresh` does it at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import tantivy

from threadsage.support.private_files import private_dir

# Stored per chunk: everything a hit shows, and what `stored_documents` reports.
TEXT_FIELDS = ("id", "doc_id", "source", "url", "path", "title", "heading", "category", "text", "content_hash")
_KEYS = ("id", "doc_id", "category", "path")  # raw, indexed: deletes and filters
_WRITER_HEAP = 64_000_000


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in TEXT_FIELDS:
        if name in _KEYS:
            builder.add_text_field(name, stored=True, tokenizer_name="raw")
        else:
            builder.add_text_field(name, stored=True, index_option="basic", tokenizer_name="raw")
    builder.add_integer_field("chunk_index", stored=True)
    # Terms are analysed in Python and joined by spaces; tantivy only splits them again.
    builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    return builder.build()


class LexicalIndex:
    def __init__(self, directory: Path) -> None:
        private_dir(directory)
        self._schema = _schema()
        self._index = tantivy.Index(self._schema, str(directory), reuse=True)
        self._writer: tantivy.IndexWriter | None = None
        self._staged = False

    # --- writing ---------------------------------------------------------------------------

    def add(self, row: dict[str, Any], terms: Sequence[str]) -> None:
        """Stage one chunk: `row` has the stored fields, `terms` what BM25 counts."""
        document = tantivy.Document()
        for name in TEXT_FIELDS:
            document.add_text(name, row.get(name) or "")  # a collection made before links has none
        document.add_integer("chunk_index", row["chunk_index"])
        document.add_text("body", " ".join(terms))
        self._write().add_document(document)
        self._staged = True

    def delete(self, doc_ids: Iterable[str]) -> None:
        """Stage the removal of every chunk of these documents (staged adds after it stay)."""
        writer = self._write()
        for doc_id in doc_ids:
            writer.delete_documents_by_term("doc_id", doc_id)
            self._staged = True

    def delete_stale(self, doc_id: str, keep_hash: str) -> None:
        """Stage the removal of the chunks of `doc_id` of every version but `keep_hash`."""
        stale = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "doc_id", doc_id)),
                (tantivy.Occur.MustNot, tantivy.Query.term_query(self._schema, "content_hash", keep_hash)),
            ]
        )
        self._write().delete_documents_by_query(stale)
        self._staged = True

    def clear(self) -> None:
        self._write().delete_all_documents()
        self._staged = True
        self.commit()

    def commit(self) -> None:
        """Make everything staged visible at once, to this process and others."""
        if self._writer is not None and self._staged:
            self._writer.commit()
            self._staged = False
            self._index.reload()

    def refresh(self) -> None:
        """See the latest commit now (another process's too) rather than after tantivy's delay."""
        self._index.reload()

    def close(self) -> None:
        """Drop what was staged but not committed, and release the writer's lock."""
        if self._writer is not None:
            if self._staged:
                self._writer.rollback()
            self._writer.wait_merging_threads()  # consumes the writer: finish merges, unlock
            self._writer = None

    def _write(self) -> tantivy.IndexWriter:
        # Only a writing process takes the lock; searching needs none.
        if self._writer is None:
            self._writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=1)
        return self._writer

    # --- reading ---------------------------------------------------------------------------

    def search(
        self,
        terms: Sequence[str],
        limit: int,
        categories: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
    ) -> list[tuple[float, dict[str, Any]]]:
        """The best `limit` chunks by BM25 (k1 1.2, b 0.75) and their rows; a term repeated in
        the query weighs that many times, as in Milvus's BM25 query vectors."""
        if not terms or limit <= 0:
            return []
        should = []
        for term, weight in Counter(terms).items():
            query = tantivy.Query.term_query(self._schema, "body", term, index_option="freq")
            should.append((tantivy.Occur.Should, tantivy.Query.boost_query(query, weight) if weight > 1 else query))
        query = tantivy.Query.boolean_query(should)
        narrowing = [(field, values) for field, values in (("category", categories), ("path", paths)) if values]
        if narrowing:
            # A filter must narrow, not score: its clause adds nothing to a hit's score.
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, query)]
                + [
                    (tantivy.Occur.Must, tantivy.Query.const_score_query(self._any_of(field, values), 0.0))
                    for field, values in narrowing
                ]
            )
        searcher = self._index.searcher()
        found = searcher.search(query, limit, count=False).hits
        return [(float(score), _row(searcher.doc(address))) for score, address in found]

    def rows(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The rows of those of `ids` that this snapshot has, by id."""
        if not ids:
            return {}
        searcher = self._index.searcher()
        found = searcher.search(self._any_of("id", ids), len(ids), count=False).hits
        return {row["id"]: row for row in (_row(searcher.doc(address)) for _, address in found)}

    def count(self) -> int:
        return int(self._index.searcher().num_docs)

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """The number of chunks, and how many of them hold each term (one snapshot)."""
        searcher = self._index.searcher()
        return int(searcher.num_docs), {t: int(searcher.doc_freq("body", t)) for t in set(terms)}

    def iterate(self) -> Iterator[dict[str, Any]]:
        """Every chunk's row, a page at a time (one snapshot throughout)."""
        searcher = self._index.searcher()
        if searcher.num_docs:
            for _, address in searcher.search(tantivy.Query.all_query(), searcher.num_docs, count=False).hits:
                yield _row(searcher.doc(address))

    def _any_of(self, field: str, values: Sequence[str]) -> tantivy.Query:
        return tantivy.Query.term_set_query(self._schema, field, list(values))


def _row(document: tantivy.Document) -> dict[str, Any]:
    stored = document.to_dict()
    return {name: values[0] for name, values in stored.items()}
