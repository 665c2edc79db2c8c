"""A turn matches its question against the process's copy of the verified answers' questions, not
against every verified answer read from the database each turn: the copy is read again after a
change made in the same process at once (through any records: the console has its own), after
a change made by another process (here: SQL on the same database) within `VERIFIED_FRESH_SECONDS`, and a verified answer
retired elsewhere is never given, copy or not. SQLite, a real knowledge base, the offline answerer."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers.recorded import turn_row, write_turns
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.chat.knowledge_loop import KnowledgeLoop
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.ingestion.pipeline import Ingestor
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.knowledge import VERIFIED, KnowledgeRecords
from threadsage.records.tables import Tables
from threadsage.records.turns import QuestionStore
from threadsage.settings.environment import Settings

TRAVEL = "# Travel\n\nFlights of six hours or more may be booked in business class.\n"
QUESTION = "Which class may I book for flights of six hours?"
PARAPHRASE = "Flights of six hours: which class may I book?"
OTHER = "Who may book business class travel?"


async def test_verified_questions_are_read_once_until_a_change_and_a_retired_one_is_never_given(
    tmp_path: Path, settings: Settings, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel.md").write_text(TRAVEL)
    Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([folder])
    [hit] = kb.search_blocking("business class", 1)
    citations = json.dumps([{"doc": hit.doc_id, "version": "1", "title": "Travel"}])
    async with open_checkpointer(settings) as saver:
        records, console = KnowledgeRecords(saver), KnowledgeRecords(saver)
        tables = Tables(saver)  # another process's writes
        await QuestionStore(saver, knowledge=records).setup()
        row = turn_row(time.time() - 60, QUESTION, answer="Business class.", citations=citations)
        await write_turns(tables, [row])
        loop = KnowledgeLoop.from_settings(
            settings, records, kb, OfflineReasoner(kb.document_frequencies), LocalCoordinator()
        )
        reads = 0
        read = records.active_questions

        async def counted(limit: int = 500) -> list[tuple[str, str]]:
            nonlocal reads
            reads += 1
            return await read(limit)

        monkeypatch.setattr(records, "active_questions", counted)

        assert await loop.verified_answer(PARAPHRASE, None, "en") is None
        assert await loop.verified_answer(PARAPHRASE, None, "en") is None
        assert reads == 1  # the second turn matched against the copy
        ident = await console.verify(row[0], row[1], "Ada", int(time.time() * 1000))
        given = await loop.verified_answer(PARAPHRASE, None, "en")
        assert given is not None and "Business class." in given[0].text and reads == 2  # saved here: read at once

        await tables.execute(f"UPDATE {VERIFIED} SET retired_at = 1 WHERE id = {{p}}", (ident,))
        assert await loop.verified_answer(PARAPHRASE, None, "en") is None  # retired elsewhere: not given
        assert reads == 2  # from the copy, which still lists it

        await tables.execute(
            f"INSERT INTO {VERIFIED} (id, question, answer, citations, verified_by, verified_at) "
            "VALUES ('other', {p}, 'Anyone may.', {p}, 'Bo', {p})",
            (OTHER, citations, int(time.time() * 1000)),
        )
        assert await loop.verified_answer(OTHER, None, "en") is None  # saved elsewhere: the copy has not caught up
        assert reads == 2
        loop._questions.fresh_for = 0.0  # the copy's time is up
        given = await loop.verified_answer(OTHER, None, "en")
        assert given is not None and "Verified answer (by Bo" in given[0].text and reads == 3
