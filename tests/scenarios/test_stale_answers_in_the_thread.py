"""An answer whose cited document changed since, asked again in its thread (or given a 👎): the
new answer comes from the new version and says first that the document changed — once, in the
asker's language. Through the real chat service (SQLite and Postgres), and end to end on
Telegram (the real python-telegram-bot against the fake Bot API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.conversation import Conversation, only, service
from tests.helpers.library import COVERED, TRAVEL_2, library
from tests.helpers.slack_harness import as_text, thread_messages
from tests.helpers.slack_harness import running as slack_running
from tests.helpers.telegram_harness import ANN, BOB, GROUP, bot_settings, exchange, mention, new_messages, running
from threadsage.chat import turn_ref
from threadsage.i18n import say
from threadsage.settings.environment import Settings

CHANGED_EN = say("doc_changed", "en", titles="“Travel”")
CHANGED_ZH = say("doc_changed", "zh", titles="“差旅”")
TRAVEL_ZH = "# 差旅\n\n六小时以上的航班可以订商务舱。较短的航班订经济舱。\n"
TRAVEL_ZH_2 = "# 差旅\n\n从五月起，六小时以上的航班也订经济舱。\n"
COVERED_ZH = "六小时以上的航班可以订什么舱位？"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def test_a_re_ask_in_the_thread_is_answered_from_the_new_version_and_says_so_once(
    tmp_path: Path, database_url: str
) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        async with service(tmp_path, database_url, shelf.kb) as chat:
            thread = Conversation(chat, "test:-:C1:t1")
            first = only(await thread.say(COVERED))
            assert "business class" in first.text and CHANGED_EN not in first.text
            assert await chat.knowledge.stale_question(thread.key, turn_ref("m1")) is None  # nothing changed yet

            await chat.knowledge.changed(shelf.write("docs", "travel.md", TRAVEL_2))
            assert await chat.knowledge.stale_question(thread.key, turn_ref("m1")) == COVERED  # what a 👎 asks again
            again = only(await thread.say(COVERED))
            assert again.text.startswith(CHANGED_EN) and "economy" in again.text
            assert "business" not in again.text
            assert CHANGED_EN not in only(await thread.say(COVERED)).text  # told once
            assert await chat.knowledge.stale_question(thread.key, turn_ref("m2")) is None  # the new answer is current

            other = only(await Conversation(chat, "test:-:C1:t3").say(COVERED))
            assert CHANGED_EN not in other.text  # a thread that never saw the old version


async def test_in_the_language_of_the_question(tmp_path: Path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        shelf.write("docs", "travel-zh.md", TRAVEL_ZH)
        async with service(tmp_path, "", shelf.kb) as chat:
            thread = Conversation(chat, "test:-:C1:zh")
            assert "商务舱" in only(await thread.say(COVERED_ZH)).text
            await chat.knowledge.changed(shelf.write("docs", "travel-zh.md", TRAVEL_ZH_2))
            again = only(await thread.say(COVERED_ZH))
            assert again.text.startswith(CHANGED_ZH) and "经济舱" in again.text


async def test_a_thumbs_down_on_a_stale_answer_on_telegram_is_answered_again_once(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    settings = bot_settings(tmp_path, fake)
    with library(tmp_path / "library", settings) as shelf:
        async with running(settings, shelf.kb) as bot:
            _q, fresh = await exchange(fake, GROUP, ANN, mention(COVERED))
            _q, stale = await exchange(fake, GROUP, BOB, mention(COVERED))
            since = len(fake.sent(GROUP["id"]))
            fake.click(fresh, ANN, option=1)  # 👎 before anything changed: only counted
            await fake.quiet(0.1)
            assert len(fake.sent(GROUP["id"])) == since

            await bot.chat.knowledge.changed(shelf.write("docs", "travel.md", TRAVEL_2))
            fake.click(stale, BOB, option=1)  # 👎 on an answer whose page changed since
            [again] = await new_messages(fake, GROUP, since)
            assert again["text"].startswith(CHANGED_EN) and "economy" in again["text"]
            assert again["reply_to_message"]["message_id"] == stale["reply_to_message"]["message_id"]  # the question
            fake.click(stale, ANN, option=1)  # a second 👎: counted, not answered again
            await fake.quiet(0.1)
            assert len(fake.sent(GROUP["id"])) == since + 1

            since += 1  # a re-ask in the other answer's thread (a reply to it) says so too
            fake.say(GROUP, ANN, COVERED, reply_to=fresh)
            [reask] = await new_messages(fake, GROUP, since)
            assert reask["text"].startswith(CHANGED_EN) and "economy" in reask["text"]


async def test_a_thumbs_down_on_a_stale_answer_in_slack_is_answered_again_in_its_thread(tmp_path: Path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        async with slack_running(tmp_path, shelf.kb) as slack:
            ts = await slack.mention(COVERED)
            await slack.settle()
            [answer] = thread_messages(slack.fake, ts)
            await slack.chat.knowledge.changed(shelf.write("docs", "travel.md", TRAVEL_2))
            await slack.click(answer, 1)  # 👎
            await slack.click(answer, 1, user="U333")  # another 👎: not answered again
            await slack.settle()
            [_, again] = thread_messages(slack.fake, ts)
            assert again["text"].startswith(CHANGED_EN) and "economy" in as_text(again)
