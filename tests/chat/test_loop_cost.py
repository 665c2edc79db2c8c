"""The knowledge loop asks the answerer once per question, not once per person: gaps with the same
content words in any order share one search and one answer (the console's grouping), and each of
them is closed. The offline answerer, a real knowledge base and the SQLite record."""

from __future__ import annotations

import time
from pathlib import Path

from tests.helpers.recorded import turn_row, write_turns
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.chat.knowledge_loop import KnowledgeLoop
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.ingestion.pipeline import Ingestor
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.knowledge import KnowledgeRecords
from threadsage.records.tables import Tables
from threadsage.records.turns import QuestionStore
from threadsage.settings.environment import Settings

LEAVE = (
    "# Parental leave\n\nTo request parental leave, send the parental leave form to the people team "
    "eight weeks before the leave starts. Parental leave lasts sixteen weeks.\n"
)
TRAVEL = "# Travel\n\nFlights of six hours or more may be booked in business class.\n"


async def test_the_same_question_in_other_words_is_searched_and_answered_once(
    tmp_path: Path, settings: Settings, kb: KnowledgeBase
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel.md").write_text(TRAVEL)
    ingest = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap)
    ingest.ingest_paths([folder])
    async with open_checkpointer(settings) as saver:
        records = KnowledgeRecords(saver)
        await QuestionStore(saver, knowledge=records).setup()
        now = time.time()
        await write_turns(
            Tables(saver),
            [
                turn_row(now - 60, "How do I request parental leave?", "not_covered"),
                turn_row(now - 50, "Parental leave: how do I request it?", "not_covered", user_id="U2"),
                turn_row(now - 40, "Who approves sabbaticals?", "not_covered"),
            ],
        )
        (folder / "parental-leave.md").write_text(LEAVE)
        changes = ingest.ingest_paths([folder]).changes
        reasoner = OfflineReasoner(kb.document_frequencies)
        loop = KnowledgeLoop.from_settings(settings, records, kb, reasoner, LocalCoordinator())
        report = await loop.changed(changes)
        assert (report.gaps, report.searches, report.model_calls, report.closed) == (3, 2, 1, 2)
        assert report.follow_ups == {"waiting": 2}  # no bot runs here: the next one sends them
        assert [g.question for g in await records.open_gaps(0)] == ["Who approves sabbaticals?"]
