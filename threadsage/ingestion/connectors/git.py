"""Markdown documents of a git repository (`*.md` under `path`), from a clone kept under the data
directory and refreshed with a shallow fetch. Nothing is re-read while the commit is the same;
after a new commit only the files whose blob changed are. The `git` command runs in a thread.

A repository is not trusted: nothing under `.git/` is read (its config may hold the remote's
credentials), a tracked symbolic link is followed only to a tracked file of the work tree, and the
configured branch is passed after `--` (a "branch" such as `--upload-pack=…` is no option)."""

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
SYMLINK = "120000"  # a tree entry's mode for a symbolic link


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
        tree = self._tree()
        files = {relative for relative, (mode, _) in tree.items() if mode != SYMLINK}
        for relative, (mode, blob) in tree.items():
            if not self._wanted(relative):
                continue
            key = cited_source(self.spec, relative, f"{self.spec.name}:{relative}")
            if known.entries.get(key, {}).get("version") == blob:
                scan.unchanged[key] = {"version": blob}
                continue
            try:
                if mode == SYMLINK and not self._to_a_tracked_file(relative, files):
                    raise UnreadableDocument("symbolic link to a file the repository does not track")
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
        branch = [f"--branch={self.spec.branch}"] if self.spec.branch else []
        if not (self.checkout / ".git").is_dir():
            self.checkout.parent.mkdir(parents=True, exist_ok=True)
            self._git("clone", "--quiet", "--depth", "1", *branch, "--", self.spec.url or "", str(self.checkout))
        else:
            self._git("fetch", "--quiet", "--depth", "1", "origin", "--", self.spec.branch or "HEAD", cwd=self.checkout)
            self._git("reset", "--quiet", "--hard", "FETCH_HEAD", cwd=self.checkout)
        return self._git("rev-parse", "HEAD", cwd=self.checkout).strip()

    def _tree(self) -> dict[str, tuple[str, str]]:
        """The blobs of HEAD: path -> (mode, blob id)."""
        tree = {}
        for line in self._git("ls-tree", "-r", "-z", "HEAD", cwd=self.checkout).split("\0"):
            meta, _, relative = line.partition("\t")
            if relative and meta.split()[1] == "blob":
                tree[relative] = (meta.split()[0], meta.split()[2])
        return tree

    def _wanted(self, relative: str) -> bool:
        """A Markdown file under the configured path, not in a `.git` folder."""
        path = Path(relative)
        inside = not self.under or relative == self.under or relative.startswith(self.under + "/")
        return inside and ".git" not in path.parts and path.suffix.lower() in MARKDOWN_SUFFIXES

    def _to_a_tracked_file(self, relative: str, files: set[str]) -> bool:
        """Whether a tracked symbolic link leads (all links followed) to a tracked file."""
        root = self.checkout.resolve()
        target = (self.checkout / relative).resolve()
        return target.is_relative_to(root) and target.relative_to(root).as_posix() in files

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
