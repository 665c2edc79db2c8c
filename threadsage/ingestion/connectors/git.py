"""Markdown documents of a git repository (`*.md` under `path`), from a clone kept under the data
directory and refreshed with a shallow fetch. Nothing is re-read while the commit is the same;
after a new commit only the files whose blob changed are. The `git` command runs in a thread."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import replace
from pathlib import Path

from threadsage.adapters.documents.loaders import MARKDOWN_SUFFIXES, load_file
from threadsage.adapters.documents.sections import UnreadableDocument
from threadsage.ingestion.connectors.base import Known, Scan, cited_source
from threadsage.ingestion.spec import SourceSpec

GIT_TIMEOUT = 300


class GitConnector:
    def __init__(self, spec: SourceSpec, checkouts: Path) -> None:
        self.spec = spec
        self.checkout = checkouts / spec.name
        self.under = (spec.path or "").strip("/")

    async def scan(self, known: Known) -> Scan:
        return await asyncio.to_thread(self._scan, known)

    def _scan(self, known: Known) -> Scan:
        commit = self._update()
        if commit == known.cursor:
            return Scan(unchanged=dict(known.entries), cursor=commit)
        scan = Scan(cursor=commit)
        listing = self._git("ls-tree", "-r", "HEAD", "--", self.under or ".", cwd=self.checkout)
        for line in listing.splitlines():
            meta, _, relative = line.partition("\t")
            kind, blob = meta.split()[1:3]
            if kind != "blob" or Path(relative).suffix.lower() not in MARKDOWN_SUFFIXES:
                continue
            key = cited_source(self.spec, relative, f"{self.spec.name}:{relative}")
            if known.entries.get(key, {}).get("version") == blob:
                scan.unchanged[key] = {"version": blob}
                continue
            try:
                document = load_file(
                    self.checkout / relative, self.checkout, self.spec.category, self.spec.base_url or ""
                )
            except UnreadableDocument as exc:
                scan.failed.append((key, str(exc)))
                continue
            scan.documents.append((replace(document, source=key), {"version": blob}))
        return scan

    def _update(self) -> str:
        """Clone once, then fetch the branch's newest commit; the commit checked out."""
        branch = ["--branch", self.spec.branch] if self.spec.branch else []
        if not (self.checkout / ".git").is_dir():
            self.checkout.parent.mkdir(parents=True, exist_ok=True)
            self._git("clone", "--quiet", "--depth", "1", *branch, "--", self.spec.url or "", str(self.checkout))
        else:
            self._git("fetch", "--quiet", "--depth", "1", "origin", self.spec.branch or "HEAD", cwd=self.checkout)
            self._git("reset", "--quiet", "--hard", "FETCH_HEAD", cwd=self.checkout)
        return self._git("rev-parse", "HEAD", cwd=self.checkout).strip()

    @staticmethod
    def _git(*args: str, cwd: Path | None = None) -> str:
        try:
            done = subprocess.run(
                ["git", "-c", "protocol.file.allow=always", *args],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"git {args[0]}: {exc}") from None
        if done.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {done.stderr.strip()[:300]}")
        return done.stdout
