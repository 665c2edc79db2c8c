"""Telegram's side of escalations across platforms (`threadsage.chat.escalations`,
docs/help-channels.md).

- A group's question whose experts are in a Slack channel: the neutral `Escalation` the Slack bot
  shows them — who asked (by name), in which group, the question and its link (`escalation`).
- A question from another platform, shown in a Telegram experts' group as Telegram escalations
  look (`post_escalation`); and an answer to a Telegram question, sent as a reply to it, naming
  its expert (`relay`, also for a Telegram expert's). The Telegram notifier does the first and
  relays an expert's answer from another platform.
"""

from __future__ import annotations

import html
import logging

from telegram import Message
from telegram.constants import ParseMode
from telegram.error import TelegramError

from threadsage.bots.replies import QUESTION_CHARS
from threadsage.bots.telegram.escalations import answer_html, escalation_html
from threadsage.bots.telegram.sending import Place, TelegramSender
from threadsage.chat import Reply
from threadsage.chat.notify import Escalation, ExpertAnswer
from threadsage.i18n import Language, say
from threadsage.settings.help_channels import telegram_chat

log = logging.getLogger(__name__)


def escalation(question: Message, text: str, attempt: Reply | None, language: Language) -> Escalation:
    """A group's question as the experts of another platform are shown it."""
    person = question.from_user
    return Escalation(
        ident=f"telegram:{question.chat_id}:{question.message_id}",
        asker=person.full_name if person is not None else "",
        where=question.chat.title or str(question.chat_id),
        question=text[:QUESTION_CHARS],
        link=question.link or "",  # a supergroup's message (or a public group's) has one; a private basic group's not
        language=language,
        attempt=attempt,
    )


async def post_escalation(send: TelegramSender, escalation: Escalation, experts: str) -> str:
    """Another platform's question in the Telegram experts' group `experts`: its message's id."""
    chat = telegram_chat(experts)
    if chat is None:
        raise ValueError(f"not a Telegram group: {experts!r}")
    language = escalation.language
    if escalation.attempt is not None:
        tried = say("tg_escalation_attempt", language, answer=answer_html(escalation.attempt))
        how = say("escalation_how", language)
    else:
        tried, how = "", say("tg_escalation_how", language)
    body = escalation_html(
        escalation.asker, escalation.where, escalation.question, tried, how, escalation.link, language
    )
    sent = await send.bot.send_message(chat, body, parse_mode=ParseMode.HTML)
    return str(sent.message_id)


async def relay(send: TelegramSender, chat: int, question: int, answer: ExpertAnswer, language: Language) -> bool:
    """An expert's answer as a reply to the question `question` in `chat`, naming the expert;
    False when the question (or the group) is gone."""
    relayed = say("tg_relayed", language, expert=html.escape(answer.expert), answer=html.escape(answer.text))
    place = Place(chat, False, None, question, strict=True)  # the question gone: not sent at all
    try:
        await send.bot.send_message(chat, relayed, parse_mode=ParseMode.HTML, **place.send_kwargs())
    except TelegramError as exc:
        log.warning("an expert's reply (%s) could not be relayed: %s", answer.escalation, exc)
        return False
    return True


async def relay_escalated(send: TelegramSender, escalation: Escalation, answer: ExpertAnswer) -> bool:
    """An expert's answer from another platform to the Telegram question `escalation` carries."""
    _, chat, question = escalation.ident.split(":")
    return await relay(send, int(chat), int(question), answer, escalation.language)
