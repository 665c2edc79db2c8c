"""Streamed answers end to end: the fake model streams its answer token by token over real HTTP
(a pace a real server keeps), the real chat service turns the tokens into drafts, and the real
bolt app and python-telegram-bot show them on the fake Slack and the fake Bot API — then the
final message with its sources and buttons takes their place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers import telegram_harness
from tests.helpers.conversation import QUESTION, route_to
from tests.helpers.slack_harness import CHANNEL, Harness, mention_event, running
from tests.helpers.telegram_harness import ANN, GROUP, bot_settings, mention, new_messages, private
from threadsage.bots.telegram import TelegramBot
from threadsage.chat import readable

ANSWER = "Premium economy is allowed for flights of six hours or more [1], booked through TripDesk [1]."
MODEL = {"OPENAI_API_KEY": "sk-test", "THREADSAGE_LLM_TIMEOUT": 10, "THREADSAGE_LLM_RETRIES": 0}


def streaming(llm: FakeOpenAI) -> FakeOpenAI:
    llm.tokens_per_second = 20  # the answer's 17 tokens in about a second
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = {"answer": ANSWER, "used": [1]}
    return llm


@asynccontextmanager
async def slack_on(tmp_path: Path, kb, llm: FakeOpenAI) -> AsyncIterator[Harness]:
    fake = FakeSlack().start()
    async with running(tmp_path, kb, fake=fake, OPENAI_BASE_URL=llm.base_url, **MODEL) as slack:
        yield slack
    fake.stop()


@asynccontextmanager
async def telegram_on(tmp_path: Path, fake: FakeBotAPI, kb, llm: FakeOpenAI) -> AsyncIterator[TelegramBot]:
    settings = bot_settings(tmp_path, fake, OPENAI_BASE_URL=llm.base_url, **MODEL)
    async with telegram_harness.running(settings, kb) as bot:
        yield bot


async def test_slack_streams_the_models_words_into_the_thread_then_posts_the_answer(
    tmp_path: Path, handbook_kb, llm: FakeOpenAI
) -> None:
    async with slack_on(tmp_path, handbook_kb, streaming(llm)) as slack:
        ts = await slack.mention(QUESTION)
        await slack.settle()
        [start] = slack.fake.of("chat.startStream")
        assert start["thread_ts"] == ts and start["recipient_user_id"] == "U222"
        [answer] = [m for m in slack.fake.current(CHANNEL, ts) if m["ts"] != ts]  # the placeholder gave way
        streamed = "".join(slack.fake.streams[(CHANNEL, answer["ts"])])
        assert len(slack.fake.streams[(CHANNEL, answer["ts"])]) >= 3  # the words came in several appends
        assert readable(ANSWER).startswith(streamed.strip()) and streamed.strip()
        assert "Premium economy is allowed" in answer["blocks"][0]["text"]  # Slack renders its Markdown
        assert [b["type"] for b in answer["blocks"]][-2:] == ["context", "context_actions"]  # sources, votes
        assert answer["metadata"]["event_type"] == "threadsage_reply"
        assert [name for name, _ in slack.fake.calls if "#" in name] == []


async def test_telegram_drafts_the_models_words_in_a_private_chat(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb, llm: FakeOpenAI
) -> None:
    async with telegram_on(tmp_path, fake, handbook_kb, streaming(llm)):
        chat = private(ANN)
        fake.say(chat, ANN, QUESTION)
        [answer] = await new_messages(fake, chat, 0)
        texts = [text for _, text in fake.drafts[chat["id"]]]
        assert len(texts) >= 2 and texts[-1] and readable(ANSWER).startswith(texts[-1])
        assert "Premium economy is allowed" in answer["text"] and answer["reply_markup"]["inline_keyboard"]


async def test_telegram_shows_the_models_words_in_a_group_in_the_message_that_becomes_the_answer(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb, llm: FakeOpenAI
) -> None:
    async with telegram_on(tmp_path, fake, handbook_kb, streaming(llm)):
        fake.say(GROUP, ANN, mention(QUESTION))
        [shown] = await new_messages(fake, GROUP, 0)
        assert readable(ANSWER).startswith(shown["text"])  # the first words, plain
        await fake.wait_for(lambda: fake.sent(GROUP["id"])[0].get("reply_markup"), timeout=20)
        [answer] = fake.sent(GROUP["id"])
        assert answer["message_id"] == shown["message_id"] and "Premium economy is allowed" in answer["text"]
        assert fake.drafts == {}


async def test_fifty_answers_streaming_at_once_in_slack_channels_meet_no_rate_limit(
    tmp_path: Path, handbook_kb, llm: FakeOpenAI
) -> None:
    """Ten channels, five questions each (fifty people), all at once: every answer is posted whole, and not one
    call goes past Slack's documented limits (the fake answers 429 past them) — the streams'
    appends coalesce and the steps give way to the replies instead."""
    channels = [f"C0LOAD{n:04d}" for n in range(10)]
    async with slack_on(tmp_path, handbook_kb, streaming(llm)) as slack:
        asked = []
        for n in range(50):
            event = {**mention_event(QUESTION, user=f"U0LOAD{n:04d}"), "channel": channels[n % 10]}
            asked.append((event["channel"], event["ts"]))
            assert await slack.event(event) == 200
        await slack.settle()
        answers = [[m for m in slack.fake.current(channel, ts) if m["ts"] != ts] for channel, ts in asked]
        assert all(len(answer) == 1 and answer[0]["metadata"]["event_type"] == "threadsage_reply" for answer in answers)
        assert all("Premium economy is allowed" in answer[0]["blocks"][0]["text"] for answer in answers)
        assert slack.fake.rate_limited() == []
        assert slack.fake.streams  # some streamed, within the channels' posts to spare
        assert len(slack.fake.of("chat.appendStream")) <= 100


async def test_fifty_answers_drafted_at_once_in_telegram_groups_meet_no_flood_control(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb, llm: FakeOpenAI
) -> None:
    """Ten groups, five questions each (fifty people), all at once: every answer arrives with its buttons, and
    Telegram never answers "retry after" (the fake does past 20 messages a minute in a group, 30 a
    second in all) — the drafts are shown only where the groups' limits have room to spare."""
    groups = [{"id": -1001000000000 - n, "title": f"Team {n}", "type": "supergroup"} for n in range(10)]
    async with telegram_on(tmp_path, fake, handbook_kb, streaming(llm)):
        for n in range(50):
            fake.say(groups[n % 10], {**ANN, "id": ANN["id"] + n}, mention(QUESTION))

        def answered() -> bool:
            sent = [m for group in groups for m in fake.sent(group["id"])]
            return sum(1 for m in sent if m.get("reply_markup")) == 50

        await fake.wait_for(answered, timeout=120)
        sent = [m for group in groups for m in fake.sent(group["id"])]
        assert len(sent) == 50 and all("Premium economy is allowed" in m["text"] for m in sent)  # one message each
        assert fake.flood_waits() == []
