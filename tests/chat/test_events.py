"""The run's events on their way to a front-end: a waiting draft gives way to a newer one that
extends it; a withdrawal, a step and the end are never dropped."""

from __future__ import annotations

from threadsage.chat import Draft, Progress, Step
from threadsage.chat.events import RunEvents


async def test_a_waiting_draft_is_replaced_by_the_newer_words_but_a_withdrawal_stays() -> None:
    events = RunEvents()
    for event in [
        Progress(Step.WRITING),
        Draft("One"),
        Draft("One two"),
        Draft("One two three"),
        Draft(""),
        Draft("Other"),
        Draft("Other words"),
        None,
    ]:
        events.put(event)
    got = []
    while (event := await events.get()) is not None:
        got.append(event)
    assert got == [Progress(Step.WRITING), Draft("One two three"), Draft(""), Draft("Other words")]
