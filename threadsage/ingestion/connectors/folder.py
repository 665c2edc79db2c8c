"""A folder of documents. A file's version is its modification time and size, so an unchanged
file is not re-read; one whose bytes did not change after all writes nothing (ingestion compares
content hashes). The sync service also watches the folder, for a saved file to be searchable
within seconds (`watch`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

from watchfiles import awatch

from threadsage.adapters.documents.loaders import discover_files, load_file
from threadsage.adapters.documents.reading import parse_within_budget
from threadsage.adapters.documents.sections import UnreadableDocument
from threadsage.ingestion.connectors.base import Known, Scan, cited_source
from threadsage.ingestion.spec import SourceSpec

log = logging.getLogger(__name__)


class FolderConnector:
    def __init__(self, spec: SourceSpec) -> None:
        self.spec = spec
        self.root = Path(spec.path or ".")

    async def scan(self, known: Known) -> Scan:
        return await asyncio.to_thread(self._scan, known)

    def _scan(self, known: Known) -> Scan:
        if not self.root.is_dir():
            raise FileNotFoundError(f"no such folder: {self.root}")
        scan = Scan()
        files, _unsupported = discover_files([self.root])
        for file, root in files:
            relative = file.relative_to(root).as_posix()
            key = cited_source(self.spec, relative, str(file))
            try:
                stat = file.stat()
                version = f"{stat.st_mtime_ns}:{stat.st_size}"
                if known.entries.get(key, {}).get("version") == version:
                    scan.unchanged[key] = {"version": version}
                    continue
                document = load_file(file, root, self.spec.category, self.spec.base_url or "", parse_within_budget)
            except (OSError, UnreadableDocument) as exc:
                scan.failed.append((key, str(exc) or type(exc).__name__))
                continue
            scan.documents.append((replace(document, source=key), {"version": version}))
        return scan

    async def watch(self, stop: asyncio.Event) -> AsyncIterator[None]:
        """Yield after each batch of changes in the folder, until `stop`."""
        async for _changes in awatch(self.root, stop_event=stop, debounce=300, recursive=True):
            yield
