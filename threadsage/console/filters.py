"""The console's filters — time range, platform, channel, outcome — read from the query string
and turned into one SQL condition on the recorded turns (`t`). Every list and chart takes them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from threadsage.records.turns import OUTCOMES

DAY_MS = 86_400_000
RANGES = (1, 7, 30, 90, 365)
DEFAULT_DAYS = 30


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
        """Unknown or malformed values fall back to the defaults: a filter never fails a page."""
        end = int((now if now is not None else time.time()) * 1000) + 1
        days = _int(params.get("days", ""), DEFAULT_DAYS)
        start_day, end_day = _date(params.get("start", "")), _date(params.get("end", ""))
        if start_day or end_day:
            days = 0
            start_ms = _ms(start_day) if start_day else 0
            end = _ms(end_day + timedelta(days=1)) if end_day else end
        else:
            days = days if days in RANGES else DEFAULT_DAYS
            start_ms = end - days * DAY_MS
        outcome = params.get("outcome", "")
        return cls(
            start_ms=start_ms,
            end_ms=end,
            platform=params.get("platform", "")[:40],
            channel=params.get("channel", "")[:200],
            outcome=outcome if outcome in OUTCOMES else "",
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


def _int(text: str, default: int) -> int:
    return int(text) if text.isdigit() else default


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)


def _day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat() if ms > 0 else ""
