"""Date arithmetic: phrases resolved from a given day, working days counted, today in the configured zone."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from threadsage.settings.environment import Settings
from threadsage.tools.dates import Calendar, DateError, answer_date_question, resolve, working_days_between

MONDAY = date(2026, 6, 1)


def counted(start: date, end: date) -> int:
    """Working days after `start` up to `end`, one day at a time."""
    return sum((start + timedelta(days=i)).weekday() < 5 for i in range(1, (end - start).days + 1))


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("the 15th", date(2026, 6, 15)),
        ("1st", date(2026, 7, 1)),  # today's day has passed: next month's
        ("15 March", date(2027, 3, 15)),  # past this year: next year's
        ("July 4, 2026", date(2026, 7, 4)),
        ("2026-12-24", date(2026, 12, 24)),
        ("Friday", date(2026, 6, 5)),
        ("Monday", date(2026, 6, 8)),  # the next one, not today
        ("next Friday", date(2026, 6, 12)),
        ("tomorrow", date(2026, 6, 2)),
        ("end of the month", date(2026, 6, 30)),
    ],
)
def test_phrases_name_the_next_such_date(phrase: str, expected: date) -> None:
    assert resolve(phrase, MONDAY) == expected


@pytest.mark.parametrize("days", [1, 4, 5, 6, 13, 30, 365])
def test_working_days_match_a_day_by_day_count(days: int) -> None:
    for start in (MONDAY + timedelta(days=i) for i in range(7)):  # every weekday as the start
        end = start + timedelta(days=days)
        assert working_days_between(start, end) == counted(start, end)


def test_questions_are_answered_from_today_in_the_configured_zone() -> None:
    calendar = Calendar("Pacific/Kiritimati")  # UTC+14: often a day ahead of UTC
    today = datetime.now(ZoneInfo("Pacific/Kiritimati")).date()
    target = today + timedelta(days=20)
    answer = answer_date_question(f"How many working days until {target.isoformat()}?", calendar)
    assert answer is not None
    assert answer.startswith(f"{counted(today, target)} working days after today")
    assert "public holidays are not counted" in answer
    plain = answer_date_question(f"how many days until {target.isoformat()}?", calendar)
    assert plain is not None and plain.startswith("20 days from today")
    ahead = answer_date_question("What date is 10 working days from today?", calendar)
    expected = today
    for _ in range(10):
        expected += timedelta(days=1)
        while expected.weekday() >= 5:
            expected += timedelta(days=1)
    assert ahead is not None and f"{expected.day} {expected.strftime('%B %Y')}" in ahead
    assert today.strftime("%B") in (answer_date_question("What's today's date?", calendar) or "")


@pytest.mark.parametrize(
    "question",
    [
        "How many days of leave do I get until my probation ends?",
        "What is the deadline for expenses?",
        "How many working days does a refund take?",
    ],
)
def test_questions_about_policies_are_not_date_questions(question: str) -> None:
    assert answer_date_question(question, Calendar()) is None


@pytest.mark.parametrize(
    ("question", "why"),
    [
        ("how many days until 31 February?", "no day 31"),
        ("how many working days until 2001-01-01?", "not after today"),
        ("how many days until 2999-01-01?", "too far ahead"),
        ("what date is 9999 working days from today?", "too far ahead"),
    ],
)
def test_impossible_dates_get_a_clear_message(question: str, why: str) -> None:
    with pytest.raises(DateError, match=why):
        answer_date_question(question, Calendar())


def test_an_unknown_time_zone_is_refused_at_start_up() -> None:
    with pytest.raises(ValueError, match="not an IANA time zone"):
        Settings(THREADSAGE_TIMEZONE="Mars/Olympus_Mons", _env_file=None)


def test_a_date_refusal_is_worded_in_each_language() -> None:
    with pytest.raises(DateError) as no_day:
        answer_date_question("how many days until 31 February 2030?", Calendar())
    with pytest.raises(DateError) as past:
        answer_date_question("how many working days until 2001-01-01?", Calendar())
    today = Calendar().today()
    assert (str(no_day.value), no_day.value.text.render("zh")) == ("February has no day 31.", "2030-02 没有 31 日。")
    assert str(past.value) == f"Monday 1 January 2001 is not after today ({today:%A} {today.day} {today:%B %Y})."
    assert past.value.text.render("zh") == f"2001-01-01 不在今天（{today:%Y-%m-%d}）之后。"
