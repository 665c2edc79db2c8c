"""What travels through the turn queue, and what a worker does with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Job:
    """One platform delivery as received, for a worker to handle.

    `order_key` names the conversation: jobs with the same key run one after another, in the
    order they were queued (jobs queued at the same instant by two front-ends have no order)."""

    platform: str
    kind: str
    payload: dict[str, Any]
    order_key: str


class Performer(Protocol):
    """What a worker does with jobs: the platforms' bots."""

    async def perform(self, job: Job) -> None:
        """Handle the delivery: answer the turn, record the vote…"""

    async def give_up(self, job: Job) -> None:
        """Tell the person their turn cannot be answered: it stopped every worker that tried."""
