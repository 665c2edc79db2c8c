"""What the bot can answer in a place: the knowledge categories it may read there, with their
document counts (Telegram's /start; the same facts Slack's App Home shows)."""

from __future__ import annotations

from collections.abc import Callable

from threadsage.bots.replies import documents_text
from threadsage.i18n import DEFAULT, Language, say


def coverage_lines(
    counts: dict[str, int],
    shown_as: Callable[[str], str] = str,
    language: Language = DEFAULT,
) -> list[str]:
    """One line per category of `counts` (what this place may read) that has documents, largest first;
    `shown_as` dresses the category's name for the platform (Slack makes it bold). Documents
    ingested without a category are "general"."""
    shown = {c: n for c, n in counts.items() if n}
    return [
        f"{shown_as(category or say('coverage_general', language))} — {documents_text(n, language)}"
        for category, n in sorted(shown.items(), key=lambda item: (-item[1], item[0]))
    ]
