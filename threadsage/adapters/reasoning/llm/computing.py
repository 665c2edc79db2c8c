"""The calculator and the calendar for an answer that needs them, as a separate, named decision.

Offering the tools beside the answer's own structured form with `tool_choice: "required"` is not
portable (llama.cpp's server ignores it and answers in text, or fails with HTTP 500 in its
function-calling format), and with `auto` the answer may come back as text without its excerpts.
So the answer call always asks for its one function, and the tools come before it in a call of
their own — made only when the question's words ask for a computation (`needs_computation`, no
model call): arithmetic ("15% of", "in total", "twice"), or a date to count ("days until", "what
date is", "tomorrow"). A number, "how many" or "today's" alone is no such sign: "How many days of
paid time off do we get?" paid that round trip before, three calls on a fast route that promises
two. Whether the router should decide it instead: a field more in its decision moved the tiny real
model of the tests to another route for an unrelated question (docs/performance.md, "Fewer model
calls (issue 36)"). The calculations and date questions run here, exactly; their results go to
the answer call as data and are shown under the answer, so a person can check the arithmetic. One
that fails is logged and left out: the person did not ask for the tool, and its error is no part
of an answer.
"""

from __future__ import annotations

import logging
import re

from pydantic import BaseModel, Field

from threadsage.tools.calculator import CalculationError, calculate, formatted
from threadsage.tools.dates import Calendar, DateError, answer_date_question

MAX_EACH = 3  # calculations, and date questions, one answer may ask for
log = logging.getLogger(__name__)

# What asks for arithmetic or a date to count, in the question's own words.
_ASKS = re.compile(
    r"\d\s*[+*×÷]\s*\d|\d\s*(?:%|percent|per cent)\s+of\b|\b(?:calculate|compute|work out|add up|in total|"
    r"total|altogether|combined|sum of|average|twice|double|triple|half of|multiplied|divided|plus|minus)\b|"
    r"\b(?:days?|weeks?|months?)\s+(?:until|till|left|since|before|from (?:today|now))\b|"
    r"\bhow long (?:until|till|before|since)\b|\bwhat (?:date|day) (?:is|will|was)\b|\b(?:tomorrow|yesterday)\b|"
    r"计算|总共|一共|合计|平均|还有多少天|几号|明天|昨天",
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


def needs_computation(question: str) -> bool:
    """Whether the question's words ask for arithmetic or a date to count (no model call)."""
    return bool(_ASKS.search(question))


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
