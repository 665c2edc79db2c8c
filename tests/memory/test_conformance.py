"""LangGraph's checkpointer conformance suite (langgraph-checkpoint-conformance) run against our
savers, on the real Postgres (a schema of the test's own) and on a SQLite file.

`OneStatementPut`, our Postgres statement alone, passes all of it. The savers the bot runs
(`PostgresSaver`, `SqliteSaver`) add `StepWrites`, which by design saves neither a run's input
checkpoint (nor the next, the input applied) nor a write to a state channel on its own
(docs/decisions.md, "Every graph step is checkpointed, in one transaction"). They are held to the
rest of the suite: the tests that need what they leave out are named below, and exactly those
fail. SQLite's runs once more inside `caching_latest_checkpoints`, whose cache must give what the
database gives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import CapabilityReport

from threadsage.memory.checkpoints import caching_latest_checkpoints, open_checkpointer, postgres_checkpointer
from threadsage.memory.langgraph_internals import OneStatementPut
from threadsage.settings.environment import Settings

# By capability, the suite's tests that need a run's input checkpoint (`source: "input"`) saved,
# or the put after it: `StepWrites` saves neither, the thread's latest checkpoint and the first
# node's step holding what they hold.
INPUT_NOT_SAVED = {
    "put": {"test_put_roundtrip"},
    "get_tuple": {"test_get_tuple_metadata"},
    "list": {
        "test_list_all",
        "test_list_before",
        "test_list_by_thread",
        "test_list_combined_thread_and_filter",
        "test_list_limit",
        "test_list_limit_plus_before",
        "test_list_metadata_filter_multiple_keys",
        "test_list_metadata_filter_single_key",
        "test_list_metadata_filter_step",
        "test_list_ordering",
    },
}
# ... and those that need a write to a state channel saved on its own: `StepWrites` leaves it to
# its step's checkpoint, which holds it (interrupts, resume values, errors and Sends are saved).
WRITE_LEFT_TO_ITS_CHECKPOINT = {
    "put_writes": {
        "test_put_writes_across_namespaces",
        "test_put_writes_basic",
        "test_put_writes_idempotent",
        "test_put_writes_multiple_tasks",
        "test_put_writes_multiple_writes_same_task",
        "test_put_writes_preserves_channel_and_value",
        "test_put_writes_preserves_task_id",
        "test_put_writes_task_path",
    },
    "get_tuple": {"test_get_tuple_pending_writes"},
    "list": {"test_list_includes_pending_writes"},
    "delete_thread": {"test_delete_thread_removes_writes"},
    "prune": {"test_prune_keep_latest_preserves_writes"},
}
BASE = {"put", "put_writes", "get_tuple", "list", "delete_thread"}  # SQLite's saver has no `aprune`


async def conformance(name: str, open_saver: Callable[[], AbstractAsyncContextManager[Any]]) -> CapabilityReport:
    """The whole suite, a saver from `open_saver` for each capability (as the suite requires)."""

    async def saver() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        async with open_saver() as opened:
            yield opened

    return await validate(checkpointer_test(name=name)(saver))


def failed(report: CapabilityReport) -> dict[str, set[str]]:
    """By capability found in the saver, the names of the suite's tests it failed."""
    return {
        capability: {failure.partition(":")[0] for failure in result.failures}
        for capability, result in report.results.items()
        if result.detected
    }


async def test_one_statement_put_passes_the_whole_suite(pg_url: str) -> None:
    @asynccontextmanager
    async def one_statement_put() -> AsyncIterator[OneStatementPut]:
        async with postgres_checkpointer(pg_url) as ours:  # its tables, set up
            yield OneStatementPut(ours.conn)  # type: ignore[attr-defined]

    report = await conformance("OneStatementPut", one_statement_put)
    assert failed(report) == {capability: set() for capability in {*BASE, "prune"}}


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    return None if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def test_our_savers_pass_the_suite_but_for_what_step_writes_leaves_out(
    database_url: str | None, tmp_path: Path
) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=database_url, _env_file=None)
    report = await conformance("threadsage", lambda: open_checkpointer(settings))
    assert failed(report) == left_out({*BASE, "prune"} if database_url else BASE)


async def test_caching_latest_checkpoints_gives_what_the_database_holds(tmp_path: Path) -> None:
    """The cache is `StepWrites`', the same above either database: SQLite's is the quicker."""
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=None, _env_file=None)
    with caching_latest_checkpoints():
        report = await conformance("threadsage, caching latest checkpoints", lambda: open_checkpointer(settings))
    assert failed(report) == left_out(BASE)


def left_out(capabilities: set[str]) -> dict[str, set[str]]:
    return {c: INPUT_NOT_SAVED.get(c, set()) | WRITE_LEFT_TO_ITS_CHECKPOINT.get(c, set()) for c in capabilities}
