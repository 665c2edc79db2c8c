"""The units a passage is read in: its sentences, list items and table rows.

A sentence is what the reader compares with a question and what it quotes; a heading is no answer,
a table's header row names columns, and a list's lead-in ("You can claim:") means little without
its items, so it is read with them.
"""

from __future__ import annotations

import itertools
import re

from threadsage.support.text import SENTENCE_BREAK, unwrapped

LIST_ITEMS = 6  # of a list, read with the lead-in that introduces it
# A list, heading, quote or table mark opening a line — not a figure ("7+ years of experience").
_MARKER = re.compile(r"^(?:[-*•#>|]+\s*|\d+[.)]\s+)+")
_LIST_ITEM = re.compile(r"\s*(?:[-*•]|\d+[.)])\s")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")
_ENDINGS = (".", "!", "?", "。", "！", "？", ")", "|")


def sentences(text: str) -> list[str]:
    """Sentences, list items and table rows worth quoting: not headings, not table headers. A
    lead-in that ends with a colon is quoted with the list it introduces (the definition before
    the list says what the items are), a question in the text with the sentence that answers it."""
    lines = SENTENCE_BREAK.split(unwrapped(text))
    out = []
    in_code = False
    for i, raw in enumerate(lines):
        if raw.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            if len(raw.split()) >= 2 and not raw.lstrip().startswith("#"):
                out.append(raw.strip())  # a command or a line of code is quotable as it is
            continue
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if _TABLE_RULE.match(following):
            continue  # a table's header row
        sentence = _clean(raw)
        is_row = "|" in sentence
        looks_like_heading = not is_row and not sentence.endswith(_ENDINGS) and len(sentence.split()) <= 6
        if sentence.endswith((":", "：")):
            items = list(itertools.takewhile(_LIST_ITEM.match, lines[i + 1 : i + 1 + LIST_ITEMS]))
            sentence = f"{sentence} {'; '.join(_clean(item) for item in items)}" if items else ""
        elif sentence.endswith(("?", "？")) and following and not _LIST_ITEM.match(following):
            sentence = f"{sentence} {_clean(following)}"
        if len(sentence) < 12 or sentence.startswith("```") or looks_like_heading:
            continue
        out.append(sentence)
    return out


def _clean(line: str) -> str:
    """A line without its list, heading, quote or table marks, its spaces single."""
    return " ".join(_MARKER.sub("", line.strip()).split())
