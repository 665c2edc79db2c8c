"""Which failures the turn queue retries: outages (however deeply wrapped) and only while the
delivery has tries left."""

from __future__ import annotations

import psycopg
import psycopg_pool
import pytest
import redis.exceptions

from threadsage.delivery.current import Delivery, current_delivery
from threadsage.delivery.outages import ServiceUnavailable, first_leaf, is_outage, retried_by_the_queue


def raised_from(exc: BaseException, cause: BaseException) -> BaseException:
    """`exc` as `raise exc from cause` leaves it."""
    exc.__cause__ = cause
    return exc


def raised_during(exc: BaseException, context: BaseException) -> BaseException:
    """`exc` as raised while `context` was being handled."""
    exc.__context__ = context
    return exc


@pytest.mark.parametrize(
    ("exc", "outage"),
    [
        (ServiceUnavailable("redis down"), True),
        (psycopg.OperationalError("connection refused"), True),
        (psycopg_pool.PoolTimeout("no connection in 30 s"), True),
        (redis.exceptions.ConnectionError("refused"), True),
        (redis.exceptions.TimeoutError("timed out"), True),
        (ConnectionRefusedError(111, "refused"), True),
        (raised_from(RuntimeError("graph failed"), psycopg.OperationalError("server closed")), True),
        (raised_during(KeyError("state"), redis.exceptions.ConnectionError("reset")), True),
        (ValueError("bad answer"), False),
        (psycopg.errors.UniqueViolation("duplicate key"), False),
        (redis.exceptions.ResponseError("WRONGTYPE"), False),
        (TimeoutError("session stayed locked"), False),
        (raised_from(RuntimeError("graph failed"), ValueError("bad")), False),
    ],
)
def test_is_outage(exc: BaseException, outage: bool) -> None:
    assert is_outage(exc) is outage


def test_a_cycle_of_causes_ends() -> None:
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert not is_outage(first)


@pytest.mark.parametrize(
    ("delivery", "exc", "retried"),
    [
        (None, ServiceUnavailable("down"), False),  # outside the queue nothing is retried
        (Delivery("job", attempt=1, final=False), ServiceUnavailable("down"), True),
        (Delivery("job", attempt=3, final=True), ServiceUnavailable("down"), False),  # the last try
        (Delivery("job", attempt=1, final=False), ValueError("bug"), False),
    ],
)
def test_retried_by_the_queue(delivery: Delivery | None, exc: BaseException, retried: bool) -> None:
    token = current_delivery.set(delivery)
    try:
        assert retried_by_the_queue(exc) is retried
    finally:
        current_delivery.reset(token)


def test_first_leaf_of_nested_groups() -> None:
    leaf = ConnectionError("refused")
    group = BaseExceptionGroup("outer", [ExceptionGroup("inner", [leaf, ValueError()]), KeyError()])
    assert first_leaf(group) is leaf
    assert first_leaf(leaf) is leaf
