"""The rerank step of standard retrieval through the whole graph, with the listwise call on a
scripted fake model over real HTTP: the excerpts the answer is written from follow the model's
order, garbage keeps the fused order, and the call counts against the turn's budget."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.openai_server import Failure, FakeOpenAI, kind_of, user_text
from tests.helpers.conversation import Conversation, llm_chat, only, route_to
from threadsage.chat import ReplyKind

QUESTION = "How do I get my travel expenses reimbursed after a trip?"
HOW_TO = ["RouteDecision", "RankedExcerpts", "answer", "Verdict"]


def headers_sent(llm: FakeOpenAI, kind: str) -> list[str]:
    """The excerpt headers ("title › heading") of the first request of that kind, in order."""
    request = next(body for path, body in llm.requests if path.endswith("/chat/completions") and kind_of(body) == kind)
    return re.findall(r"^\[\d+\] (.*)$", user_text(request), re.M)


def reversed_ranking(request: dict) -> dict:
    count = len(re.findall(r"^\[\d+\] ", user_text(request), re.M))
    return {"ranking": list(range(count, 0, -1))}


async def test_the_model_orders_a_wider_pool_and_the_answer_gets_the_best_five(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["RankedExcerpts"] = reversed_ranking
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_RERANK="model") as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert (reply.kind, reply.route) == (ReplyKind.ANSWER, "standard_retrieval")
    assert llm.chat_kinds() == HOW_TO
    pool = headers_sent(llm, "RankedExcerpts")
    assert len(pool) > 6  # wider than the router's six passages
    assert headers_sent(llm, "answer") == pool[::-1][:5]
    assert any(step["node"] == "rerank" and "moved" in step["detail"] for step in reply.trace)


async def test_garbage_from_the_model_keeps_the_fused_order(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    for garbage in (
        Failure(status=200, body="<html>this is not a completion</html>"),
        {"ranking": ["first", "second"]},  # not numbers
        {"ranking": [0, 99, -3]},  # numbers of no excerpt
    ):
        llm.requests.clear()
        llm.script["RouteDecision"] = route_to("HOW_TO")
        llm.script["RankedExcerpts"] = garbage
        async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_RERANK="model") as chat:
            reply = only(await Conversation(chat, key=f"test:ws:chan:{id(garbage)}").say(QUESTION))
        assert reply.kind == ReplyKind.ANSWER, garbage
        pool = headers_sent(llm, "RankedExcerpts")
        assert headers_sent(llm, "answer") == pool[:5], garbage


async def test_the_rerank_call_is_skipped_when_the_budget_needs_it_for_the_answer(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_RERANK="model", THREADSAGE_LLM_BUDGET=3) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert reply.kind == ReplyKind.ANSWER
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict"]
    assert any(step["node"] == "rerank" and "skipped" in step["detail"] for step in reply.trace)


async def test_without_a_reranker_standard_retrieval_is_unchanged(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict"]
    assert not any(step["node"] == "rerank" for step in reply.trace)
