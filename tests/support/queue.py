"""What the turn queue's tests share: the Redis they use, and a worker's bots reduced to a function."""

from __future__ import annotations

from threadsage.delivery.jobs import Job

REDIS_URL = "redis://127.0.0.1:6379/0"


class Performer:
    """A worker's bots, reduced to a function; the jobs it gave up (apologised for) are kept."""

    def __init__(self, perform) -> None:
        self.perform = perform
        self.given_up: list[str] = []

    async def give_up(self, job: Job) -> None:
        self.given_up.append(job.payload["n"])
