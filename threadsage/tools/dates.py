"""Date arithmetic on the calendar, relative to today in the configured time zone.

Working days are Monday to Friday; public holidays are not known, and every answer says so. A
question is understood only when all of it is about dates ("how many working days until the
15th?", "what date is 10 working days from today?"), so that a question about a policy that
merely mentions a date is never answered by the calendar.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from threadsage.i18n import Explained

MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name} | {
    name.lower(): n for n, name in enumerate(calendar.month_abbr) if name
}
WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
NO_HOLIDAYS = "Monday to Friday; public holidays are not counted"
MAX_DAYS = 3660  # ten years: further is not a planning question


class DateError(Explained):
    """Why a date question could not be answered, in words a person can act on (in the asker's
    language: `text.render(language)`)."""


class Day(date):
    """A date that reads as the answers write it ("Monday 3 March 2025"); formatted with a
    `strftime` pattern where a language writes dates otherwise."""

    @classmethod
    def of(cls, day: date) -> Day:
        return cls(day.year, day.month, day.day)

    def __str__(self) -> str:
        return _long(self)


@dataclass(frozen=True)
class Calendar:
    timezone: str = "UTC"

    def today(self) -> date:
        return datetime.now(ZoneInfo(self.timezone)).date()


_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_TARGET = (
    rf"(?P<target>(?:the\s+)?{_DAY}(?:\s+(?:of\s+)?(?:{_MONTH})\.?)?(?:\s+\d{{4}})?"
    rf"|(?:{_MONTH})\.?\s+{_DAY}(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}"
    r"|(?:next\s+|this\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|tomorrow|(?:the\s+)?end\s+of\s+(?:the\s+)?month)"
)
_UNTIL = re.compile(
    rf"^\s*how\s+many\s+(?P<kind>working\s+|business\s+|work\s+|calendar\s+)?days\s+"
    rf"(?:are\s+there\s+|are\s+left\s+|left\s+|remain\s+)?(?:until|till|til|to|before)\s+{_TARGET}"
    r"(?:\s+(?:from\s+)?(?:today|now))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_AFTER = re.compile(
    r"^\s*(?:what|which)\s+(?:date|day)\s+(?:is|will\s+it\s+be)\s+(?:it\s+)?(?:in\s+)?(?P<n>\d{1,4})\s+"
    r"(?P<kind>working\s+|business\s+|work\s+|calendar\s+)?days?\s*(?:from\s+(?:today|now)|later)?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_TODAY = re.compile(
    r"^\s*(?:what(?:'s| is)\s+)?(?:today'?s\s+date|the\s+date\s+today|what\s+day\s+is\s+(?:it\s+)?today)"
    r"\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def answer_date_question(question: str, calendar_: Calendar) -> str | None:
    """The answer to a question that is only about dates, or None when it is not one.
    Raises DateError when it is one but names an impossible date."""
    today = calendar_.today()
    if _TODAY.match(question):
        return f"Today is {_long(today)} ({calendar_.timezone})."
    if match := _UNTIL.match(question):
        target = resolve(match.group("target"), today)
        working = _is_working(match.group("kind"))
        return until(today, target, working)
    if match := _AFTER.match(question):
        n = int(match.group("n"))
        if n > MAX_DAYS:
            raise DateError("date_too_far", limit=MAX_DAYS)
        working = _is_working(match.group("kind"))
        end = add_working_days(today, n) if working else today + timedelta(days=n)
        unit = "working days" if working else "days"
        note = f" (working days: {NO_HOLIDAYS})" if working else ""
        return f"{n} {unit} after today, {_long(today)}, is {_long(end)}{note}."
    return None


def until(today: date, target: date, working: bool) -> str:
    if target <= today:
        raise DateError("date_not_after", target=Day.of(target), today=Day.of(today))
    if (target - today).days > MAX_DAYS:
        raise DateError("date_too_far", limit=MAX_DAYS)
    if not working:
        return f"{(target - today).days} days from today, {_long(today)}, to {_long(target)}."
    n = working_days_between(today, target)
    return (
        f"{n} working day{'s' if n != 1 else ''} after today, {_long(today)}, up to and including "
        f"{_long(target)} ({NO_HOLIDAYS})."
    )


def working_days_between(start: date, end: date) -> int:
    """Working days after `start`, up to and including `end`."""
    weeks, rest = divmod((end - start).days, 7)
    extra = sum((start + timedelta(days=i)).weekday() < 5 for i in range(1, rest + 1))
    return weeks * 5 + extra


def add_working_days(start: date, n: int) -> date:
    day = start
    while n > 0:
        day += timedelta(days=1)
        n -= day.weekday() < 5
    return day


def resolve(text: str, today: date) -> date:
    """The next date a phrase names, from `today` on: "the 15th", "March 3", "Friday", "2026-01-31"."""
    phrase = " ".join(text.lower().replace(",", " ").split()).removeprefix("the ")
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", phrase):
            return date.fromisoformat(phrase)
        if phrase == "tomorrow":
            return today + timedelta(days=1)
        if phrase.startswith("end of"):
            return today.replace(day=calendar.monthrange(today.year, today.month)[1])
        weekday = next((n for name, n in WEEKDAYS.items() if phrase.endswith(name)), None)
        if weekday is not None:  # the next one after today; "next Friday" is the one after that
            ahead = (weekday - today.weekday()) % 7 or 7
            return today + timedelta(days=ahead + (7 if phrase.startswith("next ") else 0))
        return _day_of_month(phrase, today)
    except ValueError as exc:
        if isinstance(exc, DateError):
            raise
        raise DateError("date_not_a_date", text=text) from None


def _day_of_month(phrase: str, today: date) -> date:
    numbers = [int(n) for n in re.findall(r"\d+", phrase)]
    month = next((n for name, n in MONTHS.items() if re.search(rf"\b{name}\b", phrase)), None)
    day = numbers[0]
    year = numbers[1] if len(numbers) > 1 else None
    if month is None:  # "the 15th": this month's if still ahead, else next month's
        candidate = _safe(today.year, today.month, day)
        if candidate > today:
            return candidate
        year_, month_ = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return _safe(year_, month_, day)
    candidate = _safe(year or today.year, month, day)
    if year is None and candidate <= today:
        candidate = _safe(today.year + 1, month, day)
    return candidate


def _safe(year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError:
        raise DateError("date_no_such_day", month=date(year, month, 1), day=day) from None


def _is_working(kind: str | None) -> bool:
    return kind is not None and kind.strip().lower() in ("working", "business", "work")


def _long(day: date) -> str:
    return f"{day.strftime('%A')} {day.day} {day.strftime('%B %Y')}"
