"""Tools with a model: the calculator and the calendar are a separate, named decision before the
answer (threadsage/adapters/reasoning/llm/computing.py), asked only when the question shows
arithmetic or dates; the answer call always names its one function, never `tool_choice:
"required"` over several. A question that is only arithmetic costs no model call."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, forced_function, kind_of, user_text
from tests.support.conversation import QUESTION as PLAIN_QUESTION
from tests.support.conversation import Conversation, llm_chat, only, route_to

QUESTION = "What is 15% of the Lisbon hotel limit for other European cities?"


def requests(llm: FakeOpenAI, kind: str) -> list[dict]:
    return [body for _, body in llm.requests if kind_of(body) == kind]


async def test_the_calculation_is_decided_run_and_given_to_the_answer(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
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
    assert "- 15% of 180 = 27" in given and "__import__('os'): error: Only numbers" in given
    assert reply.text.startswith("15% of the €180 limit is €27 [1].")
    assert "_Computed: 15% of 180 = 27_" in reply.text and len(reply.citations) == 1


async def test_a_date_question_is_answered_by_the_calendar(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["Computations"] = {"calculations": [], "date_questions": ["how many working days until 2999-01-01?"]}
    llm.script["answer"] = {"answer": "I could not work that out.", "used": []}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("How many working days until the far future deadline?"))
    [answer] = requests(llm, "answer")[:1]
    assert "That is too far ahead" in user_text(answer)
    assert reply.text.startswith("I could not work that out.")


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
