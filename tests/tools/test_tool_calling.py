"""Tools with a model: the answer may call the calculator and the calendar (OpenAI's tools and
tool_calls, through the real client), and a question that is only arithmetic costs no model call."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, ToolCalls, kind_of
from tests.support.conversation import Conversation, llm_chat, only, route_to

QUESTION = "What is 15% of the Lisbon hotel limit for other European cities?"


def answer_requests(llm: FakeOpenAI) -> list[dict]:
    return [body for _, body in llm.requests if kind_of(body) == "answer"]


async def test_the_answer_calls_the_calculator_with_a_retrieved_number(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = [
        ToolCalls([("Calculator", {"expression": "15% of 180"}), ("Calculator", {"expression": "__import__('os')"})]),
        "15% of the €180 limit is €27 [1].",
    ]
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    first, second = answer_requests(llm)
    assert [t["function"]["name"] for t in first["tools"]] == ["Calculator", "Dates", "GroundedAnswer"]
    assert first["tool_choice"] == "required"
    results = [(m["tool_call_id"], m["content"]) for m in second["messages"] if m["role"] == "tool"]
    assert results[0] == ("call_1", "15% of 180 = 27")
    assert results[1][0] == "call_2" and results[1][1].startswith("Error: Only numbers")
    assert reply.text.startswith("15% of the €180 limit is €27 [1].")
    assert "_Computed: 15% of 180 = 27_" in reply.text and len(reply.citations) == 1


async def test_tool_rounds_are_capped_then_the_model_must_answer(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    asking = ToolCalls([("Dates", {"question": "how many working days until 2999-01-01?"})])
    llm.script["answer"] = [asking, asking]
    llm.script["GroundedAnswer"] = {"answer": "I could not work that out.", "used": []}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("How many working days until the far future deadline?"))
    requests = [body for _, body in llm.requests if kind_of(body) in ("answer", "GroundedAnswer")]
    assert len(requests) == 3 and requests[-1]["tool_choice"]["function"]["name"] == "GroundedAnswer"
    assert "Error: That is too far ahead" in requests[-1]["messages"][-1]["content"]
    assert reply.text.startswith("I could not work that out.")


async def test_a_question_that_is_only_arithmetic_costs_no_model_call(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("What is 15% of 240?"))
        refused = only(await Conversation(chat, "t:w:c:2").say("what is 2 ** 99999?"))
    assert llm.chat_kinds() == []
    assert (reply.text, reply.route, reply.citations) == ("15% of 240 = **36**", "tools", ())
    assert refused.text == "That exponent is too large (the limit is 1000)."
