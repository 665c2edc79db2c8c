"""What a person sees while a turn works, and edits of a question, through the real bolt app: a
model-backed turn shows one placeholder that follows its steps and becomes its answer (also when
the turn is redelivered), and a question edited before its answer is answered as edited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, user_text
from tests.fakes.slack_api import BOT_USER, FakeSlack, message_changed
from tests.helpers.conversation import delivering, route_to
from tests.helpers.slack_harness import CHANNEL, Harness, as_text, mention_event, running, thread_messages
from threadsage.bots.replies import STEPS
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.progress import Placeholder
from threadsage.bots.slack.sending import PLACEHOLDER_EVENT, REPLY_EVENT
from threadsage.chat import Progress, Step, Turn, notice, session_config
from threadsage.delivery.current import Delivery
from threadsage.delivery.jobs import Job
from threadsage.i18n import say

RATE_LIMIT = "What is the rate limit per API key?"
CABIN = "Which cabin class may I book for a flight of 6 hours or more?"


@asynccontextmanager
async def with_model(tmp_path: Path, kb, llm: FakeOpenAI, **overrides) -> AsyncIterator[Harness]:
    """The bot on the language-model back-end (the fake OpenAI server): progress is on by default."""
    fake = FakeSlack().start()
    settings = {
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": llm.base_url,
        "THREADSAGE_LLM_TIMEOUT": 5,
        "THREADSAGE_LLM_RETRIES": 0,
    }
    async with running(tmp_path, kb, fake=fake, **settings, **overrides) as slack:
        yield slack
    fake.stop()


async def finished(slack: Harness, session: str) -> None:
    """Until the session's run has ended with its answer checkpointed."""
    for _ in range(500):
        snapshot = await slack.chat.graph.aget_state(session_config(session))
        if snapshot.values.get("answer") and not snapshot.next:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the turn did not finish")


def replies_in(slack: Harness, thread_ts: str) -> list[dict]:
    """The bot's messages in a thread as they are now (updates applied)."""
    return [m for m in slack.fake.current(CHANNEL, thread_ts) if m["ts"] != thread_ts]


async def test_a_model_backed_turn_shows_its_steps_then_its_words_one_message_at_a_time(
    tmp_path: Path, handbook_kb, llm: FakeOpenAI
) -> None:
    """The placeholder follows the steps until the answer's words stream (tests/bots/slack/
    test_streaming.py); it then gives way, and the streamed message becomes the answer."""
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = "Premium economy is allowed [1]."
    async with with_model(tmp_path, handbook_kb, llm, THREADSAGE_SLACK_STEP_SECONDS=0) as slack:  # every step shown
        ts = await slack.mention(CABIN)
        await slack.settle()
        [placeholder] = slack.fake.posted()
        assert (placeholder["thread_ts"], placeholder["text"]) == (ts, say(STEPS[Step.SEARCHING]))
        assert placeholder["metadata"]["event_type"] == PLACEHOLDER_EVENT
        shown = [u["text"] for u in slack.fake.of("chat.update") if u["ts"] == placeholder["ts"]]
        assert shown == [say(STEPS[Step.WRITING])]  # then the words: the check runs behind them
        assert [d["ts"] for d in slack.fake.of("chat.delete")] == [placeholder["ts"]]
        [answer] = replies_in(slack, ts)  # one message, the streamed one, now the answer
        assert slack.fake.streams.get((CHANNEL, answer["ts"]))  # the message that was streamed
        assert "Premium economy is allowed" in as_text(answer)
        assert answer["metadata"]["event_type"] == REPLY_EVENT and answer["blocks"][-1]["block_id"].startswith(
            "feedback-"
        )


async def test_steps_that_pass_quickly_are_not_shown_one_by_one(tmp_path: Path, handbook_kb, llm: FakeOpenAI) -> None:
    """By default a step shows once it has waited a second (the first one too, in a thread: the
    question's 👀 says the turn has begun): a turn whose words come sooner posts no placeholder —
    it would be deleted for the stream at once — and no step update (chat.update is a Tier 3
    method of Slack's Web API); the one update makes the streamed message the answer."""
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = "Premium economy is allowed [1]."
    async with with_model(tmp_path, handbook_kb, llm, THREADSAGE_SLACK_STEP_SECONDS=30) as slack:
        ts = await slack.mention(CABIN)
        await slack.settle()
        assert slack.fake.posted() == [] and slack.fake.of("chat.delete") == []
        [update] = slack.fake.of("chat.update")
        [answer] = replies_in(slack, ts)
    assert update["ts"] == answer["ts"] and slack.fake.streams.get((CHANNEL, answer["ts"]))
    assert "Premium economy is allowed" in as_text(answer)


