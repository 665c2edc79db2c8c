"""The shared limits of a platform's calls (`Windows`) and the pacer's way round them."""

from __future__ import annotations

import asyncio
import time

import pytest

from threadsage.bots.pacing import Limit, NotNow, Pacer, Windows, optional

TWO_A_SECOND = Limit(2, 0.2)
RULES = [("chat", TWO_A_SECOND)]


async def test_a_needed_call_waits_for_room_and_never_goes_past_the_limit() -> None:
    windows, made = Windows(), []
    for _ in range(5):
        await windows.admit(RULES)
        made.append(time.monotonic())
    assert all(later - earlier >= 0.2 for earlier, later in zip(made, made[2:], strict=False))  # 2 in any 0.2 s
    assert made[-1] - made[0] >= 0.4


async def test_an_optional_call_takes_only_the_room_the_turns_in_flight_do_not_need() -> None:
    windows = Windows()
    with windows.answering(["chat"]):
        with optional():
            await windows.admit(RULES)  # 1 of 2 left, and one turn needs 1
            with pytest.raises(NotNow) as refused:
                await windows.admit(RULES)
        assert 0 < refused.value.wait <= 0.2
        await windows.admit(RULES)  # the turn's reply takes the room kept for it
    await asyncio.sleep(0.21)
    with optional():
        await windows.admit(RULES)  # no turn in flight: all the room is spare
        await windows.admit(RULES)


async def test_a_call_under_several_rules_takes_room_in_all_or_none() -> None:
    windows = Windows()
    rules = [("chat", TWO_A_SECOND), ("all", Limit(1, 0.2))]
    await windows.admit(rules)
    with optional(), pytest.raises(NotNow):
        await windows.admit(rules)  # "all" is full
    with optional():
        await windows.admit(RULES)  # "chat" had only one taken: nothing was taken by the refused call
        with pytest.raises(NotNow):
            await windows.admit(RULES)


async def test_calls_without_rules_are_never_held() -> None:
    windows = Windows()
    with optional():
        for _ in range(100):
            await windows.admit([])


async def test_the_pacer_shows_the_newest_once_the_limit_has_room() -> None:
    windows, latest, shown = Windows(), ["first"], []

    async def show() -> None:
        with optional():
            await windows.admit([("chat", Limit(1, 0.3))])
        shown.append(latest[0])

    pacer = Pacer(0.05, show)
    await pacer.offer()
    latest[0] = "second"
    await asyncio.sleep(0.06)
    await pacer.offer()  # refused for now: offered again when the window has room
    latest[0] = "third"
    await asyncio.sleep(0.4)
    assert shown == ["first", "third"]
    await pacer.cancel()
