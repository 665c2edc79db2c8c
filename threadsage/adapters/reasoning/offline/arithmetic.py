"""Sums and differences of figures the passages give, for a question that asks for one ("the total
of the Lisbon and Toronto hotel limits", "how much more is X than Y"): each side is looked up on
its own, and the two figures go through the calculator (`threadsage.tools`) — quoting both figures
and leaving the sum to the reader is half an answer, and adding them by eye is how numbers go wrong.
Only figures in the same currency (or both without one) are combined."""

from __future__ import annotations

import re

from threadsage.support.text import first_cue, terms
from threadsage.tools.calculator import CalculationError, calculate, formatted

_OPERATIONS = (
    (re.compile(r"\b(total|sum|combined|altogether|in all|together|added up)\b|一共|总共|加起来|合计", re.I), "+"),
    (
        re.compile(
            r"\b(difference|how much (more|less|higher|lower)|how many (more|fewer))\b|相差|差多少|多多少", re.I
        ),
        "-",
    ),
)
# "比" joins two things ("X比Y多多少"), but not as part of "比较" / "对比" (compare).
_CONNECTOR = re.compile(r"\s+(?:and|than|vs\.?|versus)\s+|[和与]|(?<!对)比(?!较)", re.I)
_AMOUNT = re.compile(r"(?P<unit>CA\$|US\$|[€$£¥])?\s?(?P<number>\d[\d,]*(?:\.\d+)?)(?!\s*%)")


def operation(question: str) -> str | None:
    """ "+" or "-" when the question asks for a sum or a difference; None otherwise."""
    return first_cue(_OPERATIONS, question, None)


def sides(question: str) -> tuple[list[str], list[str]] | None:
    """The question's terms for each of the two things it names: all its terms, without the word
    that names the other thing (the nearest to the connector on the other side that the first side
    lacks: "the North office and the South office" → "north", "south")."""
    both = halves(question)
    if both is None:
        return None
    before, after = both
    mine = next((t for t in reversed(before) if t not in after), None)
    theirs = next((t for t in after if t not in before), None)
    if mine is None or theirs is None:
        return None
    every = before + after
    return [t for t in every if t != theirs], [t for t in every if t != mine]


def halves(question: str, start: int = 0) -> tuple[list[str], list[str]] | None:
    """The question's terms before and after its first connector ("and", "vs", "和"…) from `start`,
    or None.
    The whole question's terms, each on the side it is written on: a part segmented alone can
    split a Chinese word the question's segmentation keeps ("看板" → "看", "板")."""
    connector = _CONNECTOR.search(question, start)
    if connector is None:
        return None
    before, after = _split_terms(question, connector.start(), connector.end())
    return (before, after) if before and after else None


def _split_terms(question: str, start: int, end: int) -> tuple[list[str], list[str]]:
    """The question's terms before and after its connector (`start`:`end`), found in order in its
    text (a stem found nowhere goes where the term before it was found); the connector's own dropped."""
    text, position = question.lower(), 0
    before: list[str] = []
    after: list[str] = []
    for term in terms(question):
        found = text.find(term, position)
        position = found + len(term) if found >= 0 else position
        at = found if found >= 0 else position
        if at < start:
            before.append(term)
        elif at >= end:
            after.append(term)
    return before, after


def amount(sentence: str) -> tuple[str, str] | None:
    """The first amount in a sentence: its currency ("" for none) and its number as written."""
    match = _AMOUNT.search(sentence)
    return (match.group("unit") or "", match.group("number")) if match else None


def worked_out(op: str, first: tuple[str, str], second: tuple[str, str]) -> tuple[str, str] | None:
    """The expression and its result (with the currency), or None when the figures do not combine."""
    if first[0] != second[0]:
        return None
    expression = f"{first[0]}{first[1]} {op} {second[0]}{second[1]}"
    try:
        return expression, f"{first[0]}{formatted(calculate(f'{first[1]} {op} {second[1]}'))}"
    except CalculationError:
        return None
