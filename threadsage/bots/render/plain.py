"""Plain text: what a person would see of the Markdown without any markup; links as "text (url)"."""

from __future__ import annotations

from threadsage.bots.render.layout import Flavour


def _same(text: str) -> str:
    return text


PLAIN = Flavour(
    escape=_same,
    escape_code=_same,
    strong=None,
    emphasis=None,
    strike=None,
    code=None,
    pre=None,
    quote=None,
    quote_prefix="> ",
    link=None,
    formatting_in_links=False,
    code_inside_formatting=True,
)
