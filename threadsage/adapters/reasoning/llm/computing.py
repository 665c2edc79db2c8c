"""The calculator and the calendar for an answer that needs them, as a separate, named decision.

Offering the tools beside the answer's own structured form with `tool_choice: "required"` is not
portable (llama.cpp's server ignores it and answers in text, or fails with HTTP 500 in its
function-calling format), and with `auto` the answer may come back as text without its excerpts.
So the answer call always asks for its one function, and the tools come before it, only when the
question shows arithmetic or dates: one structured call lists the calculations and date questions
the answer needs; they run here, exactly; their results go to the answer call as data and are
shown under the answer, so a person can check the arithmetic.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from threadsage.tools.calculator import CalculationError, calculate, formatted
from threadsage.tools.dates import Calendar, DateError, answer_date_question

MAX_EACH = 3  # calculations, and date questions, one answer may ask for

_CUES = re.compile(
    r"%|percent|per cent|[+*/×÷=]|\b(total|sum|altogether|combined|in all|times|twice|double|triple|half|"
    r"average|plus|minus|multipl\w*|divid\w*|calculate|compute|work out|today|tomorrow|yesterday|"
    r"(working|business|calendar) days?|how many days|days (until|till|from|left|since)|weeks? from|"
    r"what date|deadline)\b|计算|总共|一共|多少天|工作日|今天",
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


def applies(question: str) -> bool:
    """Whether the question shows arithmetic or dates: only then is the decision asked for."""
    return bool(_CUES.search(question))


def computed(wanted: Computations, calendar: Calendar) -> list[str]:
    """Each result as text for the model and the reader; a refusal says why, in words."""
    results = []
    for expression in wanted.calculations[:MAX_EACH]:
        try:
            results.append(f"{expression} = {formatted(calculate(expression))}")
        except CalculationError as exc:
            results.append(f"{expression}: error: {exc}")
    for question in wanted.date_questions[:MAX_EACH]:
        try:
            results.append(answer_date_question(question, calendar) or f"Cannot answer the date question: {question}")
        except DateError as exc:
            results.append(f"{question}: error: {exc}")
    return results


def shown(answer: str, results: list[str]) -> str:
    """The answer with what the tools computed under it, so a person can check the arithmetic."""
    if not results or not answer:
        return answer
    return answer + "\n\n" + "\n".join(f"_Computed: {result}_" for result in results)
