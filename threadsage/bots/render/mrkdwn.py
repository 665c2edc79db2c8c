"""Slack mrkdwn: *bold*, _italic_, ~strike~, `code`, ```blocks```, <url|text>.

Slack treats only &, < and > as control characters, and every special mention (<!channel>,
<!here>, <!everyone>, <!subteam^…>, <@U…>) needs a literal "<": escaping them in all text means no
document or model output can ping anyone. Plain "@channel", "@here" and "@everyone" (and, outside
code, any word-initial "@handle") get a WORD JOINER (U+2060) after the "@": invisible, yet no longer
the word Slack parses as a mention when a section is not `verbatim`. The three are broken even inside
a longer word ("@here¹"): a long answer is cut into sections after escaping, and a cut there would
leave a whole "@here" at a section's end.
"""

from __future__ import annotations

import re

from threadsage.bots.render.layout import Flavour
from threadsage.bots.render.parse import Target
from threadsage.bots.render.segments import Tag

_JOINER = "\u2060"
_MENTION = re.compile(r"(?<!\w)@(?=\w)|@(?=channel|here|everyone)", re.IGNORECASE)
_SPECIAL = re.compile(r"@(?=channel|here|everyone)", re.IGNORECASE)


def _escape_controls(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape(text: str) -> str:
    """Text for any Slack mrkdwn field (a section, context, the fallback `text`): nothing in it can ping."""
    return _MENTION.sub("@" + _JOINER, _escape_controls(text))


def escape_code(text: str) -> str:
    """Like escape, but only the three broadcast mentions are broken, so code (`npm i @scope/x`) copies intact."""
    return _SPECIAL.sub("@" + _JOINER, _escape_controls(text))


def _link(target: Target) -> Tag | None:
    """None (not live) for the odd target that spells a broadcast mention, which no escaping could break."""
    return None if _SPECIAL.search(target.href) else Tag(f"<{_escape_controls(target.href)}|", ">")


SLACK = Flavour(
    escape=escape,
    escape_code=escape_code,
    strong=Tag("*", "*"),
    emphasis=Tag("_", "_"),
    strike=Tag("~", "~"),
    code=Tag("`", "`"),
    pre=Tag("```\n", "\n```"),
    quote=None,
    quote_prefix="> ",
    link=_link,
    formatting_in_links=False,
    code_inside_formatting=True,
)
