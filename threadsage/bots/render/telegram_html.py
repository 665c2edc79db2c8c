"""Telegram HTML (parse_mode=HTML): only <b>, <i>, <s>, <code>, <pre>, <blockquote> and <a href>.

Telegram's nesting rules are kept: bold/italic/strike never contain code (they are closed around
it and reopened), a link never contains code, and blockquotes do not nest (inner quotes are marked
with "> " instead). All other <, > and & are escaped.
"""

from __future__ import annotations

import html
import re

from threadsage.bots.render.layout import Flavour
from threadsage.bots.render.parse import Target
from threadsage.bots.render.segments import Tag

_TAG = re.compile(r"<[^>]*>")


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def to_text(markup: str) -> str:
    """What Telegram shows of our HTML, as plain text (tags dropped, entities decoded)."""
    return html.unescape(_TAG.sub("", markup))


def _link(target: Target) -> Tag:
    return Tag(f'<a href="{html.escape(target.href)}">', "</a>")


TELEGRAM = Flavour(
    escape=escape,
    escape_code=escape,
    strong=Tag("<b>", "</b>"),
    emphasis=Tag("<i>", "</i>"),
    strike=Tag("<s>", "</s>"),
    code=Tag("<code>", "</code>"),
    pre=Tag("<pre>", "</pre>"),
    quote=Tag("<blockquote>", "</blockquote>"),
    quote_prefix=escape("> "),
    link=_link,
    formatting_in_links=True,
    code_inside_formatting=False,
)
