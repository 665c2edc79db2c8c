"""The tools of one process, and the questions they answer on their own.

A question that is *only* arithmetic ("what is 15% of 240?") or *only* about the calendar ("how
many working days until the 15th?") is answered by the tool before any search, with or without a
language model: it needs no document and no model call. Questions that mix a document's number
with arithmetic ("15% of the Lisbon hotel limit") need reading first: the language model does
that in a decision of its own before the answer (adapters/reasoning/llm/computing.py); the offline
back-end cannot, and searches as usual.

Arithmetic may be asked in Chinese too ("计算 3 x (4 + 5)", "10 / 4 等于多少？"); date questions are
understood in English only. Why a tool cannot answer is said in the asker's language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from threadsage.i18n import DEFAULT, Language
from threadsage.settings.sections import RetrievalSettings
from threadsage.tools.calculator import CalculationError, calculate, formatted
from threadsage.tools.dates import Calendar, DateError, answer_date_question
from threadsage.tools.web import SearXNG, Tavily, WebSearch

_ASK = re.compile(
    r"^\s*(?:(?:what|how\s+much)(?:'s|\s+is|\s+are|\s+does)?|calculate|compute|work\s+out|evaluate"
    r"|请问|计算|算一下)?\s*"
    r"(?P<expression>.+?)\s*(?:=|equals?|come\s+to|make|等于多少|等于几|是多少|等于)?\s*[?.!？。！]*\s*$",
    re.IGNORECASE,
)
_ARITHMETIC = re.compile(r"(?:[\d\s.,+\-*/×÷−^%()€$£]|\b(?:x|times|plus|minus|of)\b)+", re.IGNORECASE)
_OPERATOR = re.compile(r"\d\s*(?:[+\-*/×÷−^]|\*\*|x\b|times|plus|minus|%\s*of)\s*[-(€$£]*\s*\d", re.IGNORECASE)


@dataclass(frozen=True)
class ToolAnswer:
    tool: str  # "calculator" or "dates"
    text: str
    ok: bool  # False: the question was for the tool, but could not be answered (text says why)


@dataclass(frozen=True)
class Toolbox:
    calendar: Calendar = field(default_factory=Calendar)
    web: WebSearch | None = None

    @classmethod
    def from_settings(cls, settings: RetrievalSettings) -> Toolbox:
        return cls(calendar=Calendar(settings.timezone), web=web_search(settings))

    def direct(self, question: str, language: Language = DEFAULT) -> ToolAnswer | None:
        """The tool's answer when the whole question is arithmetic or dates; None otherwise. Why
        it cannot be answered is said in `language` (the asker's)."""
        if expression := explicit_expression(question):
            try:
                return ToolAnswer("calculator", f"{expression} = **{formatted(calculate(expression))}**", True)
            except CalculationError as exc:
                return ToolAnswer("calculator", exc.text.render(language), False)
        try:
            text = answer_date_question(question, self.calendar)
        except DateError as exc:
            return ToolAnswer("dates", exc.text.render(language), False)
        return ToolAnswer("dates", text, True) if text else None


def explicit_expression(question: str) -> str | None:
    """The arithmetic a question asks for when it asks nothing else: "what is 3 x (4 + 5)?" → "3 x (4 + 5)"."""
    match = _ASK.match(question)
    if not match:
        return None
    expression = match.group("expression").strip()
    if _ARITHMETIC.fullmatch(expression) and _OPERATOR.search(expression):
        return expression
    return None


def web_search(settings: RetrievalSettings) -> WebSearch | None:
    """The configured web search service, if any. One named without what it needs is a ValueError,
    which the commands report as a configuration error at start-up."""
    if settings.web_search == "tavily":
        if settings.tavily_api_key is None:
            raise ValueError("THREADSAGE_WEB_SEARCH=tavily needs TAVILY_API_KEY")
        return Tavily(
            settings.tavily_api_key.get_secret_value(),
            settings.tavily_url,
            settings.web_search_results,
            settings.web_search_timeout,
        )
    if settings.web_search == "searxng":
        if not settings.searxng_url:
            raise ValueError("THREADSAGE_WEB_SEARCH=searxng needs THREADSAGE_SEARXNG_URL")
        return SearXNG(settings.searxng_url, settings.web_search_results, settings.web_search_timeout)
    return None
