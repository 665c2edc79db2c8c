"""With a language model: the question's language is named to the model in every prompt that
writes to the person, and what the service says itself (progress, busy, apology) follows it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, kind_of
from tests.helpers.conversation import Conversation, llm_chat, only, route_to
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.chat import Draft, Progress, ReplyKind, Turn
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

HOTEL_ZH = "出差住酒店的标准是多少？"


def systems(llm: FakeOpenAI) -> dict[str, str]:
    """The system prompt of each kind of chat completion the model received."""
    return {
        kind_of(body): body["messages"][0]["content"]
        for path, body in llm.requests
        if path.endswith("/chat/completions") and body["messages"][0]["role"] == "system"
    }


async def test_a_chinese_question_is_answered_in_chinese_by_the_model(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = "住宿标准见差旅政策 [1]。"
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [
            e async for e in replace(chat, progress=True).stream(Turn("test", "test:ws:a:-", "U1", "m1", text=HOTEL_ZH))
        ]
    *steps, answer = events
    assert answer.kind is ReplyKind.ANSWER and answer.language == "zh" and answer.citations
    assert steps and all(isinstance(s, Progress | Draft) and s.language == "zh" for s in steps)  # steps, words
    prompts = systems(llm)
    assert (
        "written in Simplified Chinese" in prompts["answer"]
        and "written in Simplified Chinese" in prompts["RouteDecision"]
    )


async def test_busy_and_apology_notices_follow_the_question(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    page = tmp_path / "hotels.md"
    page.write_text("# Hotels\n\n出差住酒店的标准是每晚 180 欧元。\n", encoding="utf-8")
    broken = open_knowledge_base(Settings(THREADSAGE_DATA_DIR=tmp_path / "broken", _env_file=None))
    assert Ingestor(broken, 1000, 100).ingest_paths([page]).ok
    async with llm_chat(tmp_path / "a", llm, broken) as chat:
        broken.close()  # every search fails: nothing at all can be said, the service apologises
        apology = only(await Conversation(chat, "test:ws:chan:a").say(HOTEL_ZH))
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_MAX_MODEL_CALLS_PER_MINUTE=3) as chat:
        only(await Conversation(chat, "test:ws:chan:x").say(HOTEL_ZH))  # translation, route, answer: 3 calls
        busy = only(await Conversation(chat, "test:ws:chan:b").say(HOTEL_ZH, user="U2"))
        english = only(await Conversation(chat, "test:ws:chan:c").say("What is the hotel limit?", user="U3"))
    assert (apology.text, apology.fixed) == (say("apology", "zh"), "apology")
    assert (busy.text, busy.fixed) == (say("busy", "zh"), "busy")
    assert english.text == say("busy", "en")
