"""Markdown from the graph → Slack mrkdwn, Telegram HTML or plain text, split to the platforms' limits.

The Markdown is parsed, not rewritten with regular expressions: pulldown-cmark's event stream (through
pyromark) is laid out for each platform, escaping all text and writing only the markup we choose.
Why pyromark rather than markdown-it-py (already installed through rich): markdown-it-py, pure Python,
slows down badly on bracket- or emphasis-dense text, stalling the whole event loop, while pulldown-cmark
is built for linear time (docs/performance.md, "Crash safety and hostile input").

Links are live only for http(s) and mailto targets; when a link's text differs from its target, the
target's host follows the text, so a link cannot pretend to lead elsewhere. Other schemes (tg:,
javascript:, relative paths) are dropped and their text kept.
"""

from __future__ import annotations

from typing import NamedTuple

from threadsage.bots.render import mrkdwn, telegram_html
from threadsage.bots.render.layout import render
from threadsage.bots.render.mrkdwn import SLACK
from threadsage.bots.render.plain import PLAIN
from threadsage.bots.render.segments import join, units
from threadsage.bots.render.split import fit, pack
from threadsage.bots.render.telegram_html import TELEGRAM

__all__ = [
    "TelegramMessage",
    "to_mrkdwn",
    "to_mrkdwn_sections",
    "to_plain",
    "to_slack_fallback",
    "to_telegram_html",
    "to_telegram_messages",
]

SLACK_SECTION_CHARS = 3000  # Block Kit's limit for a section's text
TELEGRAM_MESSAGE_CHARS = 4096  # telegram.constants.MessageLimit.MAX_TEXT_LENGTH


def to_mrkdwn(markdown: str) -> str:
    """Slack mrkdwn for a short text (a title, a label); answers go through to_mrkdwn_sections."""
    return join(render(markdown, SLACK)).strip()


def to_mrkdwn_sections(markdown: str, limit: int = SLACK_SECTION_CHARS) -> list[str]:
    """Slack mrkdwn in pieces of 1..limit characters, one per Block Kit section (none if nothing is visible)."""
    return [piece for piece in (p.strip() for p in pack(render(markdown, SLACK), limit)) if piece]


def to_slack_fallback(markdown: str, limit: int = SLACK_SECTION_CHARS) -> str:
    """A message's `text` (notifications, clients without blocks): plain, escaped like the blocks, at most `limit`."""
    text = mrkdwn.escape(to_plain(markdown))
    return text if units(text) <= limit else text[: fit(text, limit - 1)] + "…"


def to_telegram_html(markdown: str) -> str:
    """Telegram HTML for a short text; answers go through to_telegram_messages."""
    return join(render(markdown, TELEGRAM)).strip()


class TelegramMessage(NamedTuple):
    html: str  # send with parse_mode=HTML
    text: str  # the same without markup, should Telegram still reject the HTML


def to_telegram_messages(markdown: str, limit: int = TELEGRAM_MESSAGE_CHARS) -> list[TelegramMessage]:
    """Telegram messages of at most `limit` characters of HTML each, every tag closed in its own message."""
    messages = []
    for piece in pack(render(markdown, TELEGRAM), limit):
        text = telegram_html.to_text(piece).strip()
        if text:
            messages.append(TelegramMessage(piece.strip(), text))
    return messages


def to_plain(markdown: str) -> str:
    """What a person would see of the Markdown, without any markup: the last-resort form."""
    return join(render(markdown, PLAIN)).strip()
