"""Topics in private chats (Bot API 9.3) through the real python-telegram-bot against the fake Bot
API: with the bot's topic mode on, a question outside any topic opens one named after it and is
answered there, its follow-ups and clicks continue that conversation, and another question opens
another; with topics off, or refused, the private chat is one conversation as before."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.telegram_harness import ANN, TRAVEL, bot_settings, new_messages, private, running

AMBIGUOUS = "How do I reset my password?"  # the VPN's and the e-mail's


async def test_each_question_opens_a_topic_that_keeps_its_conversation(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb
) -> None:
    fake.private_topics = True
    chat = private(ANN)
    async with running(bot_settings(tmp_path, fake), handbook_kb):
        fake.say(chat, ANN, AMBIGUOUS)
        [clarification] = await new_messages(fake, chat, 0)
        [opened] = fake.calls_of("createForumTopic")
        topic = clarification["message_thread_id"]
        assert opened["name"] == AMBIGUOUS and fake.topics[(chat["id"], topic)] == AMBIGUOUS
        fake.click(clarification, ANN, option=1)  # answered in the topic, from the same conversation
        [answer] = await new_messages(fake, chat, 1)
        assert answer["message_thread_id"] == topic and "E-mail and calendar" in answer["text"]
        fake.say(chat, ANN, "Thanks! and what about the VPN one?", topic=topic)  # a follow-up in the topic
        [follow_up] = await new_messages(fake, chat, 2)
        assert follow_up["message_thread_id"] == topic and len(fake.calls_of("createForumTopic")) == 1
        fake.say(chat, ANN, TRAVEL)  # a new question outside the topics: a topic of its own
        [travel] = await new_messages(fake, chat, 3)
        assert travel["message_thread_id"] not in (None, topic) and "travel" in travel["text"].lower()
        assert len(fake.calls_of("createForumTopic")) == 2


async def test_without_topics_or_when_refused_the_chat_is_one_conversation(
    tmp_path: Path, fake: FakeBotAPI, handbook_kb
) -> None:
    chat = private(ANN)
    async with running(bot_settings(tmp_path, fake), handbook_kb):
        fake.say(chat, ANN, TRAVEL)
        [answer] = await new_messages(fake, chat, 0)
    assert "message_thread_id" not in answer and fake.calls_of("createForumTopic", ok_only=False) == []
    fake.private_topics = True
    fake.fail_next("createForumTopic", 400, "Bad Request: BOT_FORUM_CREATE_FORBIDDEN")
    async with running(bot_settings(tmp_path, fake), handbook_kb):
        fake.say(chat, ANN, TRAVEL)
        [again] = await new_messages(fake, chat, 1)
    assert "message_thread_id" not in again and "travel" in again["text"].lower()  # answered all the same
