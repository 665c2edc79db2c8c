"""Six hostile PDFs and six hostile Word files in flight (twelve people, the default budget): a
plain question elsewhere is answered within 2 s of its usual time, and the readers' memory stays
bounded. Slow: the files are read until the deadline stops them (about a minute)."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import pytest

from tests.helpers.conversation import service
from tests.helpers.made_files import empty_text_pdf, many_paragraphs_docx
from threadsage.adapters.documents.attachments import Attachment, AttachmentReader
from threadsage.adapters.documents.reading import Budget, shared_pool
from threadsage.chat import ReplyKind, Turn
from threadsage.i18n import say

pytestmark = pytest.mark.timed  # a plain question within 2 s of its usual time

TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"
MARGIN = 2.0  # seconds a plain question may take beyond its usual time


def rss_mb(pid: int) -> float:
    """A process's resident memory now (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return next(int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmRSS:"))


async def test_a_plain_question_is_answered_in_its_usual_time_while_hostile_files_are_read(
    tmp_path: Path, handbook_kb
) -> None:
    budget = Budget()
    pool = shared_pool(budget)
    pdf, docx = empty_text_pdf(), many_paragraphs_docx()
    peak = {"each": 0.0, "together": 0.0}

    async def sample() -> None:
        while True:
            sizes = [rss_mb(pid) for pid in pool.pids()]
            peak["each"] = max(peak["each"], *sizes, 0.0)
            peak["together"] = max(peak["together"], sum(sizes))
            await asyncio.sleep(0.1)

    async def plain(n: int) -> float:
        started = time.perf_counter()
        [answer] = await chat.handle(Turn("test", f"test:ws:plain:{n}", "U-plain", f"p{n}", text=TRAVEL))
        assert answer.kind is ReplyKind.ANSWER and "premium economy" in answer.text.lower()
        return time.perf_counter() - started

    async with service(tmp_path, "", handbook_kb, attachments=AttachmentReader(budget=budget)) as chat:
        usual = statistics.median([await plain(n) for n in range(3)])
        sampling = asyncio.create_task(sample())
        hostile = [
            asyncio.create_task(
                chat.handle(Turn("test", f"test:ws:dm:{n}", f"U{n}", f"h{n}", text=TRAVEL, attachments=(file,)))
            )
            for n, file in enumerate(
                [Attachment(f"report{n}.pdf", pdf) for n in range(6)]
                + [Attachment(f"notes{n}.docx", docx) for n in range(6)]
            )
        ]
        await asyncio.sleep(2.0)  # every file is in flight: two being read, ten waiting
        during = [await plain(n) for n in range(3, 6)]
        replies = await asyncio.gather(*hostile)
        sampling.cancel()
    print(f"plain question: usual {usual:.2f} s, with 12 hostile files in flight {max(during):.2f} s at most")
    print(f"readers' peak RSS: {peak['each']:.0f} MB each, {peak['together']:.0f} MB together")
    assert max(during) <= usual + MARGIN, (usual, during)
    told = {
        "too costly": [say("file_too_costly", "en", name=f"report{n}.pdf", seconds="20", memory=512) for n in range(6)]
        + [say("file_too_costly", "en", name=f"notes{n}.docx", seconds="20", memory=512) for n in range(6)],
        "busy": [say("file_readers_busy", "en", name=f"report{n}.pdf") for n in range(6)]
        + [say("file_readers_busy", "en", name=f"notes{n}.docx") for n in range(6)],
    }
    for answer, notice in replies:  # each question answered, each file refused with a message
        assert answer.kind is ReplyKind.ANSWER and notice.text in told["too costly"] + told["busy"]
    assert 0 < peak["each"] < budget.memory_mb
    assert peak["together"] < budget.readers * budget.memory_mb
