"""CSV exports of the console's lists, with the filters of the page they come from. A cell that a
spreadsheet would run as a formula (= + - @ first) is prefixed with ' : people's questions are
data, never formulas."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

QUESTION_FIELDS = (
    "at", "platform", "channel", "user_id", "question", "standalone", "outcome", "route", "confidence",
    "llm_calls", "latency_ms", "answer", "sources", "closest", "options", "choice", "chosen", "up", "down",
)  # fmt: skip


def csv_text(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([_safe(cell) for cell in row] for row in rows)
    return out.getvalue()


def turn_cells(turn: dict[str, Any], people: bool) -> list[Any]:
    values = turn | {
        "at": datetime.fromtimestamp(turn["at"] / 1000, UTC).isoformat(timespec="seconds"),
        "user_id": turn.get("user_id") if people else "",
        "sources": "; ".join(c["path"] for c in turn.get("citations") or []),
        "closest": (turn.get("closest") or {}).get("path", ""),
        "options": "; ".join(map(str, turn["options"])) if isinstance(turn.get("options"), list) else "",
    }
    return [values.get(name) for name in QUESTION_FIELDS]


def _safe(cell: Any) -> Any:
    if isinstance(cell, str) and cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + cell
    return "" if cell is None else cell
