"""Topics in private chats (Bot API 9.3; switched on for the bot in @BotFather, which `getMe`
reports as `has_topics_enabled`): what a Slack thread gives — one conversation, one memory per
question. A question sent outside any topic opens one, named after it, and is answered there;
follow-ups written in the topic continue it. With topics off, or where Telegram refuses to open
one, the private chat is one conversation as before (`/new` starts it over)."""

from __future__ import annotations

import logging

from telegram import Bot, Message
from telegram.error import TelegramError

from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import Language, say

log = logging.getLogger(__name__)

MAX_NAME = 128  # createForumTopic: "Topic name, 1-128 characters"
OPENED_FOR = 24 * 3600.0  # a redelivered question finds the topic it opened


class PrivateTopics:
    def __init__(self, bot: Bot, coordinator: Coordinator) -> None:
        self.bot = bot
        self.coordinator = coordinator

    async def open(self, message: Message, text: str, language: Language = "en") -> int | None:
        """The topic a private question outside any topic is answered in: opened once per
        question (a redelivery finds it); None with topics off or refused."""
        if not self.bot.bot.has_topics_enabled:
            return None
        key = f"telegram-topic:{message.chat_id}:{message.message_id}"
        if (opened := await self.coordinator.recall(key)) is not None:
            return int(opened)
        name = " ".join(text.split())[:MAX_NAME] or say("tg_new_topic", language)
        try:
            topic = await self.bot.create_forum_topic(message.chat_id, name)
        except TelegramError as exc:
            log.warning("could not open a topic in a private chat: %s", exc)
            return None
        await self.coordinator.remember(key, str(topic.message_thread_id), OPENED_FOR)
        return topic.message_thread_id
