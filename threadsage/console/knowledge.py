"""The knowledge base as the console shows it: documents per category and per source, chunks, the
embedding mode and search back-end, the recorded ingestion runs, and each live-synced source's
last sync. Counting reads every chunk's
id, so it runs in a thread and is kept for a minute."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.ingestion.spec import load_sources
from threadsage.ingestion.state import StateStore
from threadsage.records.ingestions import IngestionLog
from threadsage.settings.environment import Settings
from threadsage.settings.sections import DocumentSettings

KnowledgeInfo = Callable[[], Awaitable[dict[str, Any]]]
CACHE_SECONDS = 60.0


def knowledge_info(settings: Settings, kb: KnowledgeBase | None, ingestions: IngestionLog) -> KnowledgeInfo:
    """What the knowledge-base view shows. Without `kb` (`threadsage serve` opens none: its
    workers do) only the settings and the ingestion runs. It shows settings of three sections
    (embeddings, storage, sources), so it takes `Settings`."""
    cached: dict[str, Any] = {}
    embeddings = settings.embeddings if settings.embeddings != "openai" else f"openai ({settings.embedding_model})"

    async def info() -> dict[str, Any]:
        facts: dict[str, Any] = {"embeddings": embeddings if settings.embeddings != "none" else "none (BM25 only)"}
        facts["search"] = ("Milvus server" if settings.milvus_uri else "Milvus Lite") + (
            " · BM25 + dense" if settings.embeddings != "none" else " · BM25"
        )
        if kb is None:
            facts["note"] = "This process answers no questions: document counts show where the workers run."
        else:
            if not cached or time.monotonic() - cached["at"] > CACHE_SECONDS:
                cached.update(await asyncio.to_thread(_count, kb), at=time.monotonic())
            facts |= {k: v for k, v in cached.items() if k != "at"}
        facts["ingestions"] = await ingestions.latest()
        facts["sources_synced"] = await asyncio.to_thread(synced_sources, settings, settings.data_dir)
        return facts

    return info


def synced_sources(settings: DocumentSettings, data_dir: Path) -> list[dict[str, Any]]:
    """Each live-synced source (`THREADSAGE_SOURCES`) with what its last sync left, kept under
    `data_dir`: when, the summary, and the documents that failed (`threadsage.ingestion.state`)."""
    if settings.sources is None:
        return []
    try:
        specs = load_sources(settings.sources)
    except ValueError as exc:
        return [{"name": str(settings.sources), "at": 0, "summary": f"unreadable: {exc}", "failures": []}]
    store = StateStore(data_dir / "sources")
    rows = []
    for spec in specs:
        status = store.status(spec.name)
        summary = status.summary() if status.last_sync else "not synced yet"
        rows.append(
            {"name": spec.name, "at": int(status.last_sync * 1000), "summary": summary, "failures": status.failures}
        )
    return rows


def _count(kb: KnowledgeBase) -> dict[str, Any]:
    stored = kb.stored_documents()
    sources = Counter(source_group(d.source) for d in stored.values())
    return {
        "documents": len(stored),
        "chunks": sum(d.chunks for d in stored.values()),
        "categories": kb.category_counts(),
        "sources": dict(sources.most_common(12)),
    }


def source_group(source: str) -> str:
    """Where a document came from, coarsely: a site's host, a connector's name, or a folder."""
    if "://" in source:
        return source.split("://", 1)[1].split("/", 1)[0]
    head, sep, _ = source.partition(":")
    if sep and len(head) > 1 and "/" not in head:  # a connector's "name:id", not "C:\\…"
        return head
    return PurePosixPath(source).parent.name or "(top level)"
