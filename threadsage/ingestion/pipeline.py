"""Ingestion: files (or in-memory documents) into the knowledge base, idempotently.

A document is identified by its source; what is stored with it is a fingerprint of its bytes,
its category and the chunking settings. Unchanged documents write nothing, changed ones replace
their chunks (the new version written, then the old one deleted: a search sees one or the other),
and with `prune` the documents that disappeared from the ingested folders go too.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from threadsage.adapters.documents.chunking import Chunk, chunk_document
from threadsage.adapters.documents.loaders import Document, discover_files, load_file, named_path
from threadsage.adapters.documents.reading import parse_within_budget
from threadsage.adapters.documents.sections import UnreadableDocument
from threadsage.adapters.knowledge import KnowledgeBase, validate_category

CHUNKER_VERSION = 4  # bump when loading or chunking changes what is stored
WRITE_BATCH = 256
VERSION_CHARS = 8  # of the fingerprint: what a chunk's id carries of its document's version


@dataclass(frozen=True)
class DocumentChange:
    """A document an ingest or sync added, changed or removed: what the knowledge loop
    (`threadsage.chat.knowledge_loop`) needs to mark the answers that cited it stale and to re-ask the open
    gaps. `version` is the start of the new fingerprint (as in chunk ids), "" when removed."""

    doc_id: str
    source: str
    title: str
    path: str
    category: str
    kind: str  # "new", "changed", "removed"
    version: str


@dataclass
class IngestReport:
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    chunks_added: int = 0
    chunks_updated: int = 0
    chunks_removed: int = 0
    documents_removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    seconds: float = 0.0
    changes: list[DocumentChange] = field(default_factory=list)

    @property
    def documents(self) -> int:
        return self.new + self.changed + self.unchanged

    @property
    def ok(self) -> bool:
        return not self.skipped

    def summary(self) -> str:
        line = (
            f"{self.documents} files ({self.new} new, {self.changed} changed, "
            f"{self.unchanged} unchanged): {self.chunks_added} chunks added, "
            f"{self.chunks_updated} updated, {self.chunks_removed} removed"
        )
        if self.documents_removed:
            line += f" ({self.documents_removed} files pruned)"
        if self.skipped:
            line += f"; {len(self.skipped)} skipped"
        if self.ignored:
            line += f"; {len(self.ignored)} of unsupported types ignored"
        return f"{line}; {self.seconds:.1f} s"


class Ingestor:
    def __init__(
        self,
        kb: KnowledgeBase,
        chunk_chars: int,
        chunk_overlap: int,
        on_progress: Callable[[str, int], None] | None = None,
    ) -> None:
        self.kb = kb
        self.chunk_chars = chunk_chars
        self.chunk_overlap = chunk_overlap
        self._on_progress = on_progress or (lambda _name, _total: None)
        self._pending: list[Chunk] = []
        self._stale: list[tuple[str, str]] = []  # (doc_id, new hash) whose old chunks go once the new are in
        self._total = 0

    def ingest_paths(
        self, paths: list[Path], category: str = "", prune: bool = False, base_url: str = ""
    ) -> IngestReport:
        """`base_url`: where the folders' files are published (see `links`), for citation links."""
        validate_category(category)
        started = time.perf_counter()
        files, unsupported = discover_files(paths)
        self._total = len(files)
        report = IngestReport(ignored=[str(p) for p in unsupported])
        documents = self._load_all(files, category, base_url, report)
        seen = {str(file) for file, _ in files}
        self._ingest(documents, report)
        if prune:
            roots = [named_path(p) for p in paths]
            self._prune(lambda source: _under_any(source, roots) and source not in seen, report)
        self.kb.flush()
        report.seconds = time.perf_counter() - started
        return report

    def ingest_documents(self, documents: Iterable[Document]) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        self._ingest(documents, report)
        self.kb.flush()
        report.seconds = time.perf_counter() - started
        return report

    # --- steps ---------------------------------------------------------------------------

    def _load_all(
        self, files: list[tuple[Path, Path]], category: str, base_url: str, report: IngestReport
    ) -> Iterable[Document]:
        for file, root in files:
            try:
                yield load_file(file, root, category, base_url, parse_within_budget)
            except UnreadableDocument as exc:
                report.skipped.append((str(file), str(exc)))
                self._on_progress(file.name, self._total)

    def _ingest(self, documents: Iterable[Document], report: IngestReport) -> None:
        self.kb.check_embeddings()
        self.kb.create()
        stored = self.kb.stored_documents()
        for document in documents:
            document = replace(document, content_hash=self._fingerprint(document))
            known = stored.get(document.doc_id)
            if known and known.content_hash == document.content_hash:
                report.unchanged += 1
            else:
                chunks = chunk_document(document, self.chunk_chars, self.chunk_overlap)
                if known:
                    self._stale.append((document.doc_id, document.content_hash))
                    report.changed += 1
                    report.chunks_updated += len(chunks)
                else:
                    report.new += 1
                    report.chunks_added += len(chunks)
                report.changes.append(_change(document, "changed" if known else "new"))
                self._pending.extend(chunks)
                if len(self._pending) >= WRITE_BATCH:
                    self._write_pending()
            self._on_progress(document.path, self._total)
        self._write_pending()

    def remove_sources(self, sources: Collection[str]) -> IngestReport:
        """Delete the documents whose `source` is one of `sources`: what a sync found gone."""
        report = IngestReport()
        self._prune(lambda source: source in sources, report)
        self.kb.flush()
        return report

    def _prune(self, gone: Callable[[str], bool], report: IngestReport) -> None:
        doomed = [doc for doc in self.kb.stored_documents().values() if gone(doc.source)]
        if doomed:
            self.kb.delete_documents([doc.doc_id for doc in doomed])
        report.documents_removed += len(doomed)
        report.changes += [DocumentChange(d.doc_id, d.source, "", "", "", "removed", "") for d in doomed]
        report.chunks_removed += sum(doc.chunks for doc in doomed)

    def _write_pending(self) -> None:
        """Write the new chunks, then delete the old versions of the documents they replace."""
        self.kb.write_chunks(self._pending)
        self._pending = []
        for doc_id, keep_hash in self._stale:
            self.kb.delete_stale(doc_id, keep_hash)
        self._stale = []

    def _fingerprint(self, document: Document) -> str:
        embedder = self.kb.embedder.name if self.kb.embedder else "bm25"
        settings = f"|{document.category}|{self.chunk_chars}|{self.chunk_overlap}|{CHUNKER_VERSION}|{embedder}"
        if document.url:  # a new link rewrites the document; one without keeps the fingerprint it had
            settings += f"|{document.url}"
        return hashlib.sha256((document.content_hash + settings).encode()).hexdigest()


def _change(document: Document, kind: str) -> DocumentChange:
    version = document.content_hash[:VERSION_CHARS]
    return DocumentChange(
        document.doc_id, document.source, document.title, document.path, document.category, kind, version
    )


def _under_any(source: str, roots: list[Path]) -> bool:
    path = Path(source)
    return any(path == root or root in path.parents for root in roots)
