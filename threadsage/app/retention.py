"""Retention: prune the checkpoints that pile up with every step of every conversation.

`prune(checkpointer, older_than)` sorts threads by their latest checkpoint:

* abandoned — the latest checkpoint is older than `older_than`: the thread goes completely
  (checkpoints, writes and, on Postgres, blobs, in every namespace), as `adelete_thread` would;
* live — everything else: each (thread, namespace) keeps its latest checkpoint with its pending
  writes (a paused clarification's interrupt is one) and, on Postgres, the blobs that checkpoint
  references; older checkpoints, their writes and the blobs only they used go.

Feedback (`threadsage_feedback`) is left alone: it is keyed by session key, not thread id, and a
vote outlives the conversation it was given in. The record of turns (`threadsage_turns`, for the
operator console) has a retention of its own, `THREADSAGE_QUESTION_RETENTION_DAYS`, applied by the
same periodic prune.

Each thread is judged by the `ts` of its latest checkpoint per namespace, and pruned in its own
short transaction: what a turn writes meanwhile is never touched, and an abandoned thread is
checked again in the transaction and spared if it has come back to life. How each store does it:
`pruning_sqlite.py` (our own statements) and `pruning_postgres.py` (the saver's own `aprune`).

With `dry_run=True` the same transactions run and are rolled back: the report is exact.
"""

from __future__ import annotations

import asyncio
import logging
import re
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.memory.langgraph_internals import on_sqlite
from threadsage.memory.pruning.base import Pruner, PruneReport
from threadsage.memory.pruning.postgres import PostgresPruner
from threadsage.memory.pruning.sqlite import SQLitePruner
from threadsage.records.turns import QuestionStore
from threadsage.settings.sections import StorageSettings

log = logging.getLogger(__name__)

_AGE = re.compile(r"^\s*(\d+)\s*([dhm])\s*$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_age(text: str) -> timedelta:
    """'30d', '12h', '90m' → a timedelta; anything else (or zero) → ValueError."""
    match = _AGE.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"expected a whole number of days, hours or minutes such as 30d, 12h or 90m, not {text!r}")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


async def prune(
    checkpointer: BaseCheckpointSaver[Any],
    older_than: timedelta,
    now: datetime | None = None,
    dry_run: bool = False,
) -> PruneReport:
    """Delete abandoned threads, and all but the latest checkpoint of live ones (module doc)."""
    if older_than <= timedelta(0):
        raise ValueError("older_than must be positive")
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    cutoff = now - older_than
    backend = _pruner(checkpointer)
    report = PruneReport(backend=backend.name, dry_run=dry_run)
    async with backend.session():
        threads = await backend.heads()
        for thread_id, heads in threads.items():
            stamps = [h.ts for h in heads.values() if h.ts is not None]
            if len(stamps) < len(heads):
                log.warning("thread %s has a checkpoint without a timestamp: kept as is", thread_id)
                report.threads_kept += 1
                continue
            if max(stamps) < cutoff:
                await backend.delete_thread(thread_id, heads, report, dry_run)
            else:
                report.threads_kept += 1
                if any(h.count > 1 for h in heads.values()):  # else nothing to prune
                    await backend.keep_latest(thread_id, heads, report, dry_run)
    return report


async def prune_periodically(
    checkpointer: BaseCheckpointSaver[Any],
    settings: StorageSettings,
    stop: asyncio.Event,
    questions: QuestionStore | None = None,
) -> None:
    """Prune at once, then every `THREADSAGE_PRUNE_EVERY_HOURS`, until `stop` is set: checkpoints
    when `THREADSAGE_PRUNE_OLDER_THAN_DAYS` is set, and the recorded turns (`questions`) older
    than `THREADSAGE_QUESTION_RETENTION_DAYS`. Returns at once when neither is on. A failed run
    is logged and retried at the next tick."""
    checkpoints_on = settings.prune_older_than_days > 0
    questions_on = questions is not None and settings.question_retention_days > 0
    if not checkpoints_on:
        log.info("periodic checkpoint pruning is off (THREADSAGE_PRUNE_OLDER_THAN_DAYS=0)")
    if not (checkpoints_on or questions_on):
        return
    every = settings.prune_every_hours * 3600
    if checkpoints_on:
        log.info(
            "pruning checkpoints every %g h: sessions idle over %g days are deleted",
            settings.prune_every_hours,
            settings.prune_older_than_days,
        )
    while not stop.is_set():
        try:
            if checkpoints_on:
                report = await prune(checkpointer, timedelta(days=settings.prune_older_than_days))
                log.info("checkpoint pruning: %s", report.summary())
            if questions is not None and questions_on:
                gone = await questions.prune(settings.question_retention_days)
                log.info("recorded turns over %g days old deleted: %d", settings.question_retention_days, gone)
        except Exception:
            log.exception("pruning failed; trying again in %g h", settings.prune_every_hours)
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)


def _pruner(checkpointer: BaseCheckpointSaver[Any]) -> Pruner:
    if on_sqlite(checkpointer):
        return SQLitePruner(checkpointer)
    return PostgresPruner(checkpointer)
