"""Real servers' habits (tests/fakes/openai_server.py, `habits`) met through the real bot: every
turn ends in an answer, a clarification or the documents' own words — never the apology — and
every request carries a token limit the server honours."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import Failure, FakeOpenAI, response_format
from tests.helpers.conversation import QUESTION, Conversation, llm_chat, only, route_to
from threadsage.chat import APOLOGY, ReplyKind
from threadsage.i18n import say

HOW_TO = "How do I request a security exception?"


def completions(llm: FakeOpenAI) -> list[dict]:
    return [body for path, body in llm.requests if path.endswith("/chat/completions")]


async def test_a_server_that_ignores_tool_choice_still_gets_routed_answered_and_judged(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """The structured replies come back as JSON in plain text: read as they are, no repair."""
    llm.habits = {"ignores_tool_choice"}
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = {"answer": "File it in the tracker [1].", "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict"]
    assert (reply.kind, reply.text, reply.route) == (
        ReplyKind.ANSWER,
        "File it in the tracker [1].",
        "standard_retrieval",
    )
    assert not reply.low_confidence and len(reply.citations) == 1


async def test_an_answer_in_plain_text_is_taken_as_the_answer(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.habits = {"ignores_tool_choice"}
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = "Premium economy, for flights of 6 hours or more [1]."
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert llm.chat_kinds() == ["RouteDecision", "answer"]
    assert reply.text == "Premium economy, for flights of 6 hours or more [1]." and len(reply.citations) == 1


async def test_an_answer_without_markers_is_cited_where_the_passages_back_it(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """Small models often leave out the [n] markers and the excerpts used, in plain text or in the
    structured answer: the sentence the travel policy backs gets its source, the aside none."""
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    said = "Flights of 6 hours or more qualify for premium economy. Have a good trip!"
    for habits, answer in (({"ignores_tool_choice"}, said), (set(), {"answer": said})):
        llm.habits = habits
        llm.script["answer"] = answer
        async with llm_chat(tmp_path, llm, handbook_kb) as chat:
            reply = only(await Conversation(chat).say(QUESTION))
        assert reply.text == "Flights of 6 hours or more qualify for premium economy [1]. Have a good trip!"
        assert [c["path"] for c in reply.citations] == ["finance/travel.md"]


async def test_json_followed_by_text_is_read(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.habits = {"json_then_text"}
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["Verdict"] = {"grounded": 0.9, "useful": 0.8, "reasoning": "fine"}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict"]
    assert reply.kind is ReplyKind.ANSWER and reply.confidence == 0.85


async def test_numbers_out_of_range_are_clamped(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    """The judge's `useful: 2` ended a turn with the apology; clamped, it is 1."""
    llm.script["RouteDecision"] = {"intent": "HOW_TO", "confidence": 7, "reasoning": "sure"}
    llm.script["Verdict"] = {"grounded": 1, "useful": 2, "reasoning": "very useful"}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert llm.chat_kinds() == ["RouteDecision", "answer", "Verdict"]  # no repair needed
    assert reply.kind is ReplyKind.ANSWER and reply.confidence == 1.0
    assert [s["scores"] for s in reply.trace if s["node"] == "judge"] == [{"grounded": 1.0, "useful": 1.0}]


async def test_replies_that_never_stop_are_cut_by_the_token_limit_and_the_turn_still_ends(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """Each reply runs to the request's `max_tokens` (a word a token, 0.2 ms each): the router's and
    the answer's cut JSON cannot be read, even after the repair, so the question is asked back,
    and after the click the documents' own words answer. No request goes without its limit."""
    llm.habits = {"never_stops"}
    llm.token_seconds = 0.0002
    once = {"THREADSAGE_LLM_TIMEOUT": 5, "THREADSAGE_MAX_CLARIFY_ROUNDS": 1}  # then the best effort
    async with llm_chat(tmp_path, llm, handbook_kb, **once) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(QUESTION))
        assert ask.kind is ReplyKind.CLARIFICATION and "router failed" in ask.trace[1]["detail"]
        answer = only(await talk.click(ask.interrupt_id, 0))
    assert answer.kind is ReplyKind.ANSWER and answer.text.startswith(say("model_failed")) and answer.citations
    sent = completions(llm)
    assert sent and all(0 < body["max_tokens"] <= 768 for body in sent)
    assert llm.chat_kinds().count("RouteDecision") == 2 + 2  # each route and its repair


async def test_a_500_on_json_schema_degrades_and_auto_never_asks_for_it(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.habits = {"rejects_response_format"}
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert reply.kind is ReplyKind.ANSWER and not reply.low_confidence
    assert not any(response_format(body) for body in completions(llm))  # auto: the named function
    llm.requests.clear()
    json_schema = {"THREADSAGE_STRUCTURED_OUTPUT": "json_schema", "THREADSAGE_MAX_CLARIFY_ROUNDS": 1}
    async with llm_chat(tmp_path / "b", llm, handbook_kb, **json_schema) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(QUESTION))
        assert ask.kind is ReplyKind.CLARIFICATION and "router failed" in ask.trace[1]["detail"]
        answer = only(await talk.click(ask.interrupt_id, 0))
    assert answer.text.startswith(say("model_failed")) and answer.text != APOLOGY
    assert all(response_format(body) == "json_schema" for body in completions(llm))


