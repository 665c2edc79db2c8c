"""Meaning vectors kept on disk, so that a passage is embedded once — read ahead by the running
bot, or by the first question that reads it — and not again by the next, nor after a restart.

A SQLite file beside the knowledge base (`<data dir>/meaning/vectors.sqlite3`), keyed by the
digest of the model's name and the text: a changed passage is a new key, a model swapped for
another never reads the old one's vectors. Several processes may share it (WAL: `threadsage
ingest` writes while the bot reads); a write that finds it locked is left out, to be made again
(a cache, not a record: nothing is lost).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from threadsage.support.private_files import private_dir

log = logging.getLogger(__name__)

FILE = "vectors.sqlite3"
_ASKED = 500  # keys asked for in one query (SQLite's limit on parameters is higher)


def key_of(model: str, text: str) -> bytes:
    return hashlib.blake2b(f"{model}\n{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


class VectorStore:
    def __init__(self, folder: Path, dim: int) -> None:
        private_dir(folder.parent)  # the data directory, when nothing made it yet
        private_dir(folder)
        self.folder = folder
        self.dim = dim
        self._db = sqlite3.connect(folder / FILE, check_same_thread=False, isolation_level=None, timeout=2.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID"
        )

    def get(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for key, blob in self._select("key, vector", keys):
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape == (self.dim,):
                found[key] = vector
        return found

    def has(self, keys: Sequence[bytes]) -> set[bytes]:
        """Which of `keys` are kept (their vectors not read)."""
        return {key for (key,) in self._select("key", keys)}

    def _select(self, columns: str, keys: Sequence[bytes]) -> Iterator[tuple[Any, ...]]:
        """`columns` of the rows of `keys`, `_ASKED` keys a query."""
        for start in range(0, len(keys), _ASKED):
            part = keys[start : start + _ASKED]
            marks = ",".join("?" * len(part))
            yield from self._db.execute(f"SELECT {columns} FROM vectors WHERE key IN ({marks})", part)

    def put(self, rows: Iterable[tuple[bytes, np.ndarray]]) -> None:
        values = [(key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in rows]
        try:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", values)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # locked by another process for too long: made again later
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            log.info("meaning vectors not kept this time: %s", exc)

    def close(self) -> None:
        self._db.close()
