"""The offline back-end's understanding through the graph, on the demo handbook: questions that
exclude something, small talk, asking back on sibling policies, and questions that avoid the
documents' words. (None of these questions is in demo/handbook-*.jsonl.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.conversation import Conversation, only, service
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.chat import ReplyKind


def route_detail(reply) -> str:
    return next(step["detail"] for step in reply.trace if step["node"] == "route")


@pytest.mark.parametrize(
    ("question", "route"),
    [
        ("Apart from the VPN one, what do I do to reset my password?", "fast_retrieval"),
        ("How do I reset my password, other than the VPN one?", "standard_retrieval"),  # graded and judged
    ],
)
async def test_an_excluded_topic_is_searched_without_and_not_cited(
    tmp_path: Path, handbook_kb, question: str, route: str
) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        plain = only(await Conversation(chat, "t:a").say("How do I reset my VPN password?"))
        excluding = only(await Conversation(chat, "t:b").say(question))
    assert plain.citations[0]["path"] == "it/vpn.md"  # the excluded topic is what the words alone find
    assert (excluding.kind, excluding.route) == (ReplyKind.ANSWER, route), excluding.text
    assert "excluding: the VPN one" in route_detail(excluding)
    assert excluding.citations and all(c["path"] != "it/vpn.md" for c in excluding.citations)


async def test_the_offline_rewrite_leaves_the_excluded_topic_out() -> None:
    query = await OfflineReasoner().rewrite("Which leave can contractors take, other than annual leave?", [])
    assert query == "leav contractor take"


@pytest.mark.parametrize(
    "message", ["How's your day going?", "What are you doing this weekend?", "good morning!", "thanks a lot"]
)
async def test_small_talk_gets_a_short_reply_not_quotes(tmp_path: Path, handbook_kb, message: str) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say(message))
    assert (reply.kind, reply.route, reply.citations) == (ReplyKind.ANSWER, "direct_reply", ())
    assert len(reply.text) < 200 and "From the documents" not in reply.text


async def test_small_talk_words_in_a_real_question_still_search(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say("How many days of sick leave do contractors get?"))
    assert reply.route != "direct_reply" and reply.citations[0]["path"] == "people/leave-contractors.md"


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("Who has to approve my expense claim?", {"finance/expenses-lisbon.md", "finance/expenses-toronto.md"}),
        ("How much sick leave is there?", {"people/leave-employees.md", "people/leave-contractors.md"}),
    ],
)
async def test_sibling_policies_are_asked_back(tmp_path: Path, handbook_kb, question: str, sides: set[str]) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say(question))
    assert reply.kind is ReplyKind.CLARIFICATION, reply.text
    assert len(reply.choices) == 2


@pytest.mark.parametrize(
    ("question", "gold"),
    [
        ("Who has to approve a Toronto expense claim?", "finance/expenses-toronto.md"),
        ("How many sick days may a contractor take?", "people/leave-contractors.md"),
    ],
)
async def test_naming_one_side_answers_without_asking(tmp_path: Path, handbook_kb, question: str, gold: str) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say(question))
    assert reply.kind is ReplyKind.ANSWER and reply.citations[0]["path"] == gold, reply.text


@pytest.mark.parametrize(
    ("question", "gold"),
    [
        ("Which seat class is allowed on a long flight?", "finance/travel.md"),
        ("How long is the trial period for someone new?", "people/onboarding.md"),
    ],
)
async def test_a_question_in_other_words_is_answered_from_its_page(
    tmp_path: Path, handbook_kb, question: str, gold: str
) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say(question))
    assert (reply.kind, reply.route) == (ReplyKind.ANSWER, "fast_retrieval"), reply.text
    assert any(c["path"] == gold for c in reply.citations), reply.text


@pytest.mark.parametrize("question", ["Who wrote Hamlet?", "How many moons does Jupiter have?"])
async def test_questions_from_outside_the_documents_still_fall_back(tmp_path: Path, handbook_kb, question) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say(question))
    assert reply.route == "fallback", reply.text
