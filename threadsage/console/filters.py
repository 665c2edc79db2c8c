"""The console's filters — time range, platform, channel, outcome — read from the query string
and turned into one SQL condition on the recorded turns (`t`). Every list and chart takes them."""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from threadsage.records.turns import OUTCOMES

DAY_MS = 86_400_000
RANGES = (1, 7, 30, 90, 365)
DEFAULT_DAYS = 30
# Explicit dates: from the epoch (the turns' times count from it) to the day before the last one a
# `date` holds (the range ends the day after `end`), at most ten years apart (a chart bar a day).
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(9999, 12, 30)
MAX_RANGE_DAYS = 3660


class BadFilter(ValueError):
    """A filter value that cannot be one: the page answers 400 with this message."""


@dataclass(frozen=True)
class Filters:
    start_ms: int
    end_ms: int
    platform: str = ""
    channel: str = ""
    outcome: str = ""
    people: bool = False  # show person references (hidden unless asked)
    days: int = DEFAULT_DAYS  # 0: the explicit dates `start`/`end`

    @classmethod
    def parse(cls, params: QueryParams, now: float | None = None) -> Filters:
        """The filters of a query string; BadFilter, saying which and why, for a value that cannot
        be one (the page answers 400). Empty values and unknown keys mean no filter."""
        end = int((now if now is not None else time.time()) * 1000) + 1
        days_text = params.get("days", "")
        if days_text and days_text not in {str(d) for d in RANGES}:
            raise BadFilter(f"days: one of {', '.join(map(str, RANGES))}")
        days = int(days_text or DEFAULT_DAYS)
        start_day, end_day = _date(params, "start"), _date(params, "end")
        if start_day or end_day:
            days = 0
            start_ms = _ms(start_day) if start_day else 0
            end = _ms(end_day + timedelta(days=1)) if end_day else end
            if start_day and end <= start_ms:
                raise BadFilter("start: a day not after end (today when end is empty)")
            if start_day and end - start_ms > MAX_RANGE_DAYS * DAY_MS:
                raise BadFilter(
                    f"start and end: at most {MAX_RANGE_DAYS} days apart (leave start empty for all before end)"
                )
        else:
            start_ms = end - days * DAY_MS
        outcome = params.get("outcome", "")
        if outcome and outcome not in OUTCOMES:
            raise BadFilter(f"outcome: one of {', '.join(OUTCOMES)}")
        if params.get("people", "") not in ("", "1"):
            raise BadFilter("people: 1 shows person references; leave it empty to hide them")
        return cls(
            start_ms=start_ms,
            end_ms=end,
            platform=_text(params, "platform", 40),
            channel=_text(params, "channel", 200),
            outcome=outcome,
            people=params.get("people", "") == "1",
            days=days,
        )

    def where(self, alias: str = "t") -> tuple[str, list[object]]:
        """The SQL condition (with `{p}` placeholders) and its parameters."""
        parts = [f"{alias}.at >= {{p}}", f"{alias}.at < {{p}}"]
        params: list[object] = [self.start_ms, self.end_ms]
        for column in ("platform", "channel", "outcome"):
            value = getattr(self, column)
            if value:
                parts.append(f"{alias}.{column} = {{p}}")
                params.append(value)
        return " AND ".join(parts), params

    def where_days(self, alias: str = "d") -> tuple[str, list[object]]:
        """The same condition on the per-day counts (`threadsage_turn_days`): whole UTC days."""
        where, params = self.where(alias)
        where = where.replace(
            f"{alias}.at >= {{p}} AND {alias}.at < {{p}}", f"{alias}.day >= {{p}} AND {alias}.day <= {{p}}"
        )
        return where, [self.start_ms // DAY_MS, (self.end_ms - 1) // DAY_MS, *params[2:]]

    def query(self, **changes: str) -> str:
        """This filter set as a query string, with `changes` applied ("" drops a key)."""
        start, end = self.dates()
        values = {
            "days": str(self.days) if self.days else "",
            "start": start,
            "end": end,
            "platform": self.platform,
            "channel": self.channel,
            "outcome": self.outcome,
            "people": "1" if self.people else "",
        } | changes
        return urlencode({k: v for k, v in values.items() if v})

    def dates(self) -> tuple[str, str]:
        """The explicit first and last day (ISO), or "" for either that is open or a range in days."""
        return ("", "") if self.days else (_day(self.start_ms), _day(self.end_ms - 1))

    def day_range(self) -> range:
        """The days (counted from the epoch, UTC) the range covers, for the charts' x axis."""
        first = self.start_ms // DAY_MS if self.start_ms else (self.end_ms - 1) // DAY_MS - 29
        return range(first, (self.end_ms - 1) // DAY_MS + 1)


def _date(params: QueryParams, key: str) -> date | None:
    text = params.get(key, "")
    if not text:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise BadFilter(f"{key}: a date as YYYY-MM-DD") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadFilter(f"{key}: a date from {FIRST_DAY} to {LAST_DAY}")
    return day


def _text(params: QueryParams, key: str, longest: int) -> str:
    text = params.get(key, "")
    if len(text) > longest or any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise BadFilter(f"{key}: at most {longest} characters, none of them control characters")
    return text


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)


def _day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat() if ms > 0 else ""
