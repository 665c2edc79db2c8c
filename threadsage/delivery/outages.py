"""Which failures mean "a service we depend on is briefly away" (worth retrying the turn later)
rather than "this turn cannot work" (worth an apology now)."""

from __future__ import annotations

import psycopg
import psycopg_pool
import redis.exceptions

from threadsage.delivery.current import current_delivery


class ServiceUnavailable(RuntimeError):
    """A turn stopped for want of Postgres, Redis or the network; the queue will retry it."""


_OUTAGES = (
    ServiceUnavailable,
    psycopg.OperationalError,
    psycopg_pool.PoolTimeout,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionError,
)


def is_outage(exc: BaseException) -> bool:
    """True when `exc`, or anything it was raised from, is a lost or refused connection."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, _OUTAGES):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def retried_by_the_queue(exc: BaseException) -> bool:
    """Whether the turn queue will retry after `exc`: an outage, and not the delivery's last try
    (outside the queue nothing is retried)."""
    delivery = current_delivery.get()
    return delivery is not None and not delivery.final and is_outage(exc)


def first_leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, for a message that says something."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
