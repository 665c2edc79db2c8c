"""The answer's words as they are written: Slack's streaming messages in threads (a mention's, a
DM's, the AI panel's), the placeholder's text at the top of a DM, the final message with its
sources, buttons and metadata — through the real bolt app and slack_sdk's `chat_stream`, against
the fake Slack's streaming methods. The chat service's answers come as drafts first
(tests/helpers/drafting.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.fakes.slack_api import FakeSlack, assistant_thread
from tests.helpers.conversation import delivering
from tests.helpers.drafting import Drafting
from tests.helpers.slack_harness import (
    CHANNEL,
    TRAVEL,
    Harness,
    as_text,
    dm_message,
    next_ts,
    running,
    thread_reply,
)
from threadsage.bots.replies import STEPS
from threadsage.bots.slack.jobs import MessageJob
from threadsage.bots.slack.places import place_of_mention
from threadsage.bots.slack.streaming import APPEND_EVERY
from threadsage.bots.slack.tasks import Tasks
from threadsage.chat import Found, Progress, Step
from threadsage.delivery.current import Delivery
from threadsage.i18n import say

DM = "D222"


@asynccontextmanager
async def drafting(tmp_path: Path, kb, **options) -> AsyncIterator[Harness]:
    fake = FakeSlack().start()
    settings = {key: options.pop(key) for key in list(options) if key.startswith("THREADSAGE_")}
    wrap = lambda chat: Drafting.of(chat, **{"words_per_second": 100, **options})  # noqa: E731
    async with running(
        tmp_path, kb, fake=fake, progress=True, wrap=wrap, THREADSAGE_SLACK_STEP_SECONDS=0.2, **settings
    ) as slack:
        yield slack
    fake.stop()


def the_answer(slack: Harness, channel: str, thread_ts: str) -> dict:
    """The one answer in the thread as it is now: no placeholder left, no stream still open."""
    messages = slack.fake.current(channel, thread_ts)
    [answer] = [m for m in messages if (m.get("metadata") or {}).get("event_type") == "threadsage_reply"]
    others = [m for m in messages if m is not answer and m["ts"] != thread_ts]
    assert not [m for m in others if m.get("streaming") or (m.get("metadata") or {}).get("event_type")]
    return answer


async def test_in_a_thread_the_answer_streams_then_becomes_the_answer_with_sources_and_votes(
    tmp_path: Path, handbook_kb
) -> None:
    # the reply well after the last draft: the stream appends it (every APPEND_EVERY) whatever the load
    async with drafting(tmp_path, handbook_kb, last_step=4 * APPEND_EVERY) as slack:
        ts = await slack.mention(TRAVEL)
        await slack.settle()
        [start] = slack.fake.of("chat.startStream")
        assert (start["channel"], start["thread_ts"]) == (CHANNEL, ts)
        assert (start["recipient_user_id"], start["recipient_team_id"]) == ("U222", "T111")
        answer = the_answer(slack, CHANNEL, ts)  # one message: the placeholder gave way, the stream became the answer
        streamed = slack.fake.streams[(CHANNEL, answer["ts"])]
        assert len(streamed) > 2 and "premium economy" in "".join(streamed).lower()
        assert [b["type"] for b in answer["blocks"]][-2:] == ["context", "context_actions"]
        assert "finance/travel.md" in answer["blocks"][-2]["elements"][0]["text"]
        assert answer["metadata"]["event_payload"]["turn"] == f"{CHANNEL}:{ts}"
        assert not answer["streaming"] and slack.fake.of("chat.stopStream")
        assert all("#" not in name for name, _ in slack.fake.calls)  # no call was refused


async def test_the_steps_stay_above_the_streamed_words_as_slacks_task_timeline(tmp_path: Path, handbook_kb) -> None:
    async with drafting(tmp_path, handbook_kb, last_step=4 * APPEND_EVERY) as slack:
        ts = await slack.mention(TRAVEL)
        await slack.settle()
        [start] = slack.fake.of("chat.startStream")
        answer = the_answer(slack, CHANNEL, ts)
        tasks = list(slack.fake.tasks[(CHANNEL, answer["ts"])].values())
    assert start["task_display_mode"] == "timeline"
    assert tasks[0]["title"] == say(STEPS[Step.SEARCHING])
    assert say(STEPS[Step.WRITING]) in [t["title"] for t in tasks]
    assert {t["status"] for t in tasks} == {"complete"}  # the writing step too, once the stream stopped
    assert re.fullmatch(r"Found \d+ passages? in \d+ documents?", tasks[0]["output"])  # what the search found
    assert "premium economy" in as_text(answer).lower()


def test_a_search_task_names_what_it_found_and_links_the_documents_on_the_web() -> None:
    tasks = Tasks()
    tasks.saw(Progress(Step.SEARCHING))
    found = Found(3, (("Laptops", "https://it.example.com/laptops"), ("Travel", "finance/travel.md")))
    tasks.saw(Progress(Step.CHECKING, found=found))
    tasks.saw(Progress(Step.WRITING, found=found))  # told again: the search keeps what it first found
    searching, checking, writing = (chunk.to_dict() for chunk in tasks.started())
    assert searching["output"] == "Found 3 passages in 2 documents"
    assert searching["sources"] == [{"type": "url", "url": "https://it.example.com/laptops", "text": "Laptops"}]
    assert "output" not in checking and "sources" not in writing
    assert writing["status"] == "in_progress"


async def test_at_the_top_of_a_dm_the_placeholder_shows_the_words_so_far(tmp_path: Path, handbook_kb) -> None:
    async with drafting(tmp_path, handbook_kb, THREADSAGE_SLACK_AGENT_VIEW=False) as slack:  # the DM's top level
        await slack.event(dm_message(TRAVEL, DM))
        await slack.settle()
        assert slack.fake.of("chat.startStream") == []  # Slack streams only in threads
        [answer] = slack.fake.current(DM)
        updates = [u["text"] for u in slack.fake.of("chat.update") if u["ts"] == answer["ts"]]
        # the first words at once, the words so far (every step_seconds), then the answer
        assert len(updates) >= 3 and "From the documents".startswith(updates[0]) and updates[1].startswith(updates[0])
        assert "finance/travel.md" in str(answer["blocks"])


async def test_in_the_ai_panel_the_answer_streams_in_its_thread(tmp_path: Path, handbook_kb) -> None:
    async with drafting(tmp_path, handbook_kb) as slack:
        thread_ts = next_ts()
        await slack.event(assistant_thread("assistant_thread_started", "U222", DM, thread_ts))
        await slack.settle()
        await slack.event(dm_message(TRAVEL, DM, thread_ts=thread_ts))
        await slack.settle()
        [start] = slack.fake.of("chat.startStream")
        assert start["thread_ts"] == thread_ts and "recipient_user_id" not in start  # a DM: no recipient needed
        assert slack.fake.statuses[(DM, thread_ts)] == ""  # the status went with the bot's message
        assert "finance/travel.md" in str(the_answer(slack, DM, thread_ts)["blocks"])


async def test_a_withdrawn_draft_stops_the_stream_and_the_answer_replaces_it(tmp_path: Path, handbook_kb) -> None:
    async with drafting(tmp_path, handbook_kb, withdraw_after=3) as slack:
        ts = await slack.mention(TRAVEL)
        await slack.settle()
        assert len(slack.fake.of("chat.startStream")) == 1  # a stream cannot take words back: no second one
        answer = the_answer(slack, CHANNEL, ts)
        assert len(slack.fake.streams[(CHANNEL, answer["ts"])]) <= 4  # stopped at the withdrawal
        assert "finance/travel.md" in str(answer["blocks"])


async def test_a_redelivered_turn_finishes_its_stream_instead_of_starting_another(tmp_path: Path, handbook_kb) -> None:
    # slow enough words that the worker is stopped mid-stream (an append comes every APPEND_EVERY)
    async with drafting(tmp_path, handbook_kb, words_per_second=40) as slack:
        event = {
            "type": "app_mention",
            "user": "U222",
            "text": f"<@U0BOT> {TRAVEL}",
            "ts": next_ts(),
            "channel": CHANNEL,
        }
        place = place_of_mention(event, {"team_id": "T111"})
        job = MessageJob(event=event, place=place).job(place.session)
        with delivering(Delivery("job-1", attempt=1, final=False)):
            first = asyncio.create_task(slack.bot.perform(job))
            await slack.fake.wait_for("chat.appendStream")
            slack.fake.drop_next("chat.stopStream", 2)  # the worker dies mid-stream, its stream left open
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
        with delivering(Delivery("job-1", attempt=2, final=False)):
            await slack.bot.perform(job)
        assert len(slack.fake.of("chat.startStream")) == 1
        assert [name for name, _ in slack.fake.calls if "#" in name] == ["chat.stopStream#dropped"] * 2
        answer = the_answer(slack, CHANNEL, event["ts"])
        assert "finance/travel.md" in str(answer["blocks"])


async def test_streaming_where_slack_refuses_it_still_answers(tmp_path: Path, handbook_kb) -> None:
    async with drafting(tmp_path, handbook_kb) as slack:
        slack.fake.refuse_next("chat.startStream", "channel_type_not_supported")
        ts = await slack.mention(TRAVEL)
        await slack.settle()
        assert "finance/travel.md" in str(the_answer(slack, CHANNEL, ts)["blocks"])


async def test_the_fake_streams_as_slack_documents_it(slack: Harness) -> None:
    """The fake's streaming methods and response_url, through slack_sdk itself: what Slack's
    method reference says is required, refused as it says."""
    client = AsyncWebClient(token="xoxb-test", base_url=slack.fake.api_url)
    with pytest.raises(SlackApiError, match="invalid_arguments"):  # a channel needs its recipient
        await client.chat_startStream(channel=CHANNEL, thread_ts="1.1", markdown_text="Hi")
    with pytest.raises(SlackApiError, match="invalid_arguments"):  # a DM streams only in a thread
        await client.chat_startStream(channel=DM, thread_ts="", markdown_text="Hi")
    started = await client.chat_startStream(
        channel=CHANNEL, thread_ts="1.1", recipient_user_id="U222", recipient_team_id="T111", markdown_text="Hi"
    )
    with pytest.raises(SlackApiError, match="msg_too_long"):
        await client.chat_appendStream(channel=CHANNEL, ts=started["ts"], markdown_text="x" * 12_001)
    await client.chat_appendStream(channel=CHANNEL, ts=started["ts"], markdown_text=" there")
    await client.chat_stopStream(channel=CHANNEL, ts=started["ts"])
    with pytest.raises(SlackApiError, match="message_not_in_streaming_state"):
        await client.chat_appendStream(channel=CHANNEL, ts=started["ts"], markdown_text="!")
    assert slack.fake.streams[(CHANNEL, started["ts"])] == ["Hi", " there", ""]
    task = {"type": "task_update", "id": "t1", "title": "Looking", "status": "in_progress"}
    wrongs = (
        {**task, "status": "done"},
        {**task, "details": "x" * 257},
        {**task, "sources": [{"type": "url", "url": "https://example.com", "text": ""}]},  # a source needs its text
        {"type": "plan_update"},
        {"type": "x"},
    )
    for wrong in wrongs:
        with pytest.raises(SlackApiError, match="invalid_chunks"):
            await client.chat_startStream(channel=DM, thread_ts="1.1", chunks=[wrong])
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        await client.chat_startStream(channel=DM, thread_ts="1.1", chunks=[task], task_display_mode="list")
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        await client.chat_postEphemeral(channel=CHANNEL, user="", text="x")
    webhook = AsyncWebhookClient(slack.fake.response_url("five"))
    statuses = [(await webhook.send(text=f"{n}")).status_code for n in range(6)]
    assert statuses == [200] * 5 + [404]  # "up to 5 times within 30 minutes"


async def test_the_fake_keeps_slacks_documented_rate_limits(slack: Harness) -> None:
    """Tier 3 (chat.update) takes 50 calls a minute in the workspace; the 51st is 429 with a
    Retry-After, which slack_sdk reads (its retry handlers off here, so the refusal shows)."""
    client = AsyncWebClient(token="xoxb-test", base_url=slack.fake.api_url)
    posted = await client.chat_postMessage(channel=CHANNEL, text="Hi")
    for n in range(50):
        await client.chat_update(channel=CHANNEL, ts=posted["ts"], text=f"Hi {n}")
    with pytest.raises(SlackApiError, match="ratelimited") as refused:
        await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="one too many")
    assert refused.value.response.status_code == 429 and 1 <= int(refused.value.response.headers["Retry-After"]) <= 61
    assert slack.fake.rate_limited() == ["chat.update#429"]


async def test_a_reply_in_the_thread_of_a_streamed_answer_continues_its_conversation(
    tmp_path: Path, handbook_kb
) -> None:
    """The streamed message became the answer; a reply in its thread (no mention) is answered with
    the memory of the first question, and a new mention asking the same is not."""
    question = "What is the rate limit per API key for the Tidewater API?"
    follow = "and what happens when it is exceeded?"
    async with drafting(tmp_path, handbook_kb) as slack:
        ts = await slack.mention(question)
        await slack.settle()
        assert slack.fake.streams and the_answer(slack, CHANNEL, ts)
        await slack.event(thread_reply(follow, ts))
        await slack.settle()
        continued = [m for m in slack.fake.current(CHANNEL, ts) if (m.get("metadata") or {}).get("event_type")][-1]
        fresh_ts = await slack.mention(follow)
        await slack.settle()
        fresh = the_answer(slack, CHANNEL, fresh_ts)
    assert continued["metadata"]["event_payload"]["turn"] != f"{CHANNEL}:{ts}"  # the follow-up's own answer
    assert as_text(fresh) != as_text(continued)  # the follow-up was read with the first question
