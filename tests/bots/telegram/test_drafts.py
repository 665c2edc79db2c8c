"""The answer's words as they are written, in Telegram: `sendMessageDraft` in private chats, a
message edited with the newest words elsewhere, then the reply with its keyboard — through the real
python-telegram-bot against the fake Bot API; the chat service's answers come as drafts first
(tests/helpers/drafting.py)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from telegram import Bot
from telegram.error import BadRequest, Forbidden, RetryAfter

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.drafting import Drafting
from tests.helpers.telegram_harness import (
    ANN,
    BOB,
    FORUM,
    GROUP,
    TOKEN,
    TRAVEL,
    bot_settings,
    mention,
    new_messages,
    private,
    running,
)
from threadsage.bots.replies import STEPS
from threadsage.bots.telegram import TelegramBot
from threadsage.bots.telegram import drafting as telegram_drafting
from threadsage.bots.telegram.drafting import DRAFT_EVERY, EDIT_EVERY, draft_id
from threadsage.chat import Step
from threadsage.i18n import say


@asynccontextmanager
async def drafting(tmp_path: Path, fake: FakeBotAPI, kb, **options) -> AsyncIterator[TelegramBot]:
    wrap = lambda chat: Drafting.of(chat, **{"words_per_second": 100, **options})  # noqa: E731
    async with running(bot_settings(tmp_path, fake), kb, wrap=wrap) as bot:
        yield bot


async def test_in_a_private_chat_drafts_stream_then_the_answer_is_sent_with_its_keyboard(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb
) -> None:
    async with drafting(tmp_path, fake, handbook_kb):
        chat = private(ANN)
        question = fake.say(chat, ANN, TRAVEL)
        [answer] = await new_messages(fake, chat, 0)
        drafts = fake.drafts[chat["id"]]
        assert {d for d, _ in drafts} == {draft_id(f"{chat['id']}:{question['message_id']}")}  # one draft, animated
        texts = [text for _, text in drafts]
        assert len(texts) >= 2 and all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
        assert answer["reply_markup"]["inline_keyboard"] and "travel" in answer["text"].lower()
        assert fake.calls_of("editMessageText") == []


async def test_a_withdrawn_draft_shows_thinking_until_the_words_come_again(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb
) -> None:
    # the reply well after the last draft: the newest words are shown by then (every DRAFT_EVERY)
    async with drafting(tmp_path, fake, handbook_kb, withdraw_after=2, last_step=4 * DRAFT_EVERY):
        chat = private(ANN)
        fake.say(chat, ANN, TRAVEL)
        await new_messages(fake, chat, 0)
        texts = [text for _, text in fake.drafts[chat["id"]]]
        assert "" in texts and texts.index("") > 0 and texts[-1]  # "Thinking…", then the words again


async def test_in_a_group_one_message_shows_the_words_and_becomes_the_answer(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A group's pace (EDIT_EVERY) a third of its own, the words three times as fast: the same
    # number of edits, in a third of the time.
    monkeypatch.setattr(telegram_drafting, "EDIT_EVERY", EDIT_EVERY / 3)
    async with drafting(tmp_path, fake, handbook_kb, words_per_second=30):
        question = fake.say(GROUP, ANN, mention(TRAVEL))
        [shown] = await new_messages(fake, GROUP, 0)
        assert shown["reply_to_message"]["message_id"] == question["message_id"]  # quotes the question
        await fake.wait_for(lambda: fake.sent(GROUP["id"])[0].get("reply_markup"), timeout=20)
        [answer] = fake.sent(GROUP["id"])  # the same message, now the answer with its keyboard
        assert answer["message_id"] == shown["message_id"] and "travel" in answer["text"].lower()
        assert fake.drafts == {}  # drafts are for private chats only
        edits = fake.calls_of("editMessageText")
        assert 1 <= len(edits) <= 3  # within a group's edit budget: every EDIT_EVERY at most, then the answer


async def test_in_a_forum_topic_the_words_stay_in_the_topic(tmp_path: Path, fake: FakeBotAPI, handbook_kb) -> None:
    async with drafting(tmp_path, fake, handbook_kb):
        fake.say(FORUM, ANN, mention(TRAVEL), topic=9001)
        [shown] = await new_messages(fake, FORUM, 0)
        assert shown["message_thread_id"] == 9001
        await fake.wait_for(lambda: fake.sent(FORUM["id"])[0].get("reply_markup"), timeout=20)
        assert len(fake.sent(FORUM["id"])) == 1


async def test_the_fake_takes_drafts_as_the_bot_api_documents_them(fake: FakeBotAPI) -> None:
    """Through python-telegram-bot itself: drafts only in private chats, with a non-zero id, and
    only to a person who has started the bot."""
    fake.say(private(ANN), ANN, "/start")
    fake.say(GROUP, ANN, "hello")
    async with Bot(TOKEN, base_url=f"{fake.url}/bot") as bot:
        assert await bot.send_message_draft(ANN["id"], 7, "Hel")
        with pytest.raises(BadRequest, match="private"):
            await bot.send_message_draft(GROUP["id"], 7, "Hel")
        with pytest.raises(BadRequest, match="non-zero"):
            await bot.send_message_draft(ANN["id"], 0, "Hel")
        with pytest.raises(Forbidden, match="initiate"):
            await bot.send_message_draft(BOB["id"], 7, "Hel")
    assert fake.drafts == {ANN["id"]: [(7, "Hel")]}


async def test_in_a_private_chat_the_draft_shows_the_step_until_the_words_come(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb
) -> None:
    wrap = lambda chat: Drafting.of(replace(chat, progress=True), words_per_second=100)  # noqa: E731
    async with running(bot_settings(tmp_path, fake), handbook_kb, wrap=wrap):
        chat = private(ANN)
        fake.say(chat, ANN, TRAVEL)
        [answer] = await new_messages(fake, chat, 0)
        texts = [text for _, text in fake.drafts[chat["id"]]]
    steps = {say(key) for key in STEPS.values()}
    first_words = next(i for i, text in enumerate(texts) if text not in steps)
    assert texts[0] == say(STEPS[Step.SEARCHING])  # before any word: what the turn is doing
    assert not steps & set(texts[first_words:])  # once the words come, steps no longer show
    assert "travel" in answer["text"].lower()


async def test_a_reply_to_an_answer_its_words_became_continues_its_conversation(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb
) -> None:
    """In a group the answer is the message its drafts showed, edited: a reply to it (no mention)
    is answered with the memory of the first question."""
    async with drafting(tmp_path, fake, handbook_kb):
        fake.say(GROUP, ANN, mention("What is the rate limit per API key for the Tidewater API?"))
        await fake.wait_for(lambda: fake.sent(GROUP["id"]) and fake.sent(GROUP["id"])[0].get("reply_markup"), 20)
        [answer] = fake.sent(GROUP["id"])
        follow = fake.say(GROUP, BOB, "and what happens when it is exceeded?", reply_to=answer)
        await fake.wait_for(
            lambda: any(
                m.get("reply_markup") and m["message_id"] != answer["message_id"] for m in fake.sent(GROUP["id"])
            ),
            20,
        )
        continued = [m for m in fake.sent(GROUP["id"]) if m["message_id"] != answer["message_id"]][-1]
        since = len(fake.sent(GROUP["id"]))
        fake.say(GROUP, BOB, mention("and what happens when it is exceeded?"))  # a new chain: no memory
        await fake.wait_for(lambda: any(m.get("reply_markup") for m in fake.sent(GROUP["id"])[since:]), 20)
        fresh = [m for m in fake.sent(GROUP["id"])[since:] if m.get("reply_markup")][-1]
    assert continued["reply_to_message"]["message_id"] == follow["message_id"]
    assert fresh["text"] != continued["text"]  # the follow-up was read with the first question


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # raised inside PTB's RetryAfter
async def test_the_fake_keeps_telegrams_flood_limits(fake: FakeBotAPI) -> None:
    """Through python-telegram-bot without a rate limiter: 20 messages a minute in a group, then
    "retry after"; a private chat is not held by the group's limit."""
    fake.say(GROUP, ANN, "hello")
    fake.say(private(ANN), ANN, "/start")
    async with Bot(TOKEN, base_url=f"{fake.url}/bot") as bot:
        for n in range(20):
            await bot.send_message(GROUP["id"], f"{n}")
        with pytest.raises(RetryAfter):
            await bot.send_message(GROUP["id"], "one too many")
        await bot.send_message(ANN["id"], "still fine")
    [refused] = fake.flood_waits()
    assert (refused.method, refused.status) == ("sendMessage", 429)
