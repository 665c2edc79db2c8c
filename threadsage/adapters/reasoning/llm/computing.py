"""The calculator and the calendar for an answer that needs them, as a separate, named decision.

Offering the tools beside the answer's own structured form with `tool_choice: "required"` is not
portable (llama.cpp's server ignores it and answers in text, or fails with HTTP 500 in its
function-calling format), and with `auto` the answer may come back as text without its excerpts.
So the answer call always asks for its one function, and the tools come before it in a call of
their own — made only when a computation is needed: the router's decision says so (`computes`,
with the excerpts in view), or the question itself carries arithmetic or a date to count
(`shows_arithmetic`). Any question with a number paid that round trip before ("how many days of
paid time off…?"), so the fast route made three calls where it promises two. The calculations and
date questions run here, exactly; their results go to the answer call as data and are shown under
the answer, so a person can check the arithmetic. One that fails is logged and left out: the person
did not ask for the tool, and its error is no part of an answer.
"""

from __future__ import annotations

import logging
import re

from pydantic import BaseModel, Field

from threadsage.tools.calculator import CalculationError, calculate, formatted
from threadsage.tools.dates import Calendar, DateError, answer_date_question

MAX_EACH = 3  # calculations, and date questions, one answer may ask for
log = logging.getLogger(__name__)

# Arithmetic or a date to count in the question's own words: an operator between figures, "15% of",
# "calculate", "days until", "what date is". Not a number, "how many" or "today" alone: a number
# the documents state needs no calculator, and the router, which sees the excerpts, says when one does.
_EXPLICIT = re.compile(
    r"\d\s*[+*×÷]\s*\d|\d\s*(?:%|percent|per cent)\s+of\b|\b(?:calculate|compute|work out|add up)\b|"
    r"\b(?:days?|weeks?)\s+(?:until|till|left|before|from (?:today|now))\b|\bwhat date (?:is|will|was)\b|"
    r"计算|还有多少天|多少个工作日",
    re.IGNORECASE,
)


class Computations(BaseModel):
    """The exact calculations and date questions the answer needs, worked out before it is written."""

    calculations: list[str] = Field(
        default_factory=list,
        description='Arithmetic with the numbers from the excerpts, e.g. "15% of 180", "(1200 - 200) * 3"; '
        "empty when the answer needs none.",
    )
    date_questions: list[str] = Field(
        default_factory=list,
        description='Each one of: "what is today\'s date?", "how many working days until <date>?", '
        '"how many days until <date>?", "what date is <n> working days from today?"; empty when none.',
    )


def shows_arithmetic(question: str) -> bool:
    """Whether the question itself asks for arithmetic or a date count (no model call)."""
    return bool(_EXPLICIT.search(question))


def computed(wanted: Computations, calendar: Calendar) -> list[str]:
    """Each result that could be worked out, as text for the model and the reader; one that could
    not is logged and left out."""
    results = []
    for expression in wanted.calculations[:MAX_EACH]:
        try:
            results.append(f"{expression} = {formatted(calculate(expression))}")
        except CalculationError as exc:
            log.warning("a calculation the answer asked for failed, left out: %.80r (%s)", expression, exc)
    for question in wanted.date_questions[:MAX_EACH]:
        try:
            answer = answer_date_question(question, calendar)
            why = "not a question the calendar answers"
        except DateError as exc:
            answer, why = None, str(exc)
        if answer:
            results.append(answer)
        else:
            log.warning("a date question the answer asked for failed, left out: %.80r (%s)", question, why)
    return results


def shown(answer: str, results: list[str]) -> str:
    """The answer with what the tools computed under it, so a person can check the arithmetic."""
    if not results or not answer:
        return answer
    return answer + "\n\n" + "\n".join(f"_Computed: {result}_" for result in results)
