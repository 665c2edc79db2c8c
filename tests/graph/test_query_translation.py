"""A question in another language than the documents, with a scripted fake model over real HTTP:
the search query is translated in one router-model call and both are searched, fused; a garbage
translation leaves the original search; the call counts against the turn's budget; a question in
the documents' language costs no translation. The fake translates as each test scripts it: this
tests the plumbing, not a model's translations."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, kind_of, user_text
from tests.helpers.conversation import Conversation, llm_chat, only, route_to
from threadsage.chat import ReplyKind

LOST_LAPTOP_ZH = "笔记本电脑丢了怎么办？"
LOST_LAPTOP_EN = "What to do when a company laptop is lost"
LAPTOP_PAGE = "Laptops and equipment"


def routed_titles(llm: FakeOpenAI) -> list[str]:
    """The document titles of the excerpts the router was shown."""
    request = next(b for p, b in llm.requests if p.endswith("/chat/completions") and kind_of(b) == "RouteDecision")
    return re.findall(r"^\[\d+\] ([^›\n]*)", user_text(request), re.M)


def translation_request(llm: FakeOpenAI) -> dict:
    return next(b for p, b in llm.requests if p.endswith("/chat/completions") and kind_of(b) == "Translation")


async def test_a_chinese_question_finds_the_english_page_through_its_translation(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["Translation"] = {"query": LOST_LAPTOP_EN}
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = "请联系 IT [1]。"
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(LOST_LAPTOP_ZH))
    assert llm.chat_kinds() == ["Translation", "RouteDecision", "answer"]
    assert "English" in translation_request(llm)["messages"][0]["content"]
    assert LOST_LAPTOP_ZH in user_text(translation_request(llm))
    assert any(title.strip() == LAPTOP_PAGE for title in routed_titles(llm))
    assert reply.kind is ReplyKind.ANSWER and reply.language == "zh"  # the answer stays in the asker's language
    assert any(s["node"] == "translate" and LOST_LAPTOP_EN in s["detail"] for s in reply.trace)


async def test_a_garbage_translation_searches_as_asked(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["Translation"] = {"query": "笔记本电脑丢失"}  # not English: not a translation into it
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(LOST_LAPTOP_ZH))
    assert reply.kind is ReplyKind.ANSWER
    asked = [h.title for h in handbook_kb.search_blocking(LOST_LAPTOP_ZH, 6)]  # the question alone
    assert [title.strip() for title in routed_titles(llm)] == asked
    assert any(s["node"] == "translate" and "searching as asked" in s["detail"] for s in reply.trace)


async def test_the_translation_counts_against_the_turns_budget(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    """Budget 6: route, answer and judgement leave room for a second hop (3 + 3); with the
    translation first they do not (4 + 3), and the turn settles after one hop."""
    llm.script["Translation"] = {"query": LOST_LAPTOP_EN}
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["Verdict"] = {"grounded": 0.2, "useful": 0.2, "reasoning": "weak"}
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_LLM_BUDGET=6) as chat:
        reply = only(await Conversation(chat).say(LOST_LAPTOP_ZH))
        assert llm.chat_kinds() == ["Translation", "RouteDecision", "answer", "Verdict"]
        llm.requests.clear()
        english = only(await Conversation(chat, "test:ws:chan:b").say(LOST_LAPTOP_EN))
    assert reply.low_confidence and english.low_confidence
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict", "rewrite", "answer", "Verdict"]


async def test_documents_in_the_questions_language_need_no_translation(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_DOCUMENT_LANGUAGES=["en", "zh"]) as chat:
        only(await Conversation(chat).say(LOST_LAPTOP_ZH))
        only(await Conversation(chat, "test:ws:chan:b").say(LOST_LAPTOP_EN))
    assert llm.chat_kinds() == ["RouteDecision", "answer"] * 2


async def test_the_question_as_asked_is_searched_while_the_translation_is_written(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search of the question as asked does not wait for the translation call (each call of
    the fake takes 0.5 s): only the translation's own search does."""
    llm.script["Translation"] = {"query": LOST_LAPTOP_EN}
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.latency = 0.5
    searched: dict[str, float] = {}
    search = handbook_kb.search

    async def timed(query: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        searched.setdefault(query, time.monotonic())
        return await search(query, *args, **kwargs)

    monkeypatch.setattr(handbook_kb, "search", timed)
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        started = time.monotonic()
        only(await Conversation(chat).say(LOST_LAPTOP_ZH))
    assert searched[LOST_LAPTOP_ZH] - started < 0.5 <= searched[LOST_LAPTOP_EN] - started
