"""The offline reader's passages read ahead: a running bot embeds every passage the knowledge base
holds (`adapters.meaning.minilm`, kept on disk) in the background, at its start and after each
change, so that a question finds the passages it reads made. A question's own embeddings go first
(`minilm.vectors(ahead=True)` waits for them).

Why not at ingestion: embedding costs about 60 ms a passage on 2 cores, BM25 indexing under 1 ms.
Embedding in the ingest made `threadsage ingest` and each live sync wait for it (a 1,000-chunk
corpus: 64 s instead of 1), and a bot on a language model, which never reads the vectors, paid it
too. A question that comes before its passages were read ahead embeds them itself (about 1 s for a
pool of 20), and keeps them.

Once every passage is read, they fill the `MeaningIndex` the search looks up the passages closest
in meaning to a question in (`adapters.meaning.recall`): filled whole after each reading, so that a
passage deleted meanwhile leaves it at the next.
"""

from __future__ import annotations

import asyncio
import logging
import time

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.adapters.reasoner import label_of

log = logging.getLogger(__name__)

BATCH = 4  # passages embedded at a time: a question's own passages wait at most this long behind them


def texts_of(kb: KnowledgeBase) -> dict[str, str]:
    """What of each passage the reader reads (`minilm.passage_text`), by chunk id."""
    return {hit.id: minilm.passage_text(label_of(hit.title, hit.heading), hit.text) for hit in kb.passages()}


class ReadingAhead:
    """Reads ahead at its start and again after each `changed`, until stopped; one batch at a time
    in a thread (the event loop and the questions' own embeddings go on meanwhile). `listing` is the
    lock the syncs write under: the passages are listed between two syncs' writes. `index` is filled
    with them once all are read."""

    def __init__(self, kb: KnowledgeBase, listing: asyncio.Lock, index: MeaningIndex) -> None:
        self.kb, self.listing, self.index = kb, listing, index
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
        """Embed every passage not yet read (until `stop`), then index them all."""
        started = time.perf_counter()
        async with self.listing:
            texts = await asyncio.to_thread(texts_of, self.kb)
        unread = await asyncio.to_thread(minilm.unread, list(texts.values()))
        for start in range(0, len(unread), BATCH):
            if stop.is_set():
                return
            await asyncio.to_thread(minilm.vectors, unread[start : start + BATCH], ahead=True)
        await asyncio.to_thread(self.index.replace, list(texts), list(texts.values()))
        if unread:
            log.info("offline reader: %d passages read ahead in %.1f s", len(unread), time.perf_counter() - started)
