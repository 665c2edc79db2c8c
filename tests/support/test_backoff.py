"""The one backoff rule the retry loops share, with the schedules they had before it: the turn
queue's outage retries, a worker reconnecting to Redis, Telegram's polling, the connectors'
HTTP (Retry-After first)."""

from __future__ import annotations

import asyncio
import math

import pytest

from threadsage.delivery.queue import OUTAGE_BACKOFF
from threadsage.ingestion.connectors.http import retry_after
from threadsage.support.backoff import Backoff, wait_or_stop


def test_pauses_double_up_to_the_cap_and_start_over_after_a_success() -> None:
    backoff = Backoff(0.5, cap=10.0)  # a worker reconnecting to Redis
    assert [backoff.next() for _ in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    backoff.reset()
    assert backoff.next() == 0.5


def test_the_delay_of_a_numbered_try_is_the_same_whoever_counts() -> None:
    assert [OUTAGE_BACKOFF.delay(attempt) for attempt in (1, 2, 3)] == [2.0, 4.0, 8.0]  # a job's tries, from 1
    assert Backoff(1.0, cap=5.0).delay(10_000) == 5.0  # no overflow, however many tries
    assert Backoff(1.0).delay(10_000) == math.inf


def test_a_connector_waits_the_server_first_else_a_growing_pause() -> None:
    assert [retry_after(None, attempt) for attempt in range(4)] == [1.0, 2.0, 4.0, 8.0]
    assert retry_after("3", 3) == 3.0
    assert retry_after("soon", 1) == 2.0  # a header saying nothing usable
    assert retry_after(None, 20) == 120.0  # capped


@pytest.mark.parametrize(("first", "cap", "factor"), [(0.0, 1.0, 2.0), (1.0, 0.5, 2.0), (1.0, 2.0, 0.5)])
def test_a_backoff_that_cannot_work_is_refused(first: float, cap: float, factor: float) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(first, cap=cap, factor=factor)


async def test_a_pause_ends_when_the_process_stops() -> None:
    stop = asyncio.Event()
    waiting = asyncio.create_task(wait_or_stop(3600, stop))
    await asyncio.sleep(0)
    assert not waiting.done()
    stop.set()
    await asyncio.wait_for(waiting, 30)  # an hour's pause, over once stopped
