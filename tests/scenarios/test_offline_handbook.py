"""The offline back-end on the demo handbook's own graded questions (demo/handbook-questions.jsonl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.locations import REPO
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ReplyKind, Turn
from threadsage.settings.environment import Settings

QUESTIONS = [
    json.loads(line) for line in (REPO / "demo" / "handbook-questions.jsonl").read_text().splitlines() if line.strip()
]


async def test_offline_answers_and_clarifications_on_the_handbook(tmp_path: Path, handbook_kb) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=None, OPENAI_API_KEY=None, _env_file=None)
    answered, cited, clarified, asked_back, misses = 0, 0, 0, 0, []
    specific = [q for q in QUESTIONS if not q["ambiguous"]]
    ambiguous = [q for q in QUESTIONS if q["ambiguous"]]
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        for q in specific:
            [reply] = await chat.handle(Turn("test", f"hb:{q['id']}", f"U{q['id']}", "m", text=q["question"]))
            ok = reply.kind is ReplyKind.ANSWER and q["answer"].lower() in reply.text.lower()
            answered += ok
            cited += any(c["path"] == q["file"] for c in reply.citations)
            asked_back += reply.kind is ReplyKind.CLARIFICATION
            if not ok:
                misses.append((q["question"], reply.text[:200]))
        for q in ambiguous:
            [reply] = await chat.handle(Turn("test", f"hb:{q['id']}", f"U{q['id']}", "m", text=q["question"]))
            clarified += reply.kind is ReplyKind.CLARIFICATION
    print(f"answered {answered}/{len(specific)}, cited {cited}/{len(specific)}, clarified {clarified}/{len(ambiguous)}")
    # Measured: 22/25 answered, 22/25 cite the gold page, 5/5 ambiguous questions clarified (2/5
    # before sibling sections counted: a summary page listing both alternatives ranked first),
    # and no clear question asked back. Of the three that cite another page, two are answered
    # right from a page stating the same fact (the security page for its course, the laptops
    # page for Fleetwise); 23/25 cited the gold page before the offline reader (issue 34), whose
    # replies quote the passages that read alike rather than a sentence of every passage found.
    assert answered >= 0.8 * len(specific), misses
    assert cited >= 0.85 * len(specific), misses
    assert clarified >= 4, clarified
    assert asked_back == 0, misses


@pytest.mark.parametrize(
    ("question", "page", "token"),
    [
        ("how many vacation days do contractors get?", "people/leave-contractors.md", "12"),
        ("vacation days for contractors", "people/leave-contractors.md", "12 unpaid days"),
        ("I left my work laptop on the train. What do I do?", "it/laptops.md", "laptop"),
        ("Can I get money back for my gym membership?", "people/benefits.md", "gym"),
    ],
)
async def test_a_question_typed_in_a_persons_own_words_is_read_not_refused(
    tmp_path: Path, handbook_kb, question: str, page: str, token: str
) -> None:
    """The questions of issue 34, as a new user typed them: each was refused, or answered with
    sentences of unrelated pages; now the page that answers is shown (as the answer, or as the
    closest passage), and nothing else is cited."""
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=None, OPENAI_API_KEY=None, _env_file=None)
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        [reply] = await chat.handle(Turn("test", "typed", "U1", "m", text=question))
    assert reply.kind is ReplyKind.ANSWER and token in reply.text, reply.text
    assert {c["path"] for c in reply.citations} == {page}, reply.citations


async def test_a_follow_up_is_answered_from_its_own_words_not_with_the_answer_before(
    tmp_path: Path, handbook_kb
) -> None:
    """The topic of the question before finds the page; the follow-up's own words choose what of it
    is shown (issue 34: a follow-up repeated the previous answer). Before, "And a SEV2?" got the
    escalation sentences the SEV1 question had found."""
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=None, OPENAI_API_KEY=None, _env_file=None)
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        await chat.handle(Turn("test", "follow", "U1", "m1", text="How fast do I have to acknowledge a SEV1 page?"))
        [then] = await chat.handle(Turn("test", "follow", "U1", "m2", text="And a SEV2?"))
    assert "| SEV2 |" in then.text and "15 minutes" in then.text, then.text
    assert [c["path"] for c in then.citations] == ["engineering/on-call.md"]
