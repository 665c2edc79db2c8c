"""What each source's last sync left, in a JSON file per source under the data directory: the
entries of its documents (to tell unchanged ones without re-reading them), and a status — when it
last synced, how many documents it holds, what failed — for logs and the operator.

Losing the file costs one full re-read: ingestion still writes nothing for unchanged content
(its own content hash), and the next sync rebuilds the file.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from threadsage.ingestion.connectors.base import Entry, Known
from threadsage.support.private_files import private_dir, replace_whole


@dataclass
class SourceStatus:
    last_sync: float = 0.0
    seconds: float = 0.0
    documents: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    error: str = ""  # the whole source failed (unreachable, refused credentials)

    def summary(self) -> str:
        if self.error:
            return f"failed: {self.error}"
        line = (
            f"{self.documents} documents ({self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.removed} removed) in {self.seconds:.1f} s"
        )
        return line + (f"; {len(self.failures)} failed" if self.failures else "")


class StateStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def load(self, name: str) -> Known:
        data = self._read(name)
        return Known(entries=data.get("entries", {}), cursor=data.get("cursor", ""))

    def status(self, name: str) -> SourceStatus:
        raw = self._read(name).get("status", {})
        raw["failures"] = [tuple(f) for f in raw.get("failures", [])]
        return SourceStatus(**raw)

    def save(self, name: str, entries: dict[str, Entry], cursor: str, status: SourceStatus) -> None:
        private_dir(self.folder)
        status.last_sync = time.time()
        data = {"entries": entries, "cursor": cursor, "status": asdict(status)}
        replace_whole(self.folder / f"{name}.json", json.dumps(data).encode())  # never a half-written state

    def _read(self, name: str) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / f"{name}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
