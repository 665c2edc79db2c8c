"""The offline reader's passages read ahead in a running bot: every passage is embedded in the
background at the start and again after a change, each once, while the event loop goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.ingestion.pipeline import Ingestor
from threadsage.ingestion.reading_ahead import ReadingAhead, texts_of


async def until_all_read(kb: KnowledgeBase, seconds: float = 30) -> None:
    for _ in range(int(seconds * 10)):
        if not minilm.unread(list(texts_of(kb).values())):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"passages still unread after {seconds} s")


async def test_passages_are_read_ahead_at_the_start_and_after_a_change(kb, tmp_path: Path, embedded: list[str]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel.md").write_text("# Travel\nTrains are booked through the travel desk.\n")
    (folder / "leave.md").write_text("# Leave\nContractors get twenty days of annual leave.\n")
    Ingestor(kb, 1200, 150).ingest_paths([folder])
    assert embedded == []  # ingestion itself embeds nothing
    stop, listing = asyncio.Event(), asyncio.Lock()
    ahead = ReadingAhead(kb, listing, MeaningIndex())
    running = asyncio.create_task(ahead.run(stop))
    await until_all_read(kb)
    assert sorted(embedded) == sorted(texts_of(kb).values()) and len(embedded) == 2

    (folder / "bikes.md").write_text("# Bikes\nThe bicycle cage code is given out by the porter.\n")
    Ingestor(kb, 1200, 150).ingest_paths([folder])
    ahead.changed()
    await until_all_read(kb)
    assert len(embedded) == 3  # only the new passage

    stop.set()
    await asyncio.wait_for(running, 5)
