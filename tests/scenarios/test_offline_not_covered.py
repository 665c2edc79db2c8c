"""The offline back-end when the documents do not answer, and small talk: every "not covered" reply
names the hand-off contact when one is configured (THREADSAGE_HANDOFF), in the asker's language;
greetings, thanks and goodbyes in English and Chinese get a short reply, not the refusal. Through
the chat service, on the demo handbook."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.conversation import Conversation, only, service
from threadsage.chat.replies import handoff_contact
from threadsage.i18n import opens_as, say
from threadsage.support.handoff import Contact, parse_handoff

HANDOFF = parse_handoff("*=#help-desk")


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("What is the capital of France?", "en"),
        ("法国的首都是哪里？", "zh"),
        ("Is there a dress code in the office?", "en"),
    ],
)
async def test_not_covered_names_the_contact(tmp_path: Path, handbook_kb, question: str, language: str) -> None:
    async with service(tmp_path, "", handbook_kb, handoff=HANDOFF) as chat:
        reply = only(await Conversation(chat).say(question))
    assert reply.citations == () and reply.text == say("refusal", language), reply.text
    assert reply.handoff == Contact("#", "help-desk") and reply.language == language


async def test_a_question_near_a_passage_that_does_not_answer_it_gets_that_passage_and_the_contact(
    tmp_path: Path, handbook_kb
) -> None:
    """Nothing says whether a partner may come along on a trip; the travel policy's other rules are
    closest: quoted as that, never as the answer, with the hand-off named (the offline reader, issue 34)."""
    async with service(tmp_path, "", handbook_kb, handoff=HANDOFF) as chat:
        reply = only(await Conversation(chat).say("Can I bring my partner along on a business trip?"))
    assert opens_as("closest_passage", reply.text) and reply.citations, reply.text
    assert reply.handoff == Contact("#", "help-desk")


async def test_a_covered_question_names_no_contact(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb, handoff=HANDOFF) as chat:
        reply = only(await Conversation(chat).say("Which cabin class may I book for a flight of 6 hours or more?"))
    assert reply.citations and reply.handoff is None


async def test_the_closest_passage_quoted_as_possibly_not_answering_names_the_contact(handbook_kb) -> None:
    hedged = {
        "route": "fast_retrieval",
        "question": "Is there a bicycle repair kit?",
        "answer": f"{say('closest_passage', label='Office › Bicycles')}\n\n- Staff may keep a bicycle downstairs. [1]",
        "citations": [{"path": "office.md", "title": "Office"}],
    }
    assert await handoff_contact(HANDOFF, handbook_kb, hedged, None) == Contact("#", "help-desk")
    in_english = {**hedged, "answer": f"{say('closest_in_other_language', 'zh', label='Office')}\n\nBicycles… [1]"}
    assert await handoff_contact(HANDOFF, handbook_kb, in_english, None) == Contact("#", "help-desk")
    answered = {**hedged, "answer": f"{say('from_documents')}\n\n- Staff may keep a bicycle downstairs. [1]"}
    assert await handoff_contact(HANDOFF, handbook_kb, answered, None) is None


@pytest.mark.parametrize(
    ("message", "key", "language"),
    [
        ("Hi there!", "chat_hello", "en"),
        ("你好", "chat_hello", "zh"),
        ("Thanks a lot!", "chat_thanks", "en"),
        ("谢谢！", "chat_thanks", "zh"),
        ("Ok, that's all for now — bye!", "chat_bye", "en"),
        ("好的，就这些，再见！", "chat_bye", "zh"),
    ],
)
async def test_small_talk_gets_a_short_reply_in_kind(
    tmp_path: Path, handbook_kb, message: str, key: str, language: str
) -> None:
    async with service(tmp_path, "", handbook_kb, handoff=HANDOFF) as chat:
        reply = only(await Conversation(chat).say(message))
    assert (reply.route, reply.text, reply.handoff) == ("direct_reply", say(key, language), None)
