"""The offline reader's passages read ahead: a running bot embeds every passage the knowledge base
holds (`adapters.meaning.minilm`, kept on disk) in the background, at its start and after each
change, so that a question finds the passages it reads made. A question's own embeddings go first
(`minilm.vectors(ahead=True)` waits for them).

Why not at ingestion: embedding costs about 60 ms a passage on 2 cores, BM25 indexing under 1 ms.
Embedding in the ingest made `threadsage ingest` and each live sync wait for it (a 1,000-chunk
corpus: 64 s instead of 1), and a bot on a language model, which never reads the vectors, paid it
too. A question that comes before its passages were read ahead embeds them itself (about 1 s for a
pool of 20), and keeps them.
"""

from __future__ import annotations

import asyncio
import logging
import time

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.meaning import minilm
from threadsage.adapters.reasoner import label_of

log = logging.getLogger(__name__)

BATCH = 4  # passages embedded at a time: a question's own passages wait at most this long behind them


def texts_of(kb: KnowledgeBase) -> list[str]:
    """What of each passage the reader reads (`minilm.passage_text`), as the search returns them."""
    return [minilm.passage_text(label_of(title, heading), text) for title, heading, text in kb.passages()]


class ReadingAhead:
    """Reads ahead at its start and again after each `changed`, until stopped; one batch at a time
    in a thread (the event loop and the questions' own embeddings go on meanwhile). `listing` is the
    lock the syncs write under: the passages are listed between two syncs' writes."""

    def __init__(self, kb: KnowledgeBase, listing: asyncio.Lock) -> None:
        self.kb, self.listing = kb, listing
        self._wake = asyncio.Event()
        self._wake.set()

    def changed(self) -> None:
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Never raises: a failure is logged, and the questions embed their passages themselves."""
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                waking = asyncio.create_task(self._wake.wait())
                await asyncio.wait({waking, stopping}, return_when=asyncio.FIRST_COMPLETED)
                waking.cancel()
                self._wake.clear()
                await self.read_once(stop)
        except Exception as exc:  # noqa: BLE001 - a broken install or store: answers go on without
            log.warning("offline reader: not reading ahead: %s", exc)
        finally:
            stopping.cancel()

    async def read_once(self, stop: asyncio.Event) -> None:
        """Embed every passage not yet read (until `stop`)."""
        started = time.perf_counter()
        async with self.listing:
            texts = await asyncio.to_thread(texts_of, self.kb)
        unread = await asyncio.to_thread(minilm.unread, texts)
        for start in range(0, len(unread), BATCH):
            if stop.is_set():
                return
            await asyncio.to_thread(minilm.vectors, unread[start : start + BATCH], ahead=True)
        if unread:
            log.info("offline reader: %d passages read ahead in %.1f s", len(unread), time.perf_counter() - started)
