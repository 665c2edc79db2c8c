"""Console sessions, kept server-side so that signing out ends one: a random id in the browser's
cookie, and in the database (the checkpointer's: SQLite or Postgres, so every process that serves
the console sees the same sessions, and a restart signs nobody out) only its HMAC under the
console token with an expiry. A copy of the table opens no session, and changing the token ends
every one. A new id at every sign-in; the one it replaces, expired ones and a signed-out one are
deleted."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.records.tables import Tables

TABLE = "threadsage_console_sessions"
LIFETIME = 7 * 24 * 3600
_CREATE = [
    f"CREATE TABLE IF NOT EXISTS {TABLE} (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_expires ON {TABLE} (expires_at)",
]
_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32): anything else is no session


class Sessions:
    def __init__(self, checkpointer: BaseCheckpointSaver[Any], token: str, lifetime: int = LIFETIME) -> None:
        self._tables = Tables(checkpointer)
        self._key = token.encode()
        self.lifetime = lifetime

    async def setup(self) -> None:
        await self._tables.create(_CREATE)

    async def open(self, replacing: str = "", now: float | None = None) -> str:
        """A new session's id; the session `replacing` names (the browser's previous) ends."""
        now = time.time() if now is None else now
        await self._tables.execute(
            f"DELETE FROM {TABLE} WHERE expires_at <= {{p}} OR id = {{p}}", (now, self._id(replacing))
        )
        session = secrets.token_urlsafe(32)
        await self._tables.execute(
            f"INSERT INTO {TABLE} (id, expires_at) VALUES ({{p}}, {{p}})", (self._id(session), int(now + self.lifetime))
        )
        return session

    async def valid(self, session: str, now: float | None = None) -> bool:
        if not _SHAPE.fullmatch(session):
            return False
        now = time.time() if now is None else now
        found = await self._tables.fetch(
            f"SELECT 1 FROM {TABLE} WHERE id = {{p}} AND expires_at > {{p}}", (self._id(session), now)
        )
        return bool(found)

    async def close(self, session: str) -> None:
        if _SHAPE.fullmatch(session):
            await self._tables.execute(f"DELETE FROM {TABLE} WHERE id = {{p}}", (self._id(session),))

    async def count(self) -> int:
        [(n,)] = await self._tables.fetch(f"SELECT COUNT(*) FROM {TABLE}")
        return int(n)

    def _id(self, session: str) -> str:
        return hmac.new(self._key, session.encode(), hashlib.sha256).hexdigest()
