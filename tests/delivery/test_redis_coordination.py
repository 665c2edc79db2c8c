"""Coordination on a real Redis: locks and their expiry, idempotency keys, rate limits, shared facts."""

from __future__ import annotations

import asyncio
import time
import uuid
from contextlib import suppress
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.helpers.conversation import AMBIGUOUS, Conversation, only
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ReplyKind
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.delivery.current import Delivery, current_delivery
from threadsage.delivery.redis_coordination import RedisCoordinator
from threadsage.settings.environment import Settings

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
async def prefix():
    """A key prefix of the test's own; its keys are deleted afterwards."""
    prefix = f"test-{uuid.uuid4().hex[:10]}:"
    yield prefix
    redis = Redis.from_url(REDIS_URL)
    keys = [key async for key in redis.scan_iter(f"{prefix}*")]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()


@pytest.fixture
async def coordinator(prefix: str):
    redis = Redis.from_url(REDIS_URL)
    yield RedisCoordinator(redis, prefix=prefix, lock_ttl=0.6)
    await redis.aclose()


async def test_one_turn_at_a_time_per_session(coordinator: RedisCoordinator) -> None:
    log: list[str] = []

    async def turn(session: str, name: str) -> None:
        async with coordinator.session_lock(session):
            log.append(f"{name} in")
            await asyncio.sleep(0.1)
            log.append(f"{name} out")

    await asyncio.gather(turn("s1", "a"), turn("s1", "b"))
    assert log in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])
    # Different sessions do not wait for each other: c holds its lock until d is inside its own.
    d_inside = asyncio.Event()

    async def holding() -> None:
        async with coordinator.session_lock("s2"):
            await asyncio.wait_for(d_inside.wait(), 10)

    async def entering() -> None:
        async with coordinator.session_lock("s3"):
            d_inside.set()

    await asyncio.gather(holding(), entering())


async def test_the_lock_is_renewed_while_held(coordinator: RedisCoordinator) -> None:
    key = f"{coordinator.prefix}lock:long"
    async with coordinator.session_lock("long"):
        await asyncio.sleep(1.5)  # well past the 0.6 s TTL
        assert await coordinator.still_holds()
        assert 0 < await coordinator.redis.pttl(key) <= 600
    assert await coordinator.redis.get(key) is None
    assert not await coordinator.still_holds()  # outside the lock


async def test_a_lock_set_or_renewed_within_half_its_ttl_is_known_held_without_asking_redis(prefix: str) -> None:
    coordinator = RedisCoordinator(Redis.from_url(REDIS_URL), prefix=prefix, lock_ttl=3)
    async with coordinator.session_lock("asked") as lock:
        asked = 0
        owned = lock.owned

        async def counted() -> bool:
            nonlocal asked
            asked += 1
            return await owned()

        lock.owned = counted  # type: ignore[method-assign]
        assert await coordinator.still_holds() and asked == 0  # just taken: it cannot have expired
        time.sleep(1.6)  # noqa: ASYNC251 - no renewal meanwhile: past half the 3 s TTL since it was set
        assert await coordinator.still_holds() and asked == 1  # Redis is asked
        async with asyncio.timeout(10):
            while await coordinator.redis.pttl(f"{prefix}lock:asked") < 2_500:  # noqa: ASYNC110 - until renewed
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.05)  # the renewal's task resumes after its reply
        assert await coordinator.still_holds() and asked == 1
    await coordinator.redis.aclose()


