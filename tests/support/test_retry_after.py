"""A server's Retry-After, as seconds or as a date, capped; what says nothing usable is None."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from threadsage.support.retry_after import server_wait


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), ("0.5", 0.5), ("600", 20.0), (None, None), ("", None), ("soon", None), ("-2", None)],
)
def test_seconds_capped_and_nonsense_ignored(value: str | None, expected: float | None) -> None:
    assert server_wait(value, cap=20.0) == expected


def test_a_date_is_the_time_left_until_it_and_a_past_one_is_now() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    earlier = format_datetime(datetime.now(UTC) - timedelta(seconds=10), usegmt=True)
    assert 8.0 < (server_wait(later, cap=60.0) or 0) <= 10.0
    assert server_wait(later, cap=5.0) == 5.0
    assert server_wait(earlier, cap=60.0) == 0.0
