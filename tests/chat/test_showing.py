"""The one loop that drives how a front-end shows a turn (threadsage/chat/showing.py), on the real
chat service over the demo handbook: what a display is shown, in order, and what comes back to be
delivered — the same replies as `handle` gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.conversation import AMBIGUOUS, Conversation, only, service
from threadsage.chat import (
    ACCEPTED,
    NOT_YOURS,
    ClarificationAnswer,
    Collecting,
    Draft,
    Progress,
    Reply,
    ReplyKind,
    Turn,
    run_shown,
)

KEY = "test:ws:chan:shown"
CABIN = "Which cabin class may I book for a flight of 6 hours or more?"


def turn(n: int, text: str | None = None, answer: ClarificationAnswer | None = None, user: str = "U1") -> Turn:
    return Turn("test", KEY, user, f"shown-{n}", text=text, answer=answer)


async def test_a_question_shows_its_steps_and_returns_the_replies_handle_gives(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb, progress=True) as chat:
        display = Collecting()
        replies = await run_shown(chat, turn(1, CABIN), display)
        handled = await Conversation(chat, "test:ws:chan:handled").say(CABIN)
    assert [r.kind for r in replies] == [ReplyKind.ANSWER] == [r.kind for r in handled]
    assert replies[0].text == handled[0].text
    assert display.events and all(isinstance(e, Progress | Draft) for e in display.events)  # no reply is shown twice


async def test_a_click_shows_its_acceptance_first_then_returns_the_answer(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        [asked] = await run_shown(chat, turn(1, AMBIGUOUS), Collecting())
        assert asked.kind is ReplyKind.CLARIFICATION and asked.interrupt_id
        display = Collecting()
        replies = await run_shown(chat, turn(2, answer=ClarificationAnswer(asked.interrupt_id, 0)), display)
    assert display.events[0] is ACCEPTED and display.events.count(ACCEPTED) == 1
    assert only(replies).kind is ReplyKind.ANSWER


@pytest.mark.parametrize("shows_refusals", [True, False])
async def test_a_refused_click_is_the_displays_to_show_or_returned(
    tmp_path: Path, handbook_kb, shows_refusals: bool
) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        [asked] = await run_shown(chat, turn(1, AMBIGUOUS), Collecting())
        assert asked.interrupt_id
        display = Collecting(show_refusals=shows_refusals)
        click = ClarificationAnswer(asked.interrupt_id, 0)
        replies = await run_shown(chat, turn(2, answer=click, user="U2"), display)  # not the asker's question
    refusal = [e for e in [*display.events, *replies] if isinstance(e, Reply)]
    assert [r.text for r in refusal] == [NOT_YOURS] and ACCEPTED not in display.events
    assert (replies == []) is shows_refusals


async def test_a_display_that_fails_stops_the_run_at_once(tmp_path: Path, handbook_kb) -> None:
    class Broken(Collecting):
        async def progress(self, progress: Progress) -> None:
            raise RuntimeError("the platform refused the edit")

    async with service(tmp_path, "", handbook_kb, progress=True) as chat:
        with pytest.raises(RuntimeError, match="refused the edit"):
            await run_shown(chat, turn(1, CABIN), Broken())
