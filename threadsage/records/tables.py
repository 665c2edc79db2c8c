"""Tables of our own beside the checkpoints, on the checkpointer's own connection: the aiosqlite
connection of the SQLite file, or the psycopg pool of Postgres. One place knows the two dialects'
differences (placeholders, row shapes, commits), so that each store states only its SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg.rows import tuple_row

from threadsage.memory.checkpoints import schema_lock
from threadsage.memory.langgraph_internals import connection, on_sqlite

Row = tuple[Any, ...]


class Tables:
    """SQL on the checkpointer's connection. Statements write `{p}` where a parameter goes."""

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self._conn: Any = connection(checkpointer)
        self.sqlite = on_sqlite(checkpointer)
        self.p = "?" if self.sqlite else "%s"

    async def create(self, statements: Sequence[str]) -> None:
        """Create tables and indexes (`IF NOT EXISTS`); on Postgres one process at a time, as
        processes starting together would otherwise race."""
        if self.sqlite:
            for sql in statements:
                await self.execute(sql)
            return
        async with schema_lock(self._conn):
            for sql in statements:
                await self.execute(sql)

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        sql = sql.format(p=self.p)
        if self.sqlite:
            cursor = await self._conn.execute(sql, tuple(params))
            await self._conn.commit()
            return max(int(cursor.rowcount), 0)
        async with self._conn.connection() as conn:
            cursor = await conn.execute(sql, tuple(params))
            return max(int(cursor.rowcount), 0)

    async def fetch(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        """The rows of a query, as tuples in both dialects."""
        sql = sql.format(p=self.p)
        if self.sqlite:
            async with self._conn.execute(sql, tuple(params)) as cursor:
                return [tuple(row) for row in await cursor.fetchall()]
        async with self._conn.connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            await cursor.execute(sql, tuple(params))  # tuples: a dict row would merge same-named columns
            return list(await cursor.fetchall())
