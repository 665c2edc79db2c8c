"""The record of ingestion runs (`threadsage ingest`), beside the checkpoints, for the console's
knowledge-base view: when, what changed, and which files failed and why. The newest 100 are kept."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.ingestion.pipeline import IngestReport
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.tables import Tables
from threadsage.settings.sections import StorageSettings

KEEP = 100
_CREATE = [
    """CREATE TABLE IF NOT EXISTS threadsage_ingestions (
    at BIGINT NOT NULL,
    summary TEXT NOT NULL,
    failures TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS threadsage_ingestions_at ON threadsage_ingestions (at)",
]


class IngestionLog:
    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self.tables = Tables(checkpointer)

    async def setup(self) -> None:
        await self.tables.create(_CREATE)

    async def record(self, summary: str, failures: list[tuple[str, str]], now: float | None = None) -> None:
        at = int((now if now is not None else time.time()) * 1000)
        await self.tables.execute(
            "INSERT INTO threadsage_ingestions (at, summary, failures) VALUES ({p}, {p}, {p})",
            (at, summary, json.dumps(failures[:50])),
        )
        oldest = await self.tables.fetch(
            f"SELECT at FROM threadsage_ingestions ORDER BY at DESC LIMIT 1 OFFSET {KEEP - 1}"
        )
        if oldest:
            await self.tables.execute("DELETE FROM threadsage_ingestions WHERE at < {p}", (oldest[0][0],))

    async def latest(self, limit: int = 10) -> list[dict[str, Any]]:
        rows = await self.tables.fetch(
            f"SELECT at, summary, failures FROM threadsage_ingestions ORDER BY at DESC LIMIT {int(limit)}"
        )
        return [{"at": at, "summary": summary, "failures": json.loads(failures)} for at, summary, failures in rows]


def record_run(settings: StorageSettings, report: IngestReport) -> None:
    """Record an ingestion run in the database the bot uses (Postgres, or the SQLite file under
    the data dir), for the operator console."""

    async def record() -> None:
        async with open_checkpointer(settings) as checkpointer:
            log = IngestionLog(checkpointer)
            await log.setup()
            await log.record(report.summary(), report.skipped)

    asyncio.run(record())
