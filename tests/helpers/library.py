"""A small library of documents for the knowledge loop's tests: two folders (categories `docs`
and `hr`) ingested into a real knowledge base, and the changes each write makes — what a sync or
`threadsage ingest` hands to the loop (`ChatService.knowledge.changed`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from threadsage.adapters.knowledge import KnowledgeBase, open_knowledge_base
from threadsage.ingestion.pipeline import DocumentChange, Ingestor
from threadsage.settings.environment import Settings

TRAVEL = "# Travel\n\nFlights of six hours or more may be booked in business class. Shorter flights are economy.\n"
TRAVEL_2 = "# Travel\n\nFrom May on, flights of six hours or more are booked in economy class, like shorter ones.\n"
LEAVE = (
    "# Parental leave\n\nTo request parental leave, send the parental leave form to the people team "
    "eight weeks before the leave starts. Parental leave lasts sixteen weeks.\n"
)
GAP = "How do I request parental leave?"
COVERED = "Which class may I book for flights of six hours?"


@dataclass
class Library:
    root: Path
    kb: KnowledgeBase
    settings: Settings

    def write(self, category: str, name: str, text: str) -> list[DocumentChange]:
        """Write (or rewrite) a file of `category`'s folder and ingest the folder: the changes."""
        (self.root / category / name).write_text(text)
        ingestor = Ingestor(self.kb, self.settings.chunk_chars, self.settings.chunk_overlap)
        return ingestor.ingest_paths([self.root / category], category=category, prune=True).changes


@contextmanager
def library(root: Path, settings: Settings) -> Iterator[Library]:
    """The travel page in `docs`, nothing in `hr` yet."""
    for category in ("docs", "hr"):
        (root / category).mkdir(parents=True)
    kb = open_knowledge_base(settings)
    try:
        shelf = Library(root, kb, settings)
        shelf.write("docs", "travel.md", TRAVEL)
        yield shelf
    finally:
        kb.close()
