"""`threadsage ingest` beside a running bot on Milvus Lite, whose file only one process may open:
the bot owns an inbox under the data directory, the command leaves its request there and waits
for the bot's answer, instead of failing on the lock.

A request is a JSON file written whole (rename), answered by a `.result.json` beside it."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from threadsage.ingestion.pipeline import IngestReport
from threadsage.support.private_files import private_dir, replace_whole

REQUEST = ".request.json"
RESULT = ".result.json"


class HandOverFailed(RuntimeError):
    """The running bot did not do the ingest; the message says why and what to do."""


def hand_over(
    data_dir: Path, paths: list[Path], category: str, prune: bool, rebuild: bool, base_url: str = ""
) -> IngestReport:
    """Have the bot running on `data_dir` ingest `paths`, and wait for its report."""
    if rebuild:
        raise HandOverFailed(f"a threadsage bot is running on {data_dir}: stop it to --rebuild")
    inbox = IngestInbox(data_dir)
    request = {"paths": [str(p.absolute()) for p in paths], "category": category, "prune": prune, "base_url": base_url}
    result = inbox.wait(inbox.submit(request))
    if result is None:
        raise HandOverFailed("the bot stopped before doing the ingest: run `threadsage ingest` again")
    if "error" in result:
        raise HandOverFailed(f"the bot could not ingest: {result['error']}")
    return IngestReport(**result["report"])


class IngestInbox:
    def __init__(self, data_dir: Path) -> None:
        self.folder = data_dir / "ingest-requests"
        self._owner = self.folder / "owner.pid"

    # --- the running bot -----------------------------------------------------------------

    def open(self) -> None:
        private_dir(self.folder)
        self._owner.write_text(str(os.getpid()), encoding="utf-8")

    def close(self) -> None:
        if self.running_bot() == os.getpid():
            self._owner.unlink(missing_ok=True)

    def requests(self) -> list[tuple[str, dict[str, Any]]]:
        """The waiting requests, oldest first (a malformed one is answered with an error)."""
        waiting = []
        for file in sorted(self.folder.glob(f"*{REQUEST}"), key=lambda f: f.stat().st_mtime):
            ident = file.name.removesuffix(REQUEST)
            try:
                waiting.append((ident, json.loads(file.read_text(encoding="utf-8"))))
            except (OSError, ValueError) as exc:
                self.answer(ident, {"ok": False, "error": f"unreadable request: {exc}"})
        return waiting

    def answer(self, ident: str, result: dict[str, Any]) -> None:
        replace_whole(self.folder / f"{ident}{RESULT}", json.dumps(result).encode())
        (self.folder / f"{ident}{REQUEST}").unlink(missing_ok=True)

    # --- the command ---------------------------------------------------------------------

    def running_bot(self) -> int | None:
        """The pid of the live bot that owns this inbox, if any."""
        try:
            pid = int(self._owner.read_text(encoding="utf-8").strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    def submit(self, request: dict[str, Any]) -> str:
        ident = uuid.uuid4().hex
        replace_whole(self.folder / f"{ident}{REQUEST}", json.dumps(request).encode())
        return ident

    def wait(self, ident: str, poll: float = 0.2) -> dict[str, Any] | None:
        """The bot's answer; None if the bot stopped without giving one."""
        result = self.folder / f"{ident}{RESULT}"
        while not result.exists():
            if self.running_bot() is None:
                (self.folder / f"{ident}{REQUEST}").unlink(missing_ok=True)
                return None
            time.sleep(poll)
        answer: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
        result.unlink(missing_ok=True)
        return answer