async def test_the_lock_is_let_go_even_if_a_renewal_ignores_a_cancellation(coordinator: RedisCoordinator) -> None:
    """redis-py once swallowed the cancellation of a renewal in flight: the renewal went on for
    ever and the turn holding the lock waited for it (a turn that never ended, in
    bench/worker_pool.py). Leaving the lock must not depend on the renewal being cancellable."""
    renewing = asyncio.Event()

    async def hold() -> None:
        async with coordinator.session_lock("stubborn") as lock:
            renew = lock.reacquire

            async def stubborn() -> bool:
                renewing.set()
                with suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.2)  # a slow round trip, during which the holder leaves
                return await renew()

            lock.reacquire = stubborn  # type: ignore[method-assign]
            await asyncio.wait_for(renewing.wait(), 2)

    holding = asyncio.create_task(hold())
    done, _ = await asyncio.wait({holding}, timeout=3)  # not wait_for: its cancellation could be swallowed too
    assert holding in done, "the holder is still waiting for its renewal"
    holding.result()
    assert await coordinator.redis.get(f"{coordinator.prefix}lock:stubborn") is None


async def test_the_lock_expires_after_ten_seconds_by_default(prefix: str) -> None:
    coordinator = RedisCoordinator(Redis.from_url(REDIS_URL), prefix=prefix)
    async with coordinator.session_lock("default"):
        assert 9_000 < await coordinator.redis.pttl(f"{prefix}lock:default") <= 10_000
    await coordinator.redis.aclose()


async def test_a_dead_holder_frees_the_lock_after_its_ttl(coordinator: RedisCoordinator) -> None:
    # What a process killed mid-turn leaves behind: its lock, with an expiry, and nobody renewing.
    await coordinator.redis.set(f"{coordinator.prefix}lock:crashed", "dead-token", px=500)
    started = time.perf_counter()
    async with asyncio.timeout(10), coordinator.session_lock("crashed"):
        waited = time.perf_counter() - started
    assert waited > 0.3  # not before the dead holder's lock expired (a lower bound: load only lengthens it)


async def test_a_stalled_holder_loses_the_lock_and_cannot_release_anothers(
    coordinator: RedisCoordinator, prefix: str
) -> None:
    other = RedisCoordinator(Redis.from_url(REDIS_URL), prefix=prefix, lock_ttl=5)
    taken, first_left = asyncio.Event(), asyncio.Event()

    async def next_turn() -> bool:
        async with other.session_lock("stall"):
            taken.set()
            await first_left.wait()
            return await other.still_holds()

    async with coordinator.session_lock("stall"):
        time.sleep(0.8)  # noqa: ASYNC251 - the whole process stalls: renewal cannot run, the lock expires
        later = asyncio.create_task(next_turn())
        await asyncio.wait_for(taken.wait(), 2)
        assert not await coordinator.still_holds()  # the stalled holder learns it lost the lock
    first_left.set()
    assert await later  # the stalled holder's release left the later holder's lock alone
    await other.redis.aclose()


async def test_claims_are_once_per_ttl(coordinator: RedisCoordinator) -> None:
    assert await coordinator.claim("turn:s:m1", 1)
    assert not await coordinator.claim("turn:s:m1", 1)
    assert await coordinator.claim("turn:s:m2", 1)
    await asyncio.sleep(1.2)
    assert await coordinator.claim("turn:s:m1", 1)


@pytest.mark.parametrize("kind", ["redis", "local"])
async def test_a_claim_belongs_to_the_delivery_that_took_it(coordinator: RedisCoordinator, kind: str) -> None:
    """The same queue job handed to a second worker may claim again; another delivery may not."""
    coordinators = {"redis": coordinator, "local": LocalCoordinator()}
    claims = coordinators[kind]
    token = current_delivery.set(Delivery("job-1"))
    try:
        assert await claims.claim("slack-event:C1:1", 60)
        current_delivery.set(Delivery("job-1", attempt=2))
        assert await claims.claim("slack-event:C1:1", 60)  # the redelivery
        current_delivery.set(Delivery("job-2"))
        assert not await claims.claim("slack-event:C1:1", 60)  # Slack's retry, queued again
    finally:
        current_delivery.reset(token)
    assert not await claims.claim("slack-event:C1:1", 60)  # outside the queue: a one-off owner


