"""What the Telegram experts' loop keeps in the coordinator (`help`, `reviewing`): the question an
escalation's message carries, and the key that lets only one answer go back to the asker; and how
an escalation reads in the experts' group (`help`, `crossing`)."""

from __future__ import annotations

import html

from threadsage.bots.render import to_telegram_messages
from threadsage.bots.replies import QUESTION_CHARS
from threadsage.bots.telegram.sending import answer_markdown
from threadsage.chat import Reply
from threadsage.i18n import Language, say

ANSWER_CHARS = 2500  # of a draft (or another platform's answer) and its sources in an escalation: room for the rest


def escalated_key(experts: int, escalation: int) -> str:
    """The question an escalation (a message in the experts' group) is about: where it was asked,
    by whom, what, in which language."""
    return f"tg-escalated:{experts}:{escalation}"


def relay_key(experts: int, escalation: int) -> str:
    """Claimed by whatever answers an escalation first (an expert's reply, a posted draft): one answer."""
    return f"tg-relay:{experts}:{escalation}"


def escalation_html(asker: str, where: str, question: str, tried: str, how: str, link: str, language: Language) -> str:
    """An escalation as the experts' group reads it: who asked where, the question, what the bot
    answered (`tried`, HTML; "" none), how to answer, and a link to the question ("" none)."""
    asked = say(
        "tg_escalation",
        language,
        asker=html.escape(asker),
        chat=html.escape(where),
        question=html.escape(question[:QUESTION_CHARS]),
    )
    body = "\n\n".join(filter(None, (asked, tried, how)))
    return body + (f'\n<a href="{html.escape(link)}">↗</a>' if link else "")


def answer_html(reply: Reply) -> str:
    """An answer as the experts see it: its text with its sources, up to `ANSWER_CHARS`."""
    pieces = to_telegram_messages(answer_markdown(reply), ANSWER_CHARS)
    return pieces[0].html + ("\n…" if len(pieces) > 1 else "") if pieces else ""