async def test_a_turn_slower_than_a_step_shows_its_placeholder_until_the_words_come(
    tmp_path: Path, handbook_kb, llm: FakeOpenAI
) -> None:
    """The first step waits its time, not the turn: with words later than that, the placeholder is
    posted once it has waited, then gives way to the stream — once the stream has started, so that
    the thread never shows neither (a start Slack's limits have no room for keeps the placeholder)."""
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = "Premium economy is allowed [1]."
    llm.latency = 0.4  # each model call: the words come after two of them
    async with with_model(tmp_path, handbook_kb, llm, THREADSAGE_SLACK_STEP_SECONDS=0.2) as slack:
        ts = await slack.mention(CABIN)
        await slack.settle()
        [placeholder] = slack.fake.posted()
        assert (placeholder["thread_ts"], placeholder["metadata"]["event_type"]) == (ts, PLACEHOLDER_EVENT)
        assert [d["ts"] for d in slack.fake.of("chat.delete")] == [placeholder["ts"]]
        names = [name for name, _ in slack.fake.calls]
        assert names.count("chat.startStream") == 1 and names.index("chat.startStream") < names.index("chat.delete")
        [answer] = replies_in(slack, ts)
        assert "Premium economy is allowed" in as_text(answer)


async def test_a_step_waits_for_its_time_then_shows_the_latest_and_the_reply_drops_the_rest(slack: Harness) -> None:
    ts = await slack.mention(RATE_LIMIT)
    await slack.settle()
    slack.fake.calls.clear()
    shown = Placeholder(slack.bot.send, Place("T111", CHANNEL, ts, False), "turn-1", True, step_seconds=0.3)
    await shown.show(Progress(Step.SEARCHING))
    await shown.show(Progress(Step.WRITING))  # too soon: waits
    await shown.show(Progress(Step.CHECKING))  # the latest, shown when the time comes
    assert slack.fake.of("chat.update") == []
    await slack.fake.wait_for("chat.update")  # when the time comes (however late), the latest step
    assert [u["text"] for u in slack.fake.of("chat.update")] == [say(STEPS[Step.CHECKING])]
    shown.step_seconds = 30  # too soon again, however loaded the machine; the reply comes first
    await shown.show(Progress(Step.WRITING))
    await shown.deliver(notice("The answer."), Turn("slack", "s", "U1", "m1", text="q"))
    updates = [u["text"] for u in slack.fake.of("chat.update")]
    assert (
        updates[0] == say(STEPS[Step.CHECKING])
        and len(updates) == 2
        and "The answer." in str(slack.fake.of("chat.update")[-1])
    )


async def test_progress_can_be_turned_off(tmp_path: Path, handbook_kb, llm: FakeOpenAI) -> None:
    async with with_model(tmp_path, handbook_kb, llm, THREADSAGE_SLACK_PROGRESS=False) as slack:
        ts = await slack.mention(CABIN)
        await slack.settle()
        [answer] = slack.fake.posted()
        assert answer["thread_ts"] == ts and answer["metadata"]["event_type"] == REPLY_EVENT
        assert slack.fake.of("chat.update") == []
        assert llm.chat_kinds() and not [
            body for _, body in llm.requests if body.get("stream")
        ]  # no words shown: none streamed


