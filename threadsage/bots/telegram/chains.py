"""Which messages are for the bot, and which session each continues.

A private chat is one session — or, with topics in private chats (Bot API 9.3, switched on in
@BotFather), each topic is one (`private_topic_key`). In groups the session is the reply chain: a mention or `/ask`
starts one at the question, and a reply to one of the bot's messages continues the session that
message belongs to — remembered when it was sent, through the coordinator, so that every process
knows it.
"""

from __future__ import annotations

from collections.abc import Sequence

from telegram import Bot, Message, MessageEntity
from telegram.constants import ChatType

from threadsage.delivery.coordination import Coordinator
from threadsage.memory.sessions import session_key

REMEMBERED_FOR = 30 * 24 * 3600.0  # seconds a bot message's session is known


class ReplyChains:
    def __init__(self, bot: Bot, coordinator: Coordinator) -> None:
        self.bot = bot  # who "me" is: known once the application has called getMe
        self.coordinator = coordinator

    async def group_session(self, message: Message) -> str:
        """A reply to the bot continues that message's session; anything else starts a chain."""
        replied = message.reply_to_message
        if replied is not None and self.replies_to_me(message):
            return await self.session_of_bot_message(replied)
        return chain_key(message.chat_id, message.message_id)

    async def session_of_bot_message(self, message: Message) -> str:
        """The session a bot message belongs to, as recorded when it was sent. Unknown —
        forgotten, or sent without a coordinator that outlives the process — the chain is taken
        to start at the question the message quotes (true for a first question)."""
        if message.chat.type == ChatType.PRIVATE:
            return private_session(message)
        known = await self.coordinator.recall(_message_key(message))
        if known is not None:
            return known
        root = message.reply_to_message.message_id if message.reply_to_message else message.message_id
        return chain_key(message.chat_id, root)

    async def remember(self, key: str, sent: Sequence[Message]) -> None:
        """Record the session of the bot's messages in groups, for replies to them."""
        for message in sent:
            if message.chat.type != ChatType.PRIVATE:
                await self.coordinator.remember(_message_key(message), key, REMEMBERED_FOR)

    def replies_to_me(self, message: Message) -> bool:
        replied = message.reply_to_message
        return replied is not None and replied.from_user is not None and replied.from_user.id == self.bot.id

    def mentions_me(self, message: Message) -> bool:
        me = f"@{self.bot.username}".lower()
        for entity, text in _entities(message, [MessageEntity.MENTION, MessageEntity.TEXT_MENTION]).items():
            if text.lower() == me or (entity.user is not None and entity.user.id == self.bot.id):
                return True
        return False

    def command_for_me(self, message: Message) -> str | None:
        """The command a message starts with (`/ask …`, `/ask@me …`), unless another bot's."""
        for entity, text in message.parse_entities([MessageEntity.BOT_COMMAND]).items():
            if entity.offset == 0:
                name, _, target = text[1:].partition("@")
                return name.lower() if target.lower() in ("", (self.bot.username or "").lower()) else None
        return None

    def question_text(self, message: Message) -> str:
        """The message (or a file's caption) without the bot's @mention or the leading /ask command."""
        me = f"@{self.bot.username}".lower()
        entities = _entities(message, [MessageEntity.MENTION, MessageEntity.BOT_COMMAND])
        drop = [
            entity
            for entity, value in entities.items()
            if value.lower() == me or (entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0)
        ]
        text = (message.text or message.caption or "").encode("utf-16-le")  # entity offsets count UTF-16 code units
        for entity in sorted(drop, key=lambda e: -e.offset):
            text = text[: entity.offset * 2] + b" \x00" + text[(entity.offset + entity.length) * 2 :]
        return " ".join(text.decode("utf-16-le").split())


def _entities(message: Message, types: list[str | None]) -> dict[MessageEntity, str]:
    """The entities of the message's text, or of its caption when it has none (a file)."""
    return message.parse_entities(types) if message.text is not None else message.parse_caption_entities(types)


def private_key(chat_id: int) -> str:
    return session_key("telegram", "-", str(chat_id))


def private_topic_key(chat_id: int, topic: int) -> str:
    return session_key("telegram", "-", str(chat_id), f"topic-{topic}")


def private_session(message: Message) -> str:
    """The session of a private chat's message: its topic's, or the chat's."""
    if message.is_topic_message and message.message_thread_id:
        return private_topic_key(message.chat_id, message.message_thread_id)
    return private_key(message.chat_id)


def chain_key(chat_id: int, root_message_id: int) -> str:
    return session_key("telegram", "-", str(chat_id), str(root_message_id))


def _message_key(message: Message) -> str:
    return f"telegram-message:{message.chat_id}:{message.message_id}"
