"""Files that cost more to read than their size says: read in reader processes within a budget of
time and memory, killed past it, with a message; one file at a time per person; a bot whose loop
or threads are held says so on /readyz."""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers.conversation import service
from tests.helpers.made_files import empty_text_pdf
from tests.helpers.served import free_port
from threadsage.adapters.documents.attachments import Attachment, AttachmentReader
from threadsage.adapters.documents.reading import Budget, TooCostly, shared_pool, use_budget
from threadsage.chat import ReplyKind, Turn
from threadsage.http.thread import http_server
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

_OWN = ThreadPoolExecutor(1)
TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"
QUICK = Budget(seconds=2.0, memory_mb=512, readers=1)

pytestmark = [pytest.mark.slow, pytest.mark.timed]  # reader processes, killed at their deadline; turns within 15 s


def turn(n: int, text: str, *files: Attachment, user: str = "U1", key: str = "test:ws:chan:thread") -> Turn:
    return Turn("test", key, user, f"m{n}", text=text, attachments=files)


async def test_a_file_too_costly_to_read_is_stopped_with_a_message_and_the_question_answered(
    tmp_path: Path, handbook_kb
) -> None:
    pool = shared_pool(QUICK)
    killed = pool.killed
    started = time.perf_counter()
    async with service(tmp_path, "", handbook_kb, attachments=AttachmentReader(budget=QUICK)) as chat:
        replies = await chat.handle(turn(1, TRAVEL, Attachment("report.pdf", empty_text_pdf())))
    took = time.perf_counter() - started
    assert replies[0].kind is ReplyKind.ANSWER and "premium economy" in replies[0].text.lower()
    assert replies[1].text == say("file_too_costly", "en", name="report.pdf", seconds="2", memory=512)
    assert took < 15, f"the turn took {took:.1f} s"  # parsed in a thread, it takes hours
    assert pool.killed == killed + 1
    title, sections = pool.parse(b"# Still here\n\nThe reader was replaced.", "after.md")  # a new reader
    assert title == "Still here" and sections[0].text == "The reader was replaced."


async def test_a_file_that_needs_too_much_memory_is_refused() -> None:
    pool = shared_pool(Budget(seconds=30.0, memory_mb=300, readers=1))
    text = ("word " * 20 + "\n") * 1_200_000  # 120 MB of text: decoded and cleaned, several copies
    with pytest.raises(TooCostly, match="memory"):
        await pool.run(pool.parse, text.encode(), "big.txt")
    assert pool.parse(b"small", "small.txt")[1][0].text == "small"


async def test_one_persons_files_are_read_one_turn_at_a_time(tmp_path: Path, handbook_kb) -> None:
    note = Attachment("note.md", b"# Note\n\nThe Heron budget is 48,000 euros.")
    async with service(tmp_path, "", handbook_kb, attachments=AttachmentReader(budget=QUICK)) as chat:
        costly = asyncio.create_task(chat.handle(turn(1, TRAVEL, Attachment("a.pdf", empty_text_pdf()))))
        async with asyncio.timeout(10):  # until its file is being read (the turn's first steps come before)
            while not chat._reading:  # noqa: ASYNC110 - a set the service keeps, it has no event to wait on
                await asyncio.sleep(0.01)
        mine = await chat.handle(turn(2, TRAVEL, note, key="test:ws:chan:second"))
        asked = "What does the attached note say the Heron budget is?"
        others = await chat.handle(turn(3, asked, note, user="U2", key="test:ws:chan:third"))
        await costly
    assert [r.text for r in mine[1:]] == [say("file_reading_yours", "en", name="note.md")]
    assert mine[0].kind is ReplyKind.ANSWER  # the question is answered all the same
    assert len(others) == 1 and "48,000" in others[0].text  # someone else's file is read meanwhile


def test_a_synced_file_too_costly_to_read_is_skipped_saying_why(tmp_path: Path, kb) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "report.pdf").write_bytes(empty_text_pdf())
    (tmp_path / "docs" / "ok.md").write_text("# Fine\n\nA readable page.\n")
    use_budget(QUICK)
    try:
        started = time.perf_counter()
        report = Ingestor(kb, 1200, 200).ingest_paths([tmp_path / "docs"])
    finally:
        use_budget(Budget())
    assert time.perf_counter() - started < 15
    assert report.new == 1 and [(Path(f).name, why) for f, why in report.skipped] == [
        ("report.pdf", "took longer than 2 s")
    ]


def _ready(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _asking(url: str) -> tuple[threading.Thread, list[int]]:
    """/readyz asked from a thread of its own (the default pool may be the one held)."""
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(_ready(url)))
    thread.start()
    return thread, codes


async def test_readiness_says_so_when_the_threads_or_the_loop_are_held(tmp_path: Path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, THREADSAGE_HTTP_PORT=free_port(), _env_file=None)
    url = f"http://127.0.0.1:{settings.http_port}/readyz"
    release = threading.Event()
    async with http_server(settings, []):
        assert await asyncio.to_thread(_ready, url) == 200
        held = [asyncio.create_task(asyncio.to_thread(release.wait)) for _ in range(40)]  # every default thread
        thread, codes = _asking(url)
        await asyncio.get_running_loop().run_in_executor(_OWN, thread.join)  # not a default thread: all held
        release.set()
        await asyncio.gather(*held)
        assert codes == [503]
        assert await asyncio.to_thread(_ready, url) == 200
        thread, codes = _asking(url)
        time.sleep(3)  # noqa: ASYNC251 - the point: the turns' loop is held
        thread.join()
        assert codes == [503]


async def test_a_question_sent_while_its_file_is_read_waits_for_it_and_is_answered_from_it(
    tmp_path: Path, handbook_kb
) -> None:
    """As in Telegram: a document, then a question about it while it is still being read. The
    question waits for the file's turn (the same order as any two messages of a conversation) and is
    answered from the file: no "still reading, send it again", no answer without it."""
    filler = "".join(f"Row {n} of the appendix: a plain filler line.\n\n" for n in range(8_000))
    note = Attachment("heron.md", f"# Heron\n\nThe Heron budget is 48,000 euros.\n\n## Appendix\n\n{filler}".encode())
    async with service(tmp_path, "", handbook_kb) as chat:
        sent = asyncio.create_task(chat.handle(turn(1, "", note)))
        async with asyncio.timeout(30):  # until the file is being read
            while not chat._reading:  # noqa: ASYNC110 - a set the service keeps, it has no event to wait on
                await asyncio.sleep(0.005)
        asked = await chat.handle(turn(2, "What does the note I sent say the Heron budget is?"))
        got = await sent
    assert [r.kind for r in got] == [ReplyKind.NOTICE]  # "I've read heron.md…"
    assert len(asked) == 1 and "48,000" in asked[0].text, asked
    assert say("file_reading_yours", "en", name="heron.md") not in [r.text for r in asked]