async def test_a_redelivered_turn_updates_its_placeholder_rather_than_posting_anew(tmp_path: Path, handbook_kb) -> None:
    fake = FakeSlack().start()
    # steps reported offline too; shown at once, so that there is a placeholder before the answer
    async with running(tmp_path, handbook_kb, fake=fake, progress=True, THREADSAGE_SLACK_STEP_SECONDS=0) as slack:
        event = mention_event(RATE_LIMIT)
        ts = event["ts"]
        job = Job("slack", "message", {"event": event, "place": asdict(Place("T111", CHANNEL, ts, False))}, "k")
        fake.hold["chat.update"] = 30.0  # a step's update takes effect; its worker dies waiting for the answer
        with delivering(Delivery("job-1", attempt=1, final=False)):
            first = asyncio.create_task(slack.bot.perform(job))
        await fake.wait_for("chat.update")
        await finished(
            slack, Place("T111", CHANNEL, ts, False).session
        )  # (an unfinished run is the chat service's part)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        fake.hold.clear()
        with delivering(Delivery("job-1", attempt=2, final=False)):
            await slack.bot.perform(job)
        [placeholder] = fake.posted()
        [answer] = replies_in(slack, ts)
        assert answer["ts"] == placeholder["ts"] and answer["metadata"]["event_type"] == REPLY_EVENT
        assert "engineering/api-style-guide.md" in as_text(answer)
    fake.stop()


async def test_a_question_edited_before_its_answer_is_answered_as_edited(slack: Harness) -> None:
    slack.fake.hold["reactions.add"] = 0.5  # the 👀 goes on; the turn has not begun when the edit comes
    ts = await slack.mention(RATE_LIMIT)
    original = {"type": "message", "user": "U222", "text": f"<@{BOT_USER}> {RATE_LIMIT}", "ts": ts}
    assert await slack.event(message_changed(CHANNEL, original, f"<@{BOT_USER}> {CABIN}")) == 200
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    assert "finance/travel.md" in as_text(answer) and "api-style-guide" not in as_text(answer)


async def test_an_edit_after_the_answer_is_ignored(slack: Harness) -> None:
    ts = await slack.mention(RATE_LIMIT)
    await slack.settle()
    original = {"type": "message", "user": "U222", "text": f"<@{BOT_USER}> {RATE_LIMIT}", "ts": ts}
    await slack.event(message_changed(CHANNEL, original, f"<@{BOT_USER}> {CABIN}"))
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    assert "api-style-guide" in as_text(answer)
    assert await slack.bot.coordinator.recall(f"slack-question:{CHANNEL}:{ts}:edit") is None  # not kept for later


async def test_a_question_edited_while_its_turn_runs_gets_one_answer_to_the_edit(
    tmp_path: Path, handbook_kb, llm: FakeOpenAI
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = lambda request: "About: " + user_text(request).rsplit("Question: ", 1)[-1] + " [1]"
    llm.latency = 0.2
    async with with_model(tmp_path, handbook_kb, llm) as slack:
        ts = await slack.mention(RATE_LIMIT)
        while not llm.chat_kinds():  # noqa: ASYNC110 - the turn is running: its first request came, in the fake's thread
            await asyncio.sleep(0.01)
        original = {"type": "message", "user": "U222", "text": f"<@{BOT_USER}> {RATE_LIMIT}", "ts": ts}
        await slack.event(message_changed(CHANNEL, original, f"<@{BOT_USER}> {CABIN}"))
        await slack.settle()
        [answer] = replies_in(slack, ts)
        assert f"About: {CABIN}" in as_text(answer) and answer["metadata"]["event_payload"]["turn"].startswith(
            f"{CHANNEL}:{ts}:edited:"
        )
        assert len(slack.fake.posted()) <= 1  # at most the placeholder, given way to the stream: no second one


async def test_the_steps_of_a_deep_search_show_in_the_placeholder(tmp_path: Path, handbook_kb, llm: FakeOpenAI) -> None:
    llm.script["RouteDecision"] = route_to("COMPARISON")
    llm.script["SubQuestions"] = {"questions": ["Lisbon hotel limit <!channel>?", "Toronto hotel limit?"]}
    async with with_model(tmp_path, handbook_kb, llm, THREADSAGE_SLACK_STEP_SECONDS=0) as slack:
        ts = await slack.mention("Lisbon vs Toronto hotel limits?")
        await slack.settle()
        updates = [u["text"] for u in slack.fake.of("chat.update")]
        assert updates[:-1] == [
            f"{say(STEPS[Step.SEARCHING])} (step 1: Lisbon hotel limit &lt;!channel&gt;?)",  # pings nobody
            f"{say(STEPS[Step.SEARCHING])} (step 2: Toronto hotel limit?)",
            say(STEPS[Step.WRITING]),
        ]
        [answer] = replies_in(slack, ts)
        assert "Both sides, from the findings" in as_text(answer)
