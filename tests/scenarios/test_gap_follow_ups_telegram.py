"""Gaps that close themselves, on Telegram: the real python-telegram-bot against the fake Bot API
over HTTP, a real chat service (offline back-end, SQLite records). A question not covered, then a
page added: one follow-up, in reply to the original message (and so in its forum topic), in the
language of the question; never a second; nothing where the place may not read the page, or where
the chat is no longer allowed; the per-place hourly limit; `dm` and `off`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.library import GAP, LEAVE, Library, library
from tests.helpers.telegram_harness import ANN, BOB, FORUM, GROUP, bot_settings, exchange, mention, private, running
from threadsage.bots.telegram import TelegramBot
from threadsage.console.knowledge_loop import LoopData

LEAVE_ZH = "# 育儿假\n\n申请育儿假，请在假期开始前八周把育儿假申请表交给人事团队。育儿假共十六周。\n"
GAP_ZH = "怎么申请育儿假？"


@asynccontextmanager
async def loop_bot(tmp_path: Path, fake: FakeBotAPI, **extra: Any) -> AsyncIterator[tuple[TelegramBot, Library]]:
    settings = bot_settings(tmp_path, fake, **extra)
    with library(tmp_path / "library", settings) as shelf:
        async with running(settings, shelf.kb) as bot:
            yield bot, shelf


def follow_ups(fake: FakeBotAPI, chat: dict, marker: str = "now covered") -> list[dict]:
    return [m for m in fake.sent(chat["id"]) if marker in m["text"]]


async def closed(bot: TelegramBot) -> dict[str, str]:
    """What became of each closed gap's follow-up, by chat and question."""
    assert bot.chat.loop is not None
    return {f"{r['channel']} {r['question']}": r["follow_up"] for r in await LoopData(bot.chat.loop.records).closed()}


async def test_a_closed_gap_is_followed_up_once_in_reply_to_the_question_in_its_topic(tmp_path, fake) -> None:
    async with loop_bot(tmp_path, fake) as (bot, shelf):
        question, reply = await exchange(fake, FORUM, ANN, mention(GAP), topic=9001)
        assert "now covered" not in reply["text"]
        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE))
        [note] = follow_ups(fake, FORUM)
        assert note["reply_to_message"]["message_id"] == question["message_id"]
        assert note["message_thread_id"] == 9001 and note["is_topic_message"]  # Telegram's topic of the reply
        assert "eight weeks" in note["text"] and "parental-leave.md" in note["text"]  # the answer, its source
        assert GAP in note["text"]
        assert await closed(bot) == {f"{FORUM['id']} {GAP}": "sent"}

        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE + "\nAsk the people team.\n"))
        await fake.quiet(0.1)
        assert len(follow_ups(fake, FORUM)) == 1  # never a second follow-up for one question

        since = len(fake.sent(FORUM["id"]))  # a reply to the follow-up continues the question's session
        fake.say(FORUM, ANN, "How long does it last?", reply_to=note, topic=9001)
        await fake.wait_for(lambda: len(fake.sent(FORUM["id"])) > since)


async def test_in_the_language_of_the_question_and_in_private(tmp_path, fake) -> None:
    async with loop_bot(tmp_path, fake) as (bot, shelf):
        question, _ = await exchange(fake, private(BOB), BOB, GAP_ZH)
        await bot.chat.knowledge.changed(shelf.write("hr", "leave-zh.md", LEAVE_ZH))
        [note] = follow_ups(fake, private(BOB), "现在文档里有答案了")
        assert note["reply_to_message"]["message_id"] == question["message_id"]
        assert "八周" in note["text"]


async def test_no_follow_up_where_the_place_may_not_read_the_page_nor_beyond_the_hourly_limit(tmp_path, fake) -> None:
    scoped = {str(GROUP["id"]): ["docs"], str(FORUM["id"]): ["docs", "hr"]}
    async with loop_bot(tmp_path, fake, THREADSAGE_CHANNEL_CATEGORIES=scoped, THREADSAGE_GAP_FOLLOW_UPS_PER_HOUR=1) as (
        bot,
        shelf,
    ):
        await exchange(fake, GROUP, ANN, mention(GAP))  # the group may not read hr
        await exchange(fake, FORUM, ANN, mention(GAP))
        await exchange(fake, FORUM, BOB, mention("How long does parental leave last?"))
        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE))
        outcomes = await closed(bot)
        assert outcomes[f"{GROUP['id']} {GAP}"] == "scope" and follow_ups(fake, GROUP) == []
        assert sorted(outcomes.values()) == ["limit", "scope", "sent"]
        assert len(follow_ups(fake, FORUM)) == 1


async def test_a_chat_no_longer_allowed_hears_nothing(tmp_path, fake) -> None:
    shared = {"THREADSAGE_DATA_DIR": tmp_path / "data"}
    async with loop_bot(tmp_path / "before", fake, **shared):
        await exchange(fake, GROUP, ANN, mention(GAP))
    async with loop_bot(tmp_path / "after", fake, THREADSAGE_TELEGRAM_ALLOWED=str(FORUM["id"]), **shared) as (
        bot,
        shelf,
    ):
        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE))
        assert await closed(bot) == {f"{GROUP['id']} {GAP}": "scope"}
        assert follow_ups(fake, GROUP) == []


async def test_dm_follows_up_in_the_private_chat_and_off_only_in_the_console(tmp_path, fake) -> None:
    async with loop_bot(tmp_path / "dm", fake, THREADSAGE_GAP_FOLLOW_UP="dm") as (bot, shelf):
        await exchange(fake, private(ANN), ANN, "Hello")  # Ann has a private chat with the bot
        await exchange(fake, GROUP, ANN, mention(GAP))
        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE))
        assert follow_ups(fake, GROUP) == []
        [note] = follow_ups(fake, private(ANN))
        assert "eight weeks" in note["text"]
    async with loop_bot(tmp_path / "off", fake, THREADSAGE_GAP_FOLLOW_UP="off") as (bot, shelf):
        await exchange(fake, GROUP, BOB, mention(GAP))
        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE))
        assert await closed(bot) == {f"{GROUP['id']} {GAP}": "off"}
        assert follow_ups(fake, GROUP) == []


async def test_a_deleted_question_is_followed_up_in_its_chat(tmp_path, fake) -> None:
    async with loop_bot(tmp_path, fake) as (bot, shelf):
        question, _ = await exchange(fake, GROUP, ANN, mention(GAP))
        del fake.messages[(GROUP["id"], question["message_id"])]  # the person deleted it
        await bot.chat.knowledge.changed(shelf.write("hr", "parental-leave.md", LEAVE))
        [note] = follow_ups(fake, GROUP)
        assert "reply_to_message" not in note
        assert await closed(bot) == {f"{GROUP['id']} {GAP}": "sent"}
