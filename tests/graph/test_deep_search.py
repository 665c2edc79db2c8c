"""Deep search in steps, with a scripted model (the real client over HTTP) and offline: the order
of the calls, later steps seeing earlier findings, replanning, the brakes, and both sides of a
comparison cited."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, kind_of, user_text
from tests.helpers.conversation import Conversation, llm_chat, only, route_to, service
from threadsage.chat import ReplyKind
from threadsage.i18n import say

LISBON, TORONTO = "finance/expenses-lisbon.md", "finance/expenses-toronto.md"
QUESTION = "How do the Lisbon and Toronto hotel limits compare?"
PLAN = {"questions": ["What is the Lisbon hotel limit?", "What is the Toronto hotel limit?"]}


def reading_step(request: dict) -> dict:
    """A model that reads: it cites the excerpt whose title names the sub-question's city."""
    text = user_text(request)
    sub = text.split("Sub-question: ", 1)[1].split("\n", 1)[0]
    city = "Lisbon" if "Lisbon" in sub else "Toronto"
    headers = re.findall(r"^\[(\d+)\] (.*)$", text, re.M)
    n = next((n for n, header in headers if f"{city} office" in header and "Hotel" in header), None)
    if n is None:
        return {"answer": "", "found": False}
    return {"answer": f"The {city} limit is in the table [{n}].", "found": True}


def step_requests(llm: FakeOpenAI) -> list[str]:
    return [user_text(body) for _, body in llm.requests if kind_of(body) == "StepResult"]


def cited_paths(reply) -> set[str]:
    return {c["path"] for c in reply.citations}


async def test_steps_run_in_order_see_earlier_findings_and_both_sides_are_cited(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script |= {"RouteDecision": route_to("COMPARISON"), "SubQuestions": PLAN, "StepResult": reading_step}
    llm.script["synthesise"] = "Lisbon allows €180 in Europe [1]."  # forgets Toronto
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == ["RouteDecision", "SubQuestions", "StepResult", "StepResult", "synthesise"]
    first, second = step_requests(llm)
    assert "Earlier findings:\n(none yet)" in first
    assert "Earlier findings:\n- What is the Lisbon hotel limit?: The Lisbon limit is in the table." in second
    assert (reply.kind, reply.route) == (ReplyKind.ANSWER, "deep_search")
    assert cited_paths(reply) == {LISBON, TORONTO}  # the dropped side was added from its own finding
    assert "**What is the Toronto hotel limit**: The Toronto limit is in the table [2]." in reply.text
    nodes = [s["node"] for s in reply.trace]
    assert nodes == ["contextualise", "route", "plan", "execute", "execute", "synthesise", "compose"]
    assert "1 uncited finding(s) added" in reply.trace[-2]["detail"]
    assert not reply.low_confidence


@pytest.mark.parametrize("failure", ["nothing found", "contradiction"])
async def test_a_failed_step_is_replanned(tmp_path: Path, llm: FakeOpenAI, handbook_kb, failure: str) -> None:
    bad = {"answer": "", "found": False} if failure == "nothing found" else None

    def step(request: dict) -> dict:
        if len(step_requests(llm)) == 1:  # the first step fails
            return bad or {**reading_step(request), "contradicts": True}
        return reading_step(request)

    llm.script |= {"RouteDecision": route_to("COMPARISON"), "SubQuestions": PLAN, "StepResult": step}
    llm.script["Replan"] = {"questions": ["Lisbon office hotel limit per night", "What is the Toronto hotel limit?"]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == [
        "RouteDecision",
        "SubQuestions",
        "StepResult",
        "Replan",
        "StepResult",
        "StepResult",
        "synthesise",
    ]
    replan_request = next(user_text(b) for _, b in llm.requests if kind_of(b) == "Replan")
    assert "Steps still planned:\n- What is the Toronto hotel limit?" in replan_request
    [replanned] = [s for s in reply.trace if s["node"] == "replan"]
    assert replanned["detail"].startswith(f"{failure}: Lisbon office hotel limit per night")
    assert cited_paths(reply) >= {LISBON, TORONTO}
    assert not reply.low_confidence  # the replanned step took over the failed one


async def test_the_budget_brake_keeps_room_for_the_synthesis(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script |= {"RouteDecision": route_to("COMPARISON"), "StepResult": reading_step}
    llm.script["SubQuestions"] = {"questions": [*PLAN["questions"], "What is the London hotel limit?"]}
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_DEEP_SEARCH_BUDGET=4) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == ["RouteDecision", "SubQuestions", "StepResult", "synthesise"]
    assert reply.low_confidence and "2 left unplanned by the brakes" in reply.trace[-2]["detail"]


async def test_steps_and_replans_are_capped(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script |= {"RouteDecision": route_to("COMPARISON"), "SubQuestions": PLAN}
    llm.script["StepResult"] = {"answer": "", "found": False}  # nothing is ever found
    llm.script["Replan"] = lambda request: PLAN  # and the model keeps proposing the same plan
    async with llm_chat(
        tmp_path, llm, handbook_kb, THREADSAGE_DEEP_SEARCH_MAX_STEPS=3, THREADSAGE_DEEP_SEARCH_MAX_REPLANS=1
    ) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == ["RouteDecision", "SubQuestions", "StepResult", "Replan", "StepResult", "StepResult"]
    assert (reply.text, reply.low_confidence, reply.citations) == (say("not_covered"), True, ())


@pytest.mark.parametrize(
    "question",
    [
        "What's the difference between the Lisbon and Toronto hotel limits?",
        "Lisbon vs Toronto expense limits",
        "How do the Lisbon and Toronto meal allowances compare?",
    ],
)
async def test_offline_comparisons_cite_both_sides(tmp_path: Path, handbook_kb, question: str) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        reply = only(await Conversation(chat).say(question))
    assert reply.route == "deep_search", reply.trace
    assert cited_paths(reply) == {LISBON, TORONTO}, reply.text
    steps = [s["detail"] for s in reply.trace if s["node"] == "execute"]
    assert len(steps) == 2 and all("passages cited" in s for s in steps)
    lisbon, toronto = reply.text.split("\n\n**", 1)
    assert "Lisbon" in lisbon and "€" in lisbon and "Toronto" in toronto and "CA$" in toronto