@pytest.mark.parametrize("kind", ["redis", "local"])
async def test_remembered_facts_are_shared_and_expire(coordinator: RedisCoordinator, prefix: str, kind: str) -> None:
    first, second = {
        "redis": (coordinator, RedisCoordinator(Redis.from_url(REDIS_URL), prefix=prefix)),
        "local": (LocalCoordinator(),) * 2,
    }[kind]
    assert await second.recall("telegram-message:-100:7") is None
    await first.remember("telegram-message:-100:7", "telegram:-:-100:5", 1)
    assert await second.recall("telegram-message:-100:7") == "telegram:-:-100:5"
    await asyncio.sleep(1.2)
    assert await second.recall("telegram-message:-100:7") is None
    if kind == "redis":
        await second.redis.aclose()


@pytest.mark.parametrize("kind", ["redis", "local"])
async def test_marks_are_shared_taken_once_and_expire(coordinator: RedisCoordinator, prefix: str, kind: str) -> None:
    first, second = {
        "redis": (coordinator, RedisCoordinator(Redis.from_url(REDIS_URL), prefix=prefix)),
        "local": (LocalCoordinator(),) * 2,
    }[kind]
    await first.mark("slack-threads:C1", "1.000100", 60)
    await first.mark("slack-threads:C1", "1.000100", 60)  # marked twice, taken once
    await first.mark("slack-threads:C1", "2.000200", 60)
    await first.mark("slack-threads:C2", "3.000300", 1)
    assert await second.take_marks("slack-threads:C1") == {"1.000100", "2.000200"}
    assert await second.take_marks("slack-threads:C1") == set()
    await asyncio.sleep(1.2)
    assert await second.take_marks("slack-threads:C2") == set()  # nobody took it in time
    if kind == "redis":
        await second.redis.aclose()


async def test_sliding_window_rate_limit(coordinator: RedisCoordinator) -> None:
    assert [await coordinator.allow("rate:u1", 3, 0.5) for _ in range(4)] == [True, True, True, False]
    assert await coordinator.allow("rate:u2", 3, 0.5)
    await asyncio.sleep(0.6)
    assert await coordinator.allow("rate:u1", 3, 0.5)


@pytest.mark.parametrize("kind", ["redis", "local"])
async def test_a_decided_rate_limit_is_given_again_without_counting(coordinator: RedisCoordinator, kind: str) -> None:
    """A turn redelivered by the queue asks again under its decision key: the same answer, and the
    window does not count it twice."""
    limiter = coordinator if kind == "redis" else LocalCoordinator()
    assert await limiter.allow("rate:u1", 2, 60, decision="turn-1", decision_ttl=60)
    assert await limiter.allow("rate:u1", 2, 60, decision="turn-1", decision_ttl=60)  # redelivered
    assert await limiter.allow("rate:u1", 2, 60, decision="turn-2", decision_ttl=60)
    assert not await limiter.allow("rate:u1", 2, 60, decision="turn-3", decision_ttl=60)
    assert not await limiter.allow("rate:u1", 2, 60, decision="turn-3", decision_ttl=60)
    assert await limiter.allow("rate:u1", 2, 60, decision="turn-2", decision_ttl=60)


async def test_the_chat_service_on_redis(tmp_path: Path, handbook_kb, prefix: str) -> None:
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path, REDIS_URL=REDIS_URL, THREADSAGE_REDIS_PREFIX=prefix,
        DATABASE_URL=None, OPENAI_API_KEY=None, _env_file=None,
    )  # fmt: skip
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        assert isinstance(chat.coordinator, RedisCoordinator)
        talk = Conversation(chat)
        ask = only(await talk.say(AMBIGUOUS))
        answers = await asyncio.gather(talk.click(ask.interrupt_id, 0), talk.click(ask.interrupt_id, 1))
        kinds = sorted(only(replies).kind for replies in answers)
        assert kinds == [ReplyKind.ANSWER, ReplyKind.NOTICE]  # two clicks at once: one run
    redis = Redis.from_url(REDIS_URL)
    assert [key async for key in redis.scan_iter(f"{prefix}lock:*")] == []  # every lock released
    await redis.aclose()
