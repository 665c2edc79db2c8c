"""How long a server asks us to wait before trying again: its `Retry-After` header, which HTTP
allows as seconds or as a date (RFC 9110 §10.2.3), capped so that no server parks a caller."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def server_wait(value: str | None, cap: float) -> float | None:
    """Seconds to wait, at most `cap`; None when the header is absent or says nothing usable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return None
        seconds = max(0.0, seconds)  # a date already past: now
    return min(cap, seconds) if seconds >= 0 else None
