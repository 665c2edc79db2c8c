"""What a source connector is: something that, given what was synced last time, says what is new
or changed (as documents), what is unchanged (not re-read) and what failed.

Adding a source type (Google Drive, SharePoint) is one module with a class like these and one
line in the registry (the package's `__init__`). The sync engine (`engine.py`) does the rest: indexing, pruning, the
state kept between syncs, reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from threadsage.adapters.documents.loaders import Document
from threadsage.ingestion.spec import SourceSpec

# What a connector remembers of one document between syncs, JSON-serialisable. "version" is the
# cheap change token (mtime and size, ETag, version.number, blob id); the rest is its own.
Entry = dict[str, Any]


@dataclass
class Known:
    """What the last sync left: an entry per document key (the document's `source`), and the
    connector's cursor for the whole source (a git commit), if it keeps one."""

    entries: Mapping[str, Entry] = field(default_factory=dict)
    cursor: str = ""


@dataclass
class Scan:
    """One connector pass. `complete` is False when the listing itself failed part-way: then no
    document is pruned, as one missing from the listing may well still exist."""

    documents: list[tuple[Document, Entry]] = field(default_factory=list)
    unchanged: dict[str, Entry] = field(default_factory=dict)
    failed: list[tuple[str, str]] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)  # keys known to be deleted upstream (a 404 on fetch)
    complete: bool = True
    cursor: str = ""


class Connector(Protocol):
    spec: SourceSpec

    async def scan(self, known: Known) -> Scan: ...


def cited_source(spec: SourceSpec, relative: str, fallback: str) -> str:
    """A document's identity, which citations turn into a link when it is a URL: the source's
    base_url + the document's relative path when one is set, else `fallback`."""
    if not spec.base_url:
        return fallback
    return spec.base_url.rstrip("/") + "/" + relative.lstrip("/")
