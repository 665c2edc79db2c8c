"""The answer grades its own passages: one model call reports the answer and the excerpts it relies
on (`GroundedAnswer`), so standard retrieval costs route, answer and judge on its first hop, and
an answer that relies on nothing goes round again without a judgement."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, ToolCalls, excerpt_count, kind_of, user_text
from tests.helpers.conversation import Conversation, llm_chat, only, route_to
from threadsage.chat import ReplyKind

HOW_TO = "How do I request a security exception?"


def grounded(answer: str, used: list[int]) -> ToolCalls:
    """The model giving its answer as the structured output it was asked for."""
    return ToolCalls([("GroundedAnswer", {"answer": answer, "used": used})])


def requests_of(llm: FakeOpenAI, kind: str) -> list[dict]:
    return [body for path, body in llm.requests if path.endswith("/chat/completions") and kind_of(body) == kind]


async def test_only_the_passages_the_answer_relies_on_are_judged_and_cited(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    shown: list[str] = []

    def answer(request: dict) -> ToolCalls:
        shown.extend(re.findall(r"^\[\d+\] (.+)$", user_text(request), re.M))
        return grounded("File it in the tracker [3], approved by security [3].", [2, 3])

    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = answer
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert len(shown) >= 3
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict"]
    [judged] = requests_of(llm, "Verdict")
    assert excerpt_count(judged) == 2  # passages 2 and 3, renumbered 1 and 2
    assert "tracker [2], approved by security [2]." in user_text(judged)
    assert reply.text == "File it in the tracker [1], approved by security [1]."
    [citation] = reply.citations
    assert " › ".join(part for part in (citation["title"], citation["heading"]) if part) == shown[2]


async def test_an_answer_relying_on_nothing_searches_again_without_a_judgement(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = [grounded("The documents don't cover it.", []), grounded("Ask security [1].", [1])]
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert llm.chat_kinds() == ["RouteDecision", "answer", "rewrite", "answer", "Verdict"]
    assert (reply.kind, reply.text, len(reply.citations)) == (ReplyKind.ANSWER, "Ask security [1].", 1)


async def test_when_nothing_is_ever_relied_on_the_reply_says_so(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = grounded("Probably ask your manager.", [])
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert llm.chat_kinds() == ["RouteDecision", "answer", "rewrite", "answer"]
    assert reply.low_confidence and not reply.citations and "ask your manager" not in reply.text
    assert [s["node"] for s in reply.trace][-2:] == ["settle", "compose"]


async def test_the_worst_case_is_seven_model_calls(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    """A follow-up (contextualised) whose answers never satisfy the judge: the default budget
    stops the loop at 7 calls even when more hops are allowed."""
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["Verdict"] = {"grounded": 0.5, "useful": 0.2, "reasoning": "weak"}
    llm.script["contextualise"] = "Who approves a security exception request?"
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_MAX_HOPS=5) as chat:
        talk = Conversation(chat)
        await talk.say(HOW_TO)
        llm.requests.clear()
        reply = only(await talk.say("and who approves it?"))
    assert llm.chat_kinds() == ["contextualise", "RouteDecision", "answer", "Verdict", "rewrite", "answer", "Verdict"]
    assert reply.low_confidence
