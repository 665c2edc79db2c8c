"""Tools with a model: the calculator and the calendar are a separate, named decision before the
answer (threadsage/adapters/reasoning/llm/computing.py), asked only when the question's words ask
for arithmetic or a date to count — a question with a number in it is two calls on the fast route,
not three; the answer call always names its one
function, never `tool_choice: "required"` over several. A computation that fails is logged and left
out of the answer. A question that is only arithmetic costs no model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, forced_function, kind_of, user_text
from tests.helpers.conversation import QUESTION as PLAIN_QUESTION
from tests.helpers.conversation import Conversation, llm_chat, only, route_to
from threadsage.chat import ReplyKind

QUESTION = "What is 15% of the Lisbon hotel limit for other European cities?"


def requests(llm: FakeOpenAI, kind: str) -> list[dict]:
    return [body for _, body in llm.requests if kind_of(body) == kind]


async def test_the_calculation_is_decided_run_and_given_to_the_answer(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb, caplog: pytest.LogCaptureFixture
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["Computations"] = {"calculations": ["15% of 180", "__import__('os')"], "date_questions": []}
    llm.script["answer"] = {"answer": "15% of the €180 limit is €27 [1].", "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == ["RouteDecision", "Computations", "answer"]
    [decision] = requests(llm, "Computations")
    [answer] = requests(llm, "answer")
    assert [t["function"]["name"] for t in decision["tools"]] == ["Computations"]
    assert [t["function"]["name"] for t in answer["tools"]] == ["GroundedAnswer"]
    assert forced_function(answer) == "GroundedAnswer" and answer["tool_choice"] != "required"
    given = user_text(answer).split("Computed for you:", 1)[1]
    assert "- 15% of 180 = 27" in given and "__import__" not in given  # the refused one: left out…
    assert reply.text.startswith("15% of the €180 limit is €27 [1].")
    assert "_Computed: 15% of 180 = 27_" in reply.text and len(reply.citations) == 1
    assert "error" not in reply.text and "__import__" not in reply.text
    assert any(
        "failed, left out" in r.getMessage() and "__import__" in r.getMessage() for r in caplog.records
    )  # …logged


async def test_a_number_in_the_question_costs_no_computation_call(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    """The fast route is two calls for "how many …?": a number asks for no calculator."""
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("How many days of annual leave do employees get?"))
    assert llm.chat_kinds() == ["RouteDecision", "answer"] and reply.kind is ReplyKind.ANSWER


async def test_a_total_asks_for_the_computation(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["Computations"] = {"calculations": ["3 * 180"], "date_questions": []}
    llm.script["answer"] = {"answer": "Three nights come to €540 [1].", "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("What may three nights in the Lisbon hotel cost in total?"))
    assert llm.chat_kinds() == ["RouteDecision", "Computations", "answer"]
    assert "- 3 * 180 = 540" in user_text(requests(llm, "answer")[0])
    assert "_Computed: 3 * 180 = 540_" in reply.text


async def test_every_computation_failing_leaves_the_answer_as_written(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """What a schema-filling model sends: nothing the calculator can read — no error in the reply."""
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["Computations"] = {"calculations": ["fake calculations 1"], "date_questions": ["fake date 1"]}
    llm.script["answer"] = {"answer": "It is 25 days [1].", "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("How many days of annual leave do employees get in total?"))
    assert llm.chat_kinds() == ["RouteDecision", "Computations", "answer"]
    assert "Computed for you" not in user_text(requests(llm, "answer")[0])
    assert reply.text == "It is 25 days [1]." or reply.text.startswith("It is 25 days [1].\n")
    assert "Computed" not in reply.text and "error" not in reply.text


async def test_a_date_question_is_answered_by_the_calendar(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["Computations"] = {"calculations": [], "date_questions": ["how many working days until 2999-01-01?"]}
    llm.script["answer"] = {"answer": "I could not work that out.", "used": []}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("How many working days until the far future deadline?"))
    [answer] = requests(llm, "answer")[:1]
    assert llm.chat_kinds()[:2] == ["RouteDecision", "Computations"]  # "days until": the question shows it
    assert "Computed for you" not in user_text(answer)  # "too far ahead": left out, as any failure
    assert reply.text.startswith("I could not work that out.") and "Computed" not in reply.text


async def test_the_calendar_answers_a_date_the_question_counts_to(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["Computations"] = {"calculations": [], "date_questions": ["what is today's date?"]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        await Conversation(chat).say("How many days until the expense report deadline?")
    assert "Today is" in user_text(requests(llm, "answer")[0]).split("Computed for you:", 1)[1]


async def test_a_question_without_numbers_or_dates_asks_for_no_computation(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        await Conversation(chat).say(PLAIN_QUESTION)
    assert llm.chat_kinds() == ["RouteDecision", "answer"]


async def test_a_question_that_is_only_arithmetic_costs_no_model_call(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("What is 15% of 240?"))
        refused = only(await Conversation(chat, "t:w:c:2").say("what is 2 ** 99999?"))
    assert llm.chat_kinds() == []
    assert (reply.text, reply.route, reply.citations) == ("15% of 240 = **36**", "tools", ())
    assert refused.text == "That exponent is too large (the limit is 1000)."
