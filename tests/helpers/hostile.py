"""Hostile text for the console's tests: markup and script recorded in every field a page shows,
and the checks that it stays text and that every answer carries the strict headers."""

from __future__ import annotations

from langgraph.types import Interrupt

from threadsage.records.ingestions import IngestionLog
from threadsage.records.turns import QuestionStore, TurnRecord

FORMULA = '=HYPERLINK("http://evil.example","click")'
HOSTILE = "\"'><script>alert(1)</script><img src=x onerror=alert(1)><svg onload=alert(1)>"


async def record_hostile_turns(checkpointer) -> None:
    store = QuestionStore(checkpointer)
    await store.setup()
    session = f"slack:T1:{HOSTILE}:1.1"
    cited = {"title": HOSTILE, "heading": HOSTILE, "path": HOSTILE}
    gap = {"question": HOSTILE, "answer": HOSTILE, "documents": [{"title": HOSTILE, "path": HOSTILE, "score": 0.2}]}
    turns = [
        ("m1", "not_covered", gap),
        ("m2", "answered", {"question": HOSTILE, "answer": HOSTILE, "citations": [cited], "route": HOSTILE}),
        ("m3", "clarified", {"question": HOSTILE, "__interrupt__": [Interrupt(value={"options": [HOSTILE, "x"]})]}),
        ("m4", "answered", {"question": FORMULA, "answer": "@SUM(1)"}),
    ]
    for message, outcome, state in turns:
        await store.record(TurnRecord(session, message, "slack", HOSTILE, message, "", None, outcome, state))
    log = IngestionLog(checkpointer)
    await log.setup()
    await log.record(HOSTILE, [(HOSTILE, HOSTILE)])


def assert_inert(page: str) -> None:
    lowered = page.lower()
    for tag in ("<script", "<img", "<svg onload", "onerror=alert(1)>", "'>"):
        assert tag not in lowered, tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def assert_strict(headers) -> None:
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy and "frame-ancestors 'none'" in policy
    assert headers["cache-control"] == "no-store" and headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