async def test_a_slow_first_token_is_waited_for_within_the_timeout(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.first_token_seconds = 0.5
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert reply.kind is ReplyKind.ANSWER and not reply.text.startswith(say("model_failed"))
    assert llm.abandoned == []


async def test_a_first_token_later_than_the_timeout_is_abandoned_once_not_piled_up(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """The server sees each timed-out request's connection closed, and no retry of it."""
    llm.first_token_seconds = 3
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_LLM_TIMEOUT=1) as chat:
        reply = only(await Conversation(chat).say(QUESTION))
    assert reply.kind is ReplyKind.CLARIFICATION and "router failed: ModelFailure" in reply.trace[1]["detail"]
    assert llm.chat_kinds() == ["RouteDecision"] and llm.abandoned == ["RouteDecision"]


async def test_a_failed_judgement_keeps_the_answer_marked_unchecked(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = {"answer": "File it in the tracker [1].", "used": [1]}
    llm.script["Verdict"] = Failure(status=500)
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say(HOW_TO))
    assert (reply.kind, reply.text) == (ReplyKind.ANSWER, "File it in the tracker [1].")
    assert reply.low_confidence and "judge failed" in reply.trace[-2]["detail"]
    kinds = llm.chat_kinds()  # the judgement tried twice (a retry), and no second hop behind it
    assert (kinds.count("answer"), kinds.count("Verdict"), "rewrite" in kinds) == (1, 2, False)


async def test_an_invented_follow_up_is_not_trusted(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    """A rewrite that shares no word with the conversation is dropped for the question as typed."""
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["contextualise"] = ["laptop maintenance records", "Which cabin class for a flight to Toronto?"]
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        talk = Conversation(chat)
        await talk.say(QUESTION)
        invented = only(await talk.say("and to Toronto?"))
        kept = only(await talk.say("and to Toronto?"))
    [dropped] = [s["detail"] for s in invented.trace if s["node"] == "contextualise"]
    assert "shares no word with the conversation" in dropped
    assert [s["detail"] for s in kept.trace if s["node"] == "contextualise"] == [
        "standalone: Which cabin class for a flight to Toronto?"
    ]


async def test_a_failing_deep_search_step_counts_as_not_found(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("COMPARISON")
    llm.script["SubQuestions"] = {"questions": ["Hotel limit in Lisbon?", "Hotel limit in Toronto?"]}
    llm.script["StepResult"] = [Failure(status=500), {"answer": "€150 a night [1].", "found": True}]
    llm.script["Replan"] = {"questions": []}
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_LLM_RETRIES=0) as chat:
        reply = only(await Conversation(chat).say("Compare the hotel limits of Lisbon and Toronto"))
    assert reply.kind is ReplyKind.ANSWER and reply.text != APOLOGY
    steps = [s["detail"] for s in reply.trace if s["node"] == "execute"]
    assert steps[0].endswith("nothing found")


async def test_the_router_forgetting_to_clarify_is_backstopped_by_the_evidence(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """The deterministic ambiguity check runs beside the router: two documents answer "reset my
    password" alike, so the question is asked back although the router was sure."""
    llm.script["RouteDecision"] = route_to("HOW_TO", 0.95)
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        ask = only(await Conversation(chat).say("How do I reset my password?"))
    assert ask.kind is ReplyKind.CLARIFICATION and len(ask.choices) >= 2
    assert llm.chat_kinds() == ["RouteDecision"] and "ambiguous" in ask.trace[1]["detail"]


async def test_the_routers_options_are_honoured_without_its_flag(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to(
        "FACT_LOOKUP", 0.9, clarify_prompt="Which trip?", clarify_options=["Within Europe", "To Toronto"]
    )
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        ask = only(await Conversation(chat).say(QUESTION))
    assert (ask.kind, ask.text) == (ReplyKind.CLARIFICATION, "Which trip?")
    assert [c.label for c in ask.choices] == ["Within Europe", "To Toronto"]


async def test_small_talk_the_router_sent_to_the_documents_is_answered_as_small_talk(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """A small model routed a goodbye to retrieval (three answer calls, 70 s); the offline rules
    beside the router read it as small talk, so it gets a chat reply and no search answer."""
    llm.script["RouteDecision"] = route_to("HOW_TO", 0.95)
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("Thanks, that's all for now - bye!"))
    assert llm.chat_kinds() == ["RouteDecision", "chat"]
    assert (reply.kind, reply.route) == (ReplyKind.ANSWER, "direct_reply") and not reply.citations
    assert "small talk" in reply.trace[1]["detail"]


async def test_a_question_the_router_sent_to_the_documents_stays_there(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """Thanks that ask something are not small talk: the router's decision holds."""
    llm.script["RouteDecision"] = route_to("HOW_TO", 0.95)
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        reply = only(await Conversation(chat).say("Thanks! And how do I request a security exception?"))
    assert llm.chat_kinds()[:2] == ["RouteDecision", "answer"] and reply.route == "standard_retrieval"
