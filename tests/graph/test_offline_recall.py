"""The offline reader finds the passage that answers a question in a person's own words even where
the question's words find only other pages (issue 34): among every passage read ahead, the closest
in meaning join the search's candidates — only from what the place may read. The pages are written
here; none is from an evaluation set."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from tests.helpers.conversation import Conversation, only, service
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.adapters.reasoning.offline.research import OfflineResearcher
from threadsage.chat import ReplyKind
from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.evidence import closest_in_meaning, search
from threadsage.graph.state import ConversationState
from threadsage.ingestion.pipeline import Ingestor
from threadsage.ingestion.reading_ahead import ReadingAhead

QUESTION = "How often is my work computer swapped for a new one?"
ANSWER = "Company laptops are replaced every three years; return the old laptop to IT."
TOPICS = (
    "lunch", "meetings", "parking", "visitors", "printing", "kitchen", "plants", "mail", "lockers", "music",
    "desks", "heating", "recycling", "coffee", "keys", "guests", "bicycles", "showers", "windows", "noise",
    "lights", "umbrellas", "birthdays", "posters",
)  # fmt: skip


def write_pages(folder: Path) -> None:
    """A laptops page that shares no word with the question, and more pages than the search reads
    by words that share its incidental ones ("get", "new", "often")."""
    (folder / "it").mkdir(parents=True)
    (folder / "it" / "laptop-replacement.md").write_text(f"# Laptop replacement\n\n{ANSWER}\n")
    (folder / "office").mkdir()
    for topic in TOPICS:
        (folder / "office" / f"{topic}.md").write_text(
            f"# Office {topic}\n\nWhen you get a new colleague, often show them the {topic} on their first day.\n"
        )


async def test_a_question_whose_words_find_other_pages_is_answered_from_the_closest_in_meaning(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    write_pages(tmp_path / "docs")
    Ingestor(kb, 1200, 150).ingest_paths([tmp_path / "docs" / "office"], category="office")
    Ingestor(kb, 1200, 150).ingest_paths([tmp_path / "docs" / "it"], category="it")
    assert "laptop" not in " ".join(h.path for h in kb.search_blocking(QUESTION, 20))  # the words miss it

    async with service(tmp_path, "", kb) as chat:
        assert chat.context.meaning is not None
        before = only(await Conversation(chat, "test:ws:c:before").say(QUESTION))
        assert ANSWER not in before.text  # nothing read ahead yet: the words' candidates only

        await ReadingAhead(kb, asyncio.Lock(), chat.context.meaning).read_once(asyncio.Event())
        reply = only(await Conversation(chat, "test:ws:c:after").say(QUESTION))
        assert reply.kind is ReplyKind.ANSWER and ANSWER in reply.text, reply.text
        assert [c["path"] for c in reply.citations] == ["laptop-replacement.md"]

        # A place that may read the office pages only is never shown the closest in meaning.
        close = closest_in_meaning(kb, chat.context.meaning, QUESTION, ["office"], None)
        assert close and all(p["path"] != "laptop-replacement.md" for p in close)
        assert closest_in_meaning(kb, chat.context.meaning, QUESTION, None, None)[0]["path"] == "laptop-replacement.md"


def test_an_empty_index_adds_nothing(kb: KnowledgeBase) -> None:
    assert closest_in_meaning(kb, MeaningIndex(), QUESTION, None, None) == []


async def test_before_anything_is_read_the_words_candidates_are_still_read_by_meaning(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    """An empty index (the bot has just started) adds nothing, and the search still takes the
    words' 20 candidates and puts the closest in meaning second."""
    write_pages(tmp_path / "docs")
    (tmp_path / "docs" / "it" / "laptop-replacement.md").write_text(
        f"# Laptop replacement\n\n{ANSWER} New starters receive theirs from the desk.\n"
    )
    for page in sorted((tmp_path / "docs" / "office").iterdir())[8:]:
        page.unlink()  # eight office pages: the laptop page is among the words' 20
    Ingestor(kb, 1200, 150).ingest_paths([tmp_path / "docs"])
    by_words = [h.path for h in kb.search_blocking(QUESTION, 20)]
    assert by_words.index("it/laptop-replacement.md") >= 3  # among the words' 20, not their first 3
    context = BrainContext(kb=kb, reasoner=OfflineReasoner(), researcher=OfflineResearcher(OfflineReasoner()))
    state = ConversationState(question=QUESTION)
    found = await search(state, replace(context, meaning=MeaningIndex()), QUESTION, 3)
    assert [p["path"] for p in found][1] == "it/laptop-replacement.md"
    plain = await search(state, context, QUESTION, 3)  # no meaning at all: the words' order
    assert [p["path"] for p in plain] == by_words[:3]


async def test_the_closest_piece_of_a_section_the_words_found_by_another_piece_is_a_candidate(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    """A long section is cut into pieces; the words find the piece that shares the question's
    incidental words, and the piece that answers in other words is a candidate too, not dropped
    as a place the words already hold."""
    (tmp_path / "docs" / "it").mkdir(parents=True)
    opening = "When a new colleague starts, often show them the equipment and how we get things done."
    between = " ".join(
        f"The {topic} rules are posted beside the entrance on floor {n}." for n, topic in enumerate(TOPICS * 2)
    )
    (tmp_path / "docs" / "it" / "laptop-replacement.md").write_text(
        f"# Office guide\n\n## Equipment\n\n{opening}\n\n{between}\n\n{ANSWER}\n"
    )
    Ingestor(kb, 1200, 150).ingest_paths([tmp_path / "docs"])
    by_words = [h.text for h in kb.search_blocking(QUESTION, 20)]
    assert any(opening in text for text in by_words) and not any(ANSWER in text for text in by_words)
    meaning = MeaningIndex()
    await ReadingAhead(kb, asyncio.Lock(), meaning).read_once(asyncio.Event())
    context = BrainContext(
        kb=kb, reasoner=OfflineReasoner(), researcher=OfflineResearcher(OfflineReasoner()), meaning=meaning
    )
    found = await search(ConversationState(question=QUESTION), context, QUESTION, 3)
    assert any(ANSWER in p["text"] for p in found), [p["text"][:80] for p in found]
