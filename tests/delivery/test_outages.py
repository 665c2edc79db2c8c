"""Outage classification, case by case: which failures the turn queue retries (a service briefly
away) and which end in an apology now (this turn cannot work)."""

from __future__ import annotations

from contextvars import copy_context

import psycopg
import psycopg.errors
import psycopg_pool
import pytest
import redis.exceptions

from threadsage.delivery.current import Delivery, current_delivery
from threadsage.delivery.outages import ServiceUnavailable, first_leaf, is_outage, retried_by_the_queue


def caused(exc: BaseException, cause: BaseException) -> BaseException:
    """`raise exc from cause`."""
    exc.__cause__ = cause
    return exc


def during(exc: BaseException, context: BaseException) -> BaseException:
    """`exc` raised while `context` was being handled."""
    exc.__context__ = context
    return exc


def cycle() -> BaseException:
    first, second = RuntimeError("first"), ValueError("second")
    first.__context__, second.__context__ = second, first
    return first


IS_OUTAGE_CASES = [
    pytest.param(ServiceUnavailable("Redis away"), True, id="our own ServiceUnavailable"),
    pytest.param(psycopg.OperationalError("connection refused"), True, id="Postgres unreachable"),
    pytest.param(psycopg_pool.PoolTimeout("no connection in 30 s"), True, id="Postgres pool exhausted"),
    pytest.param(redis.exceptions.ConnectionError("Error 111"), True, id="Redis unreachable"),
    pytest.param(redis.exceptions.TimeoutError("Timeout reading"), True, id="Redis timed out"),
    pytest.param(ConnectionRefusedError(111, "refused"), True, id="connection refused"),
    pytest.param(ConnectionResetError(104, "reset"), True, id="connection reset"),
    pytest.param(BrokenPipeError(32, "broken pipe"), True, id="broken pipe"),
    pytest.param(TimeoutError(), False, id="a timeout of its own (the model's) is no outage"),
    pytest.param(psycopg.errors.UniqueViolation("duplicate key"), False, id="Postgres answering with an error is up"),
    pytest.param(redis.exceptions.ResponseError("WRONGTYPE"), False, id="Redis answering with an error is up"),
    pytest.param(ValueError("bad input"), False, id="a bug is no outage"),
    pytest.param(caused(RuntimeError("turn failed"), ConnectionRefusedError()), True, id="raised from an outage"),
    pytest.param(during(KeyError("k"), psycopg.OperationalError()), True, id="raised while handling an outage"),
    pytest.param(caused(RuntimeError("a"), during(ValueError("b"), redis.exceptions.ConnectionError())), True,
                 id="an outage two links down the chain"),
    pytest.param(caused(RuntimeError("a"), during(ValueError("b"), KeyError("c"))), False,
                 id="a chain without an outage"),
    pytest.param(cycle(), False, id="a cyclic chain ends"),
]  # fmt: skip


@pytest.mark.parametrize(("exc", "expected"), IS_OUTAGE_CASES)
def test_is_outage(exc: BaseException, expected: bool) -> None:
    assert is_outage(exc) is expected


def retried_under(delivery: Delivery | None, exc: BaseException) -> bool:
    def check() -> bool:
        current_delivery.set(delivery)
        return retried_by_the_queue(exc)

    return copy_context().run(check)


OUTAGE = psycopg.OperationalError("connection refused")

RETRIED_CASES = [
    pytest.param(None, OUTAGE, False, id="outside the queue nothing is retried"),
    pytest.param(Delivery("job-1", attempt=1, final=False), OUTAGE, True, id="an outage with tries left"),
    pytest.param(Delivery("job-1", attempt=4, final=False), OUTAGE, True, id="a later try with tries left"),
    pytest.param(Delivery("job-1", attempt=5, final=True), OUTAGE, False, id="an outage on the last try"),
    pytest.param(Delivery("job-1", attempt=1, final=False), ValueError("bug"), False, id="no outage, tries left"),
    pytest.param(Delivery("job-1", attempt=1, final=False), caused(RuntimeError("x"), OUTAGE), True,
                 id="raised from an outage, tries left"),
]  # fmt: skip


@pytest.mark.parametrize(("delivery", "exc", "expected"), RETRIED_CASES)
def test_retried_by_the_queue(delivery: Delivery | None, exc: BaseException, expected: bool) -> None:
    assert retried_under(delivery, exc) is expected


LEAF = ConnectionRefusedError("the first leaf")

FIRST_LEAF_CASES = [
    pytest.param(LEAF, id="a plain exception is its own leaf"),
    pytest.param(ExceptionGroup("tasks", [LEAF, ValueError("second")]), id="the first of a group"),
    pytest.param(ExceptionGroup("outer", [ExceptionGroup("inner", [LEAF]), KeyError("k")]), id="nested groups"),
    pytest.param(BaseExceptionGroup("base", [LEAF, KeyboardInterrupt()]), id="a base exception group"),
]


@pytest.mark.parametrize("exc", FIRST_LEAF_CASES)
def test_first_leaf(exc: BaseException) -> None:
    assert first_leaf(exc) is LEAF
