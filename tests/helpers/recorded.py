"""Turns in the console's record, written as `QuestionStore` writes them, for tests of what reads
them (the knowledge loop, the digest) without running each turn."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from threadsage.records.tables import Tables
from threadsage.records.turns import COLUMNS, TABLE

WRITTEN = (*COLUMNS, "up", "down")


def turn_row(at: float, question: str, outcome: str = "answered", **values: Any) -> list[Any]:
    """A recorded turn at `at` (seconds), in a thread of its own in channel C1 (`values` override)."""
    number = uuid.uuid4().hex[:8]
    words = " ".join(sorted(w.strip("?").lower() for w in question.split() if len(w) > 3))
    base = {
        "session_key": f"slack:T1:C1:{number}", "message_id": f"m{number}", "at": int(at * 1000), "platform": "slack",
        "channel": "C1", "thread": number, "user_id": f"U{number}", "answer_ref": number, "question": question,
        "standalone": None, "wording": words, "answer": "An answer.", "route": "standard_retrieval",
        "outcome": outcome, "confidence": 0.9, "llm_calls": 0, "latency_ms": 100, "citations": "[]", "closest": None,
        "options": None, "choice": None, "chosen": None, "chosen_index": None, "answers": None,
        "gap": 1 if outcome in ("not_covered", "low_confidence") else 0, "up": 0, "down": 0,
    }  # fmt: skip
    return [{**base, **values}[c] for c in WRITTEN]


async def write_turns(tables: Tables, rows: Iterable[list[Any]]) -> None:
    marks = ", ".join(["{p}"] * len(WRITTEN))
    for values in rows:
        await tables.execute(f"INSERT INTO {TABLE} ({', '.join(WRITTEN)}) VALUES ({marks})", values)
