"""Reading documents within a budget of time and memory, enforced from outside the parser.

A file's cost is not its size: a 160 KB PDF of 1,000 pages sharing one content stream of
900,000 empty `() Tj` operators takes pypdf hours, a 40 KB Word file of 10,000 paragraphs tens
of seconds. Parsed in a thread of the bot, six of them held every thread of the default pool (and
the interpreter) and nobody else got an answer. So files are parsed in a small pool of reader
processes (`reader_process`): each caps its own address space, and one that has not answered
within the deadline is killed and replaced. The bot waits on a pipe, holding neither the event
loop, nor the default thread pool, nor the interpreter.

One pool per process (`shared_pool`), its budget set from the settings by the composition root
(`app/runtime.set_reading_budget`); both the chat service (files sent with a question) and the
sync (files in sources) use it.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import queue
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from threadsage.adapters.documents.images import ImageTooLarge, NoTextInImage
from threadsage.adapters.documents.loaders import DocumentTooLong
from threadsage.adapters.documents.sections import Section, UnreadableDocument

if TYPE_CHECKING:
    from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)
T = TypeVar("T")
IMAGE_MEMORY_MB = 1536
STARTUP_SECONDS = 60.0  # for a reader to load the parsers, on a busy machine
_HOME = str(Path(__file__).resolve().parents[3])  # where this `threadsage` is imported from: the readers' too


class TooCostly(UnreadableDocument):
    """A file whose reading overran the time or memory budget: its reader was stopped."""


class ReadersBusy(Exception):
    """Every reader stayed busy for as long as a file may take: try again later."""


@dataclass(frozen=True)
class Budget:
    seconds: float = 20.0  # a file's reading, from hand-over to answer
    memory_mb: int = 512  # a reader's address space (the interpreter and the parsers take ~160 MB)
    readers: int = 2
    images: bool = False  # readers that load the OCR engine before their first file (`for_images`)

    @classmethod
    def of(cls, settings: AccessSettings) -> Budget:
        return cls(settings.file_read_seconds, settings.file_read_memory_mb, settings.file_readers)

    def for_images(self) -> Budget:
        """The budget of the readers that read images: the same time and number, the address space
        the OCR needs (its ONNX runtime reserves ~1.2 GB for a screenshot; 300 MB resident), and
        the OCR engine loaded as the reader starts, so that an image's time is its own."""
        return replace(self, memory_mb=max(self.memory_mb, IMAGE_MEMORY_MB), images=True)


