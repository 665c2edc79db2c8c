"""What the bot can answer in a place: the knowledge categories it may read there, with their
document counts (Telegram's /start; the same facts Slack's App Home shows)."""

from __future__ import annotations

from collections.abc import Callable

GENERAL = "general"  # documents ingested without a category


def coverage_lines(
    counts: dict[str, int], allowed: tuple[str, ...] | None, shown_as: Callable[[str], str] = str
) -> list[str]:
    """One line per category this place may read (`allowed`; None: every one), largest first;
    `shown_as` dresses the category's name for the platform (Slack makes it bold)."""
    shown = {c: n for c, n in counts.items() if n and (allowed is None or c in allowed)}
    return [
        f"{shown_as(category or GENERAL)} — {n} document{'s' if n != 1 else ''}"
        for category, n in sorted(shown.items(), key=lambda item: (-item[1], item[0]))
    ]
