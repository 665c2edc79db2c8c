"""The running bot's upkeep of its knowledge: each source of `THREADSAGE_SOURCES` synced on its
schedule (a folder also on every change seen by `watchfiles`, a Slack source on the threads the bot
marked as changed, looked for every `MARKS_POLL` seconds), and, on Milvus Lite, the ingest
requests `threadsage ingest` hands over (`handoff.py`).

With `REDIS_URL`, only the process holding a Redis lock syncs (a `serve` + worker deployment
has several processes); another takes over within `SOURCES_LOCK_SECONDS` of its holder's death,
and at once (its next try, a quarter of that) when the holder stops cleanly and releases it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from redis.asyncio import Redis
from redis.asyncio.lock import Lock

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.delivery.coordination import Coordinator
from threadsage.ingestion.connectors import connector_for
from threadsage.ingestion.connectors.base import Connector
from threadsage.ingestion.connectors.folder import FolderConnector
from threadsage.ingestion.engine import KnowledgeChanged, SyncEngine
from threadsage.ingestion.inbox import IngestInbox
from threadsage.ingestion.pipeline import DocumentChange, Ingestor
from threadsage.ingestion.reading_ahead import ReadingAhead
from threadsage.ingestion.spec import SourceSpec, load_sources
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings
from threadsage.settings.sections import DocumentSettings, PlatformSettings, StorageSettings

log = logging.getLogger(__name__)

INBOX_POLL = 0.5
MARKS_POLL = 2.0


@runtime_checkable
class Marked(Protocol):
    """A connector that learns of changes from the bot (a Slack source: `marks`)."""

    async def waiting(self) -> bool: ...


async def keep_knowledge(
    settings: Settings,
    kb: KnowledgeBase,
    stop: asyncio.Event,
    on_change: KnowledgeChanged | None = None,
    marks: Coordinator | None = None,
    read_ahead: MeaningIndex | None = None,
) -> None:
    """Until `stop`: sync the sources, answer handed-over ingests; each one's changes go to
    `on_change`; a Slack source also reads the threads the bots `marks`; with `read_ahead` (the
    offline reader answers), the passages are embedded in the background and fill that index
    (`reading_ahead.py`).
    Never raises: a broken sources file is logged, the bot answers anyway. Files are read within
    the process's budget, which the composition root set (`open_runtime`). It puts the live sync
    together from three sections (storage, chunking, sources), so it takes `Settings`."""
    writing = asyncio.Lock()
    store = StateStore(settings.data_dir / "sources")
    tasks = []
    if read_ahead is not None:
        ahead = ReadingAhead(kb, writing, read_ahead)
        tasks.append(asyncio.create_task(ahead.run(stop)))
        on_change = _also(ahead, on_change)
    engine = SyncEngine(kb, store, settings.chunk_chars, settings.chunk_overlap, writing, on_change)
    if settings.sources:
        try:
            specs = load_sources(settings.sources)
        except ValueError as exc:
            log.error("live sync is off: %s", exc)
            specs = []
        if specs:
            leading = _sync_while_leading(settings, settings, settings, engine, specs, stop, marks)
            tasks.append(asyncio.create_task(leading))
    if not settings.milvus_uri:
        tasks.append(asyncio.create_task(_answer_inbox(settings.data_dir, engine, stop)))
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, Exception):
            log.error("live sync stopped: %s", outcome, exc_info=outcome)


def _also(ahead: ReadingAhead, on_change: KnowledgeChanged | None) -> KnowledgeChanged:
    async def changed(changes: list[DocumentChange]) -> None:
        ahead.changed()
        if on_change is not None:
            await on_change(changes)

    return changed


@asynccontextmanager
async def knowledge_upkeep(
    settings: Settings,
    kb: KnowledgeBase,
    on_change: KnowledgeChanged | None = None,
    marks: Coordinator | None = None,
    read_ahead: MeaningIndex | None = None,
) -> AsyncIterator[None]:
    """`keep_knowledge` (hence the whole `Settings`) in the background while inside; on leaving, a
    sync in flight is cancelled (after its writes, see `SyncEngine.sync`) before the knowledge base
    is closed."""
    stop = asyncio.Event()
    upkeep = keep_knowledge(settings, kb, stop, on_change, marks, read_ahead)
    task = asyncio.create_task(upkeep, name="knowledge-upkeep")
    try:
        yield
    finally:
        stop.set()
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


async def sync_sources(engine: SyncEngine, connectors: list[Connector], stop: asyncio.Event) -> None:
    """Each source on its own schedule until `stop`; a folder also wakes on its changes, a Slack
    source on the threads the bot marked."""
    wakes = [asyncio.Event() for _ in connectors]

    async def on_stop() -> None:
        await stop.wait()
        for wake in wakes:
            wake.set()

    async with asyncio.TaskGroup() as group:
        group.create_task(on_stop())
        for connector, wake in zip(connectors, wakes, strict=True):
            group.create_task(_every(engine, connector, wake, stop))
            if isinstance(connector, FolderConnector):
                group.create_task(_watch(connector, wake, stop))
            elif isinstance(connector, Marked):
                group.create_task(_look_for_marks(connector, wake, stop))


async def _every(engine: SyncEngine, connector: Connector, wake: asyncio.Event, stop: asyncio.Event) -> None:
    while not stop.is_set():
        wake.clear()
        await engine.sync(connector)
        with suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), connector.spec.interval)


async def _watch(connector: FolderConnector, wake: asyncio.Event, stop: asyncio.Event) -> None:
    try:
        async for _ in connector.watch(stop):
            wake.set()
    except (OSError, RuntimeError) as exc:  # a folder that is not there yet: its sync reports it
        log.warning("source %s: not watching %s: %s", connector.spec.name, connector.root, exc)


async def _look_for_marks(connector: Marked, wake: asyncio.Event, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            if await connector.waiting():
                wake.set()
        except Exception as exc:  # noqa: BLE001 - Redis away: the schedule still syncs
            log.warning("live sync: cannot read the marked Slack threads: %s", exc)
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), MARKS_POLL)


async def _sync_while_leading(
    storage: StorageSettings,
    sources: DocumentSettings,
    platform: PlatformSettings,
    engine: SyncEngine,
    specs: list[SourceSpec],
    stop: asyncio.Event,
    marks: Coordinator | None = None,
) -> None:
    connectors = [connector_for(spec, sources, storage.data_dir, platform, marks) for spec in specs]
    log.info("live sync of %d sources: %s", len(specs), ", ".join(s.name for s in specs))
    if not storage.redis_url:
        await sync_sources(engine, connectors, stop)
        return
    redis = Redis.from_url(storage.redis_url)
    ttl = sources.sources_lock_seconds
    try:
        while not stop.is_set():
            lock = redis.lock(f"{storage.redis_prefix}sources-sync", timeout=ttl, thread_local=False)
            try:
                leading = await lock.acquire(blocking=False)
            except Exception as exc:  # noqa: BLE001 - Redis away: try again later
                log.warning("live sync waits for Redis: %s", exc)
                leading = False
            if leading:
                log.info("this process syncs the sources (pid %d)", os.getpid())
                await _lead(lock, ttl, lambda done: sync_sources(engine, connectors, done), stop)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), ttl / 4)
    finally:
        await redis.aclose()


async def _lead(lock: Lock, ttl: float, work: Callable[[asyncio.Event], Awaitable[None]], stop: asyncio.Event) -> None:
    """Run `work` while the lock is renewed; stop it when the lock is lost or at `stop`."""
    done = asyncio.Event()

    async def renew() -> None:
        while not done.is_set():
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), ttl / 3)
            if stop.is_set():
                break
            try:
                await lock.reacquire()
            except Exception as exc:  # noqa: BLE001 - lost or Redis away: another process may lead
                log.warning("live sync: lost the sources lock (%s)", exc)
                break
        done.set()

    renewing = asyncio.create_task(renew())
    try:
        await work(done)
    finally:  # also when the process stops (cancelled): released, another process leads at once
        done.set()
        renewing.cancel()
        with suppress(Exception, asyncio.CancelledError):
            await renewing
        with suppress(Exception):
            await lock.release()


async def _answer_inbox(data_dir: Path, engine: SyncEngine, stop: asyncio.Event) -> None:
    inbox = IngestInbox(data_dir)
    inbox.open()
    try:
        while not stop.is_set():
            for ident, request in inbox.requests():
                async with engine.writing:
                    result, changes = await asyncio.to_thread(_ingest_request, engine, request)
                inbox.answer(ident, result)
                await engine.changed(changes)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), INBOX_POLL)
    finally:
        inbox.close()


def _ingest_request(engine: SyncEngine, request: dict[str, Any]) -> tuple[dict[str, Any], list[DocumentChange]]:
    try:
        paths = [Path(str(p)) for p in request.get("paths", [])]
        report = Ingestor(engine.kb, engine.chunk_chars, engine.chunk_overlap).ingest_paths(
            paths,
            category=str(request.get("category", "")),
            prune=bool(request.get("prune")),
            base_url=str(request.get("base_url", "")),
        )
    except Exception as exc:  # noqa: BLE001 - told to the waiting command, the bot goes on
        return {"ok": False, "error": str(exc)}, []
    changes, report.changes = report.changes, []
    return {"report": asdict(report)}, changes
