"""Markdown from the graph → Slack mrkdwn or Telegram HTML, split to the platforms' limits.

Answers are split as Markdown first (on paragraphs, then lines), keeping code fences balanced
across pieces, and each piece is converted on its own, so a piece never ends inside a tag or an
entity. Code is protected before anything else is rewritten, and every character the platform
treats as markup is escaped outside the markup we emit.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)([^*\n]+?)\*(?![\w*])|(?<![\w_])_(?!\s)([^_\n]+?)_(?![\w_])")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+", re.M)
_TABLE = re.compile(r"(?:^[ \t]*\|.*\|[ \t]*(?:\n|$))+", re.M)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t:]*-{3,}.*$\n?", re.M)


def split_markdown(text: str, limit: int) -> list[str]:
    """Pieces of at most `limit` characters, cut at blank lines, then lines, then anywhere;
    a code fence open at a cut is closed there and reopened in the next piece."""
    pieces: list[str] = []
    current = ""
    fence_open = False
    for line in _lines_within(text, limit - 8):
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) + (4 if fence_open else 0) > limit and current:
            pieces.append(current + ("\n```" if fence_open else ""))
            current = ("```\n" if fence_open else "") + line
        else:
            current = candidate
        if line.lstrip().startswith("```"):
            fence_open = not fence_open
    if current.strip():
        pieces.append(current)
    return pieces or [""]


def _lines_within(text: str, limit: int) -> list[str]:
    """The text's lines, with any line longer than `limit` cut (at a space when possible)."""
    out = []
    for line in text.strip().split("\n"):
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            out.append(line[:cut])
            line = line[cut:].lstrip()
        out.append(line)
    return out


def to_mrkdwn(markdown: str) -> str:
    """Slack mrkdwn: *bold*, _italic_, `code`, ```blocks```, <url|text>; &, <, > escaped."""
    saved: list[str] = []

    def keep(value: str) -> str:
        saved.append(value)
        return f"\x00{len(saved) - 1}\x00"

    text = _FENCE.sub(lambda m: keep("```\n" + _slack_escape(m.group(1)).rstrip("\n") + "\n```"), markdown)
    text = _TABLE.sub(lambda m: keep("```\n" + _slack_escape(_TABLE_RULE.sub("", m.group(0))).rstrip("\n") + "\n```\n"), text)
    text = _CODE.sub(lambda m: keep("`" + _slack_escape(m.group(1)) + "`"), text)
    text = _LINK.sub(lambda m: keep(f"<{_slack_escape(m.group(2))}|{_slack_escape(m.group(1))}>"), text)
    text = _AUTOLINK.sub(lambda m: keep(f"<{_slack_escape(m.group(1))}>"), text)
    text = _slack_escape(text)
    text = _HEADING.sub(lambda m: keep("*" + m.group(1).replace("*", "") + "*"), text)
    text = _BOLD.sub(lambda m: keep("*" + (m.group(1) or m.group(2)) + "*"), text)
    text = _ITALIC.sub(lambda m: "_" + (m.group(1) or m.group(2)) + "_", text)
    text = _BULLET.sub(lambda m: m.group(1) + "• ", text)
    return _restore(text, saved)


def to_telegram_html(markdown: str) -> str:
    """Telegram HTML: <b>, <i>, <code>, <pre>, <a href>; everything else escaped."""
    saved: list[str] = []

    def keep(value: str) -> str:
        saved.append(value)
        return f"\x00{len(saved) - 1}\x00"

    text = _FENCE.sub(lambda m: keep("<pre>" + html.escape(m.group(1).rstrip("\n"), quote=False) + "</pre>"), markdown)
    text = _TABLE.sub(lambda m: keep("<pre>" + html.escape(_TABLE_RULE.sub("", m.group(0)).rstrip("\n"), quote=False) + "</pre>\n"), text)
    text = _CODE.sub(lambda m: keep("<code>" + html.escape(m.group(1), quote=False) + "</code>"), text)
    text = _LINK.sub(lambda m: keep(f'<a href="{html.escape(m.group(2))}">{html.escape(m.group(1), quote=False)}</a>'), text)
    text = _AUTOLINK.sub(lambda m: keep(f'<a href="{html.escape(m.group(1))}">{html.escape(m.group(1), quote=False)}</a>'), text)
    text = html.escape(text, quote=False)
    text = _HEADING.sub(lambda m: "<b>" + m.group(1).replace("*", "") + "</b>", text)
    text = _BOLD.sub(lambda m: "<b>" + (m.group(1) or m.group(2)) + "</b>", text)
    text = _ITALIC.sub(lambda m: "<i>" + (m.group(1) or m.group(2)) + "</i>", text)
    text = _BULLET.sub(lambda m: m.group(1) + "• ", text)
    return _restore(text, saved)


def to_plain(markdown: str) -> str:
    """What a person would see of the Markdown, without any markup: the last-resort form."""
    text = _FENCE.sub(lambda m: m.group(1), markdown)
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    text = _CODE.sub(lambda m: m.group(1), text)
    text = _HEADING.sub(lambda m: m.group(1), text)
    text = _BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    return _BULLET.sub(lambda m: m.group(1) + "• ", text)


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _restore(text: str, saved: list[str]) -> str:
    # Placeholders can nest (a bold heading around a saved link): restore until none are left.
    pattern = re.compile(r"\x00(\d+)\x00")
    while pattern.search(text):
        text = pattern.sub(lambda m: saved[int(m.group(1))], text)
    return text
