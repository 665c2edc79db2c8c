"""Who the Telegram bot answers: `THREADSAGE_TELEGRAM_ALLOWED`, checked before any other handler.

Anyone can find a bot by its username, and the bot reads the organisation's documents to whoever
it answers; so it answers only the chats an operator listed — a person's id allows their private
chat, a group's id everyone in that group, there — or anyone, when the list says `*`. A listed
person is refused in an unlisted group: everyone in a group reads the answers.

Refused updates stop at `StopDisallowedChats`, a handler in group -1 that raises `ApplicationHandlerStop`
(python-telegram-bot's way of ending an update's processing): no chat service, no model call.
Whoever addresses the bot there is told, once, their ids and that an operator must allow them —
remembered by the coordinator, so once across processes and (with Redis) restarts. /start and
/help say it every time; a click gets it as the toast its callback query needs anyway. It is said
in the language of their message, else of their Telegram app (see `texts`).
"""

from __future__ import annotations

import logging

from telegram import Message, Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop, ContextTypes

from threadsage.bots.telegram.application import TelegramConfigError
from threadsage.bots.telegram.chains import ReplyChains
from threadsage.bots.telegram.sending import TelegramSender, answer_query, place_of
from threadsage.bots.telegram.texts import message_language
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import say
from threadsage.settings.sections import PlatformSettings

log = logging.getLogger(__name__)

ANYONE = "*"
TOLD_FOR = 365 * 24 * 3600.0  # seconds a refused person is remembered as told
ASKING_FOR_HELP = ("start", "help")


class TelegramAccess:
    """The allowed chat ids (a private chat's id is its person's user id); None = anyone."""

    def __init__(self, allowed: frozenset[int] | None) -> None:
        self.allowed = allowed

    @classmethod
    def from_settings(cls, settings: PlatformSettings) -> TelegramAccess:
        entries = [entry.strip() for entry in (settings.telegram_allowed or "").split(",") if entry.strip()]
        return cls(None if ANYONE in entries else frozenset(_chat_id(entry) for entry in entries))

    def allows(self, chat_id: int) -> bool:
        return self.allowed is None or chat_id in self.allowed

    @property
    def answers_someone(self) -> bool:
        return self.allowed is None or bool(self.allowed)

    def describe(self) -> str:
        """Who is answered, for the start-up log and the command's banner."""
        if self.allowed is None:
            return "anyone (THREADSAGE_TELEGRAM_ALLOWED=*)"
        if not self.allowed:
            return (
                "no one: THREADSAGE_TELEGRAM_ALLOWED is unset. Each person who writes is told their ids once; "
                "list the ids to allow (see docs/telegram.md)"
            )
        return f"the {len(self.allowed)} chat(s) listed in THREADSAGE_TELEGRAM_ALLOWED"


def _chat_id(entry: str) -> int:
    try:
        return int(entry)
    except ValueError:
        raise TelegramConfigError(
            f"THREADSAGE_TELEGRAM_ALLOWED: {entry!r} is neither an id "
            "(a number, e.g. 123456789 or -1001234567890) nor *"
        ) from None


class StopDisallowedChats:
    """The callback of a `TypeHandler(Update)` in group -1: lets allowed updates through, and
    ends every other one's processing, after saying why to whoever addressed the bot."""

    def __init__(
        self, access: TelegramAccess, coordinator: Coordinator, send: TelegramSender, chains: ReplyChains
    ) -> None:
        self.access = access
        self.coordinator = coordinator
        self.send = send
        self.chains = chains

    async def __call__(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        chat = update.effective_chat
        if chat is not None and self.access.allows(chat.id):
            return
        if update.callback_query is not None:
            query = update.callback_query
            where = chat.id if chat is not None else query.from_user.id
            language = message_language(query.message if isinstance(query.message, Message) else None, query.from_user)
            await answer_query(query, say("tg_not_allowed_click", language, chat=where))
        elif update.message is not None and self._addressed(update.message):
            await self._tell(update.message)
        raise ApplicationHandlerStop

    def _addressed(self, message: Message) -> bool:
        """A person's new message to the bot: anything in private; in groups a mention, a reply to
        the bot or a command for it (other group chatter is not the bot's to answer)."""
        if message.from_user is None or message.from_user.is_bot:
            return False
        if message.chat.type == ChatType.PRIVATE:
            return True
        return (
            self.chains.mentions_me(message)
            or self.chains.replies_to_me(message)
            or self.chains.command_for_me(message) is not None
        )

    async def _tell(self, message: Message) -> None:
        assert message.from_user is not None
        user, chat = message.from_user.id, message.chat_id
        asks_for_help = self.chains.command_for_me(message) in ASKING_FOR_HELP
        if asks_for_help or await self.coordinator.claim(f"telegram-refused:{chat}:{user}", TOLD_FOR):
            log.info("refused user %s in %s chat %s: not in THREADSAGE_TELEGRAM_ALLOWED", user, message.chat.type, chat)
            refusal = say("tg_not_allowed", message_language(message, message.from_user), user=user, chat=chat)
            await self.send.send_plain(place_of(message), refusal)