class _Reader:
    """One reader process, reading one file at a time."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        module = "threadsage.adapters.documents.reader_process"
        command = [sys.executable, "-m", module, str(budget.memory_mb), *(["images"] if budget.images else [])]
        paths = [_HOME, os.environ.get("PYTHONPATH", "")]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)},
        )
        if not self._line(time.monotonic() + STARTUP_SECONDS).endswith(b"\n"):  # a file's time is its own
            self.kill()
            raise ReadersBusy("a reader process did not start")

    def read(self, data: bytes, name: str) -> dict[str, Any]:
        """The reader's answer, or `TooCostly` (the process is then gone) when it overran."""
        assert self.process.stdin is not None and self.process.stdout is not None
        deadline = time.monotonic() + self.budget.seconds
        try:
            header = json.dumps({"name": name, "size": len(data)}).encode() + b"\n"
            self.process.stdin.write(header + data)
            self.process.stdin.flush()
            line = self._line(deadline)
        except OSError:  # it died while being given the file (over its memory limit, say)
            line = b""
        if not line.endswith(b"\n"):
            self.kill()
            overran = time.monotonic() >= deadline
            raise TooCostly(f"took longer than {self.budget.seconds:g} s" if overran else "too much memory")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _line(self, deadline: float) -> bytes:
        """The answer line, or what came of it by the deadline (b"" if the process ended)."""
        assert self.process.stdout is not None
        fd, got = self.process.stdout.fileno(), bytearray()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while (left := deadline - time.monotonic()) > 0 and selector.select(left):
                chunk = os.read(fd, 1 << 20)
                got += chunk
                if not chunk or got.endswith(b"\n"):
                    break
        return bytes(got)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class ReaderPool:
    """`budget.readers` reader processes, started when first needed and replaced when killed."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or Budget()
        self._idle: queue.Queue[_Reader | None] = queue.Queue()
        for _ in range(self.budget.readers):
            self._idle.put(None)  # a reader to start when taken
        self._threads = ThreadPoolExecutor(self.budget.readers, thread_name_prefix="threadsage-reading")
        self._readers: set[_Reader] = set()
        self._lock = threading.Lock()
        self.killed = 0  # readers stopped for overrunning, since the pool began

    def parse(self, data: bytes, name: str, wait: bool = True) -> tuple[str, tuple[Section, ...]]:
        """`loaders.parse_bytes` in a reader: blocking (call it from a thread), `UnreadableDocument`
        (`TooCostly` past the budget) for a file without usable text. `wait=False`: `ReadersBusy`
        when no reader came free within the deadline (someone is waiting for the answer)."""
        try:
            reader = self._idle.get(timeout=None if wait else self.budget.seconds)
        except queue.Empty:
            raise ReadersBusy(f"every reader busy for {self.budget.seconds:g} s") from None
        try:
            reader = reader if reader is not None and reader.alive else self._start()
            answer = reader.read(data, name)
        except TooCostly:
            with self._lock:
                self._readers.discard(reader)
                self.killed += 1
            log.warning("a file's reader overran its budget and was stopped")
            reader = None
            raise
        finally:
            self._idle.put(reader)
        return _parsed(answer)

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` (blocking, calling `parse`) on the pool's own threads: a pile of files
        waits there, never in the default thread pool the rest of the bot needs."""
        return await asyncio.get_running_loop().run_in_executor(self._threads, work, *args)

    def pids(self) -> list[int]:
        """The reader processes running now (for measuring them)."""
        with self._lock:
            return [reader.process.pid for reader in self._readers if reader.alive]

    def _start(self) -> _Reader:
        reader = _Reader(self.budget)
        with self._lock:
            self._readers = {r for r in self._readers if r.alive} | {reader}
        return reader

    def close(self) -> None:
        with self._lock:
            readers, self._readers = self._readers, set()
        for reader in readers:
            reader.kill()
        self._threads.shutdown(wait=False, cancel_futures=True)


def _parsed(answer: dict[str, Any]) -> tuple[str, tuple[Section, ...]]:
    if "too_long" in answer:
        raise DocumentTooLong(answer["too_long"])
    if "too_large" in answer:
        raise ImageTooLarge(answer["too_large"])
    if "no_text" in answer:
        raise NoTextInImage(answer["no_text"])
    if "too_costly" in answer:
        raise TooCostly("too much memory")
    if "unreadable" in answer:
        raise UnreadableDocument(answer["unreadable"])
    return answer["title"], tuple(Section(tuple(headings), text) for headings, text in answer["sections"])


_pools: dict[Budget, ReaderPool] = {}
_pools_lock = threading.Lock()
_default = Budget()


def use_budget(budget: Budget) -> None:
    """The budget of the process's reading where none is named (ingestion): set from the settings
    where a process starts."""
    global _default
    _default = budget


def shared_pool(budget: Budget | None = None) -> ReaderPool:
    """The process's pool for `budget` (by default the one `use_budget` set)."""
    budget = budget or _default
    with _pools_lock:
        if budget not in _pools:
            _pools[budget] = ReaderPool(budget)
        return _pools[budget]


@atexit.register
def _close_pools() -> None:
    for pool in _pools.values():
        pool.close()


def parse_within_budget(data: bytes, name: str) -> tuple[str, tuple[Section, ...]]:
    """`loaders.parse_bytes` through the process's pool (what ingestion reads files with)."""
    return shared_pool().parse(data, name)
