"""The queue delivery the current task works on, for the code further in that must tell a first
try from a redelivery (claims, retries) without being handed it through every call."""

from __future__ import annotations

import secrets
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Delivery:
    """The queue delivery the current task works on (see `threadsage.delivery.queue`).

    A turn handed to a second worker after the first died carries the same delivery id, so the
    claims the first one took are its own and the turn is finished rather than taken for a
    duplicate. `final` is False while the queue may still retry the delivery: a service outage
    then propagates (to be retried) instead of ending in an apology."""

    id: str
    attempt: int = 1
    final: bool = True


current_delivery: ContextVar[Delivery | None] = ContextVar("threadsage_delivery", default=None)


def redelivered() -> bool:
    """Whether the current task works on a delivery the queue has handed out before: what an
    earlier try did (posted, streamed, claimed) may then be there to find."""
    delivery = current_delivery.get()
    return delivery is not None and delivery.attempt > 1


def claim_owner() -> str:
    """Who takes a claim: the current delivery, or a one-off owner outside the queue."""
    delivery = current_delivery.get()
    return delivery.id if delivery is not None else secrets.token_hex(8)
