"""What both checkpoint stores share when pruning: the report, the heads a thread is judged by,
and the queries that find them.

A checkpoint's `ts` lives inside the checkpoint itself, so only the latest checkpoint of each
(thread, namespace) is read — found by the primary key (checkpoint ids are time-ordered UUIDv6,
the order the savers themselves use for "latest") in one query joining the per-namespace heads
(an aggregate the primary-key index answers) back to their rows.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


@dataclass
class PruneReport:
    backend: str  # "sqlite" | "postgres"
    dry_run: bool = False
    threads_deleted: int = 0
    checkpoints_deleted: int = 0
    writes_deleted: int = 0
    blobs_deleted: int = 0  # Postgres only: SQLite keeps values inside the checkpoint
    threads_kept: int = 0
    threads_skipped: int = 0  # changed by another transaction meanwhile; pruned next time
    deleted_thread_ids: list[str] = field(default_factory=list, repr=False)

    def summary(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        rows = f"{_n(self.checkpoints_deleted, 'checkpoint')}, {_n(self.writes_deleted, 'write')}"
        if self.backend == "postgres":
            rows += f", {_n(self.blobs_deleted, 'blob')}"
        line = (
            f"{verb} {_n(self.threads_deleted, 'abandoned thread')} and {rows}; "
            f"kept {_n(self.threads_kept, 'live thread')} at the latest checkpoint"
        )
        if self.threads_skipped:
            line += f"; {_n(self.threads_skipped, 'thread')} skipped (changed meanwhile, pruned next time)"
        return line + (" (dry run: nothing deleted)" if self.dry_run else "")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass
class Head:
    """The latest checkpoint of one (thread, namespace)."""

    namespace: str
    checkpoint_id: str
    keep_from: str  # the oldest checkpoint id kept: the head, or its parent before format v4
    ts: datetime | None
    count: int  # checkpoints in this namespace when scanned


class Pruner(Protocol):
    """One store's way of pruning, a thread at a time (see `threadsage.app.retention`)."""

    name: str

    def session(self) -> AbstractAsyncContextManager[None]:
        """The context the other methods run in."""

    async def heads(self) -> dict[str, dict[str, Head]]:
        """The heads of every thread, by thread id and namespace."""

    async def delete_thread(self, thread_id: str, heads: dict[str, Head], report: PruneReport, dry_run: bool) -> None:
        """Delete a thread judged abandoned by `heads`, unless it has changed since."""

    async def keep_latest(self, thread_id: str, heads: dict[str, Head], report: PruneReport, dry_run: bool) -> None:
        """Delete all but the latest checkpoint (and what it needs) of each namespace."""


def head_of(namespace: str, checkpoint_id: str, parent: str | None, count: int, ts: Any, version: Any) -> Head:
    old_format = isinstance(version, int) and version < 4
    return Head(namespace, checkpoint_id, parent if old_format and parent else checkpoint_id, _parse_ts(ts), count)


def unchanged(current: list[tuple[str, str]], heads: dict[str, Head]) -> bool:
    """Whether a thread's heads are still the ones it was judged by (nothing new came in)."""
    return dict(current) == {ns: h.checkpoint_id for ns, h in heads.items()}


def _parse_ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)
