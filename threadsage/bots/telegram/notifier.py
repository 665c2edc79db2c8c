"""The Telegram bot's side of the notify seam (`threadsage.chat.notify`): a follow-up that
replies to the person's original message — Telegram puts a reply in the forum topic of the
message it answers, so the topic needs no remembering — or goes to the person's private chat
with the bot (`THREADSAGE_GAP_FOLLOW_UP=dm`), rendered as any answer is. Another platform's
question posted in a Telegram experts' group, and an expert's answer from another platform sent
as a reply to the Telegram question (`crossing`).

What a place may read is decided as for a new question there: its categories
(`THREADSAGE_CHANNEL_CATEGORIES`), and nothing at all once the chat is no longer in
`THREADSAGE_TELEGRAM_ALLOWED`."""

from __future__ import annotations

import logging

from telegram.error import BadRequest

from threadsage.bots.replies import place_categories
from threadsage.bots.telegram import crossing
from threadsage.bots.telegram.access import TelegramAccess
from threadsage.bots.telegram.sending import Place, TelegramSender, answer_markdown
from threadsage.chat.notify import Escalation, ExpertAnswer, Notice
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)

GONE = "message to be replied not found"  # the Bot API's words when the original message was deleted


class TelegramNotifier:
    def __init__(self, settings: AccessSettings, access: TelegramAccess, send: TelegramSender) -> None:
        self.settings = settings
        self.access = access
        self.send = send

    def categories(self, session_key: str) -> tuple[str, ...] | None:
        chat = chat_of_session(session_key)
        if chat is None or not self.access.allows(chat):
            return ()  # a chat the bot no longer answers reads nothing
        return place_categories(self.settings, str(chat), chat > 0)  # a private chat's id is its person's

    async def notify(self, notice: Notice) -> None:
        chat = chat_of_session(notice.session_key)
        if chat is None:
            raise ValueError(f"not a Telegram session key: {notice.session_key!r}")
        markdown = answer_markdown(notice.reply)
        if notice.direct:
            sent = await self.send.send_markdown(Place(int(notice.user_id), True), markdown, None)
        else:
            # Strictly a reply (not "without reply"): only a real reply lands in the message's topic.
            place = Place(chat, chat > 0, quote=_message_number(notice.message_id), strict=True)
            try:
                sent = await self.send.send_markdown(place, markdown, None)
            except BadRequest as exc:
                if GONE not in exc.message.lower():
                    raise
                log.info("the question of a closed gap in chat %s was deleted; following up in the chat", chat)
                sent = await self.send.send_markdown(Place(chat, chat > 0), markdown, None)
        await self.send.chains.remember(notice.session_key, sent)  # a reply to it continues the session

    async def escalate(self, escalation: Escalation, experts: str) -> str:
        return await crossing.post_escalation(self.send, escalation, experts)

    async def relay(self, escalation: Escalation, answer: ExpertAnswer) -> bool:
        return await crossing.relay_escalated(self.send, escalation, answer)


def chat_of_session(key: str) -> int | None:
    """The chat a Telegram session key names ("telegram:-:chat:root"); None for another key."""
    parts = key.split(":")
    if len(parts) < 3 or parts[0] != "telegram" or not parts[2].lstrip("-").isdigit():
        return None
    return int(parts[2])


def _message_number(message_id: str) -> int | None:
    """The Telegram message of a turn's message id ("chat:message")."""
    number = message_id.rpartition(":")[2]
    return int(number) if number.isdigit() else None
