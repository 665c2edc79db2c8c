"""One sync of one source: scan it, index what is new or changed, prune what is gone, remember.

Writes go through `Ingestor.ingest_documents`, which replaces a changed document by writing its
new version before deleting the old one: a question answered meanwhile sees one version, whole.
The knowledge base is written by one sync at a time (`writing`), off the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.ingestion.connectors.base import Connector, Entry, Scan
from threadsage.ingestion.pipeline import DocumentChange, Ingestor
from threadsage.ingestion.state import SourceStatus, StateStore

log = logging.getLogger(__name__)

# Told what a sync or an ingest added, changed and removed (the knowledge loop: `threadsage.chat.knowledge_loop`).
KnowledgeChanged = Callable[[list[DocumentChange]], Awaitable[None]]


@dataclass
class SyncEngine:
    kb: KnowledgeBase
    store: StateStore
    chunk_chars: int
    chunk_overlap: int
    writing: asyncio.Lock
    on_change: KnowledgeChanged | None = None
    _changes: list[DocumentChange] = field(default_factory=list)

    async def sync(self, connector: Connector) -> SourceStatus:
        """Sync `connector`'s source once. A failure of the whole source is reported in the
        status (and the log), never raised: one source must not stop the others."""
        name = connector.spec.name
        started = time.perf_counter()
        known = self.store.load(name)
        try:
            scan = await connector.scan(known)  # cancelled by a stop: nothing written yet
            async with self.writing:
                applying = asyncio.create_task(asyncio.to_thread(self._apply, scan, known.entries))
                try:
                    status = await asyncio.shield(applying)
                except asyncio.CancelledError:
                    await applying  # writes finish before the process closes the knowledge base
                    raise
        except Exception as exc:
            status = self.store.status(name)
            status.error = f"{type(exc).__name__}: {exc}"[:500]
            log.warning("source %s: sync failed: %s", name, status.error, exc_info=log.isEnabledFor(logging.DEBUG))
            return status
        status.seconds = time.perf_counter() - started
        self.store.save(name, status_entries(scan, known.entries), scan.cursor or known.cursor, status)
        for key, reason in scan.failed:
            log.warning("source %s: %s: %s", name, key, reason)
        log.info("source %s: %s", name, status.summary())
        changes, self._changes = self._changes, []
        await self.changed(changes)
        return status

    async def changed(self, changes: list[DocumentChange]) -> None:
        """Tell `on_change` what changed; its failure is logged, the sync stands."""
        if changes and self.on_change is not None:
            try:
                await self.on_change(changes)
            except Exception:
                log.exception("the knowledge loop failed on %d changed documents", len(changes))

    def _apply(self, scan: Scan, known: Mapping[str, Entry]) -> SourceStatus:
        status = SourceStatus(unchanged=len(scan.unchanged), failures=list(scan.failed))
        ingestor = Ingestor(self.kb, self.chunk_chars, self.chunk_overlap)
        if scan.documents:
            report = ingestor.ingest_documents(doc for doc, _ in scan.documents)
            status.new, status.changed = report.new, report.changed
            status.unchanged += report.unchanged
            self._changes += report.changes
        gone = removed_keys(scan, known)
        if gone:
            removal = ingestor.remove_sources(gone)
            status.removed = removal.documents_removed
            self._changes += removal.changes
        status.documents = len(status_entries(scan, known))
        return status


def removed_keys(scan: Scan, known: Mapping[str, Entry]) -> set[str]:
    """Documents the last sync had that are gone now: deleted upstream, or absent from a complete
    listing (a failed document keeps its old version)."""
    if not scan.complete:
        return set(scan.gone)
    present = {doc.source for doc, _ in scan.documents} | set(scan.unchanged) | {key for key, _ in scan.failed}
    return (set(known) - present) | set(scan.gone)


def status_entries(scan: Scan, previous: Mapping[str, Entry]) -> dict[str, Entry]:
    """The entries to remember: the new and unchanged documents', a failed one's previous entry
    (so it is tried again, and not pruned), and with an incomplete listing all the others too."""
    entries = {**scan.unchanged, **{doc.source: entry for doc, entry in scan.documents}}
    for key, _ in scan.failed:
        if key in previous:
            entries.setdefault(key, {**previous[key], "version": ""})
    if not scan.complete:
        entries = {**{k: v for k, v in previous.items() if k not in scan.gone}, **entries}
    return entries
