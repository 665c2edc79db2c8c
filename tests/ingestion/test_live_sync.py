"""Live sync in a running bot (the chat service in-process, with its background upkeep): a file
saved in a watched folder is answered from within 10 s, a page changed upstream is answered from
its new text after the next sync, a deleted page is no longer cited; and `threadsage ingest`
hands its work to the bot that holds the Milvus Lite file."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from tests.fakes.sites import FakeSite
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService, ReplyKind, Turn
from threadsage.ingestion.service import knowledge_upkeep
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings

pytestmark = [pytest.mark.slow, pytest.mark.timed]  # a running bot syncing a folder and a site, within 10 s


async def ask(chat: ChatService, question: str) -> tuple[str, list[str]]:
    """The answer's text and the sources it cites (a fresh conversation each time)."""
    replies = await chat.handle(Turn("test", f"test:w:c:{uuid.uuid4().hex}", "U1", "m1", text=question))
    answers = [r for r in replies if r.kind is ReplyKind.ANSWER]
    if not answers:  # a notice ("couldn't find anything"): its text, for the failure message
        return " / ".join(f"{r.kind.name}: {r.text}" for r in replies), []
    return answers[0].text, [c["source"] for c in answers[0].citations]


async def until_cited(chat: ChatService, question: str, source: str, seconds: float) -> tuple[str, float]:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        text, cited = await ask(chat, question)
        if source in cited:
            return text, time.monotonic() - started
        await asyncio.sleep(0.2)
    raise AssertionError(f"{source} not cited within {seconds} s; last answer: {text!r}, cited {cited}")


async def test_a_running_bot_keeps_its_knowledge_current(kb, tmp_path: Path, settings: Settings) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "travel.md").write_text("# Travel\nTrains are booked through the travel desk.\n")
    site = FakeSite()
    site.page("/parking", "Parking", "Visitor parking permits are collected from the blue kiosk at gate four.")
    site.page("/canteen", "Canteen", "The canteen serves the tapioca pudding on Wednesdays only.")
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        "sources:\n"
        f"  - {{name: handbook, type: folder, path: {folder}, category: people, every: 1h}}\n"
        f"  - {{name: site, type: web, url: {site.url}/sitemap.xml, every: 1s, max_page_kb: 64}}\n"
    )
    # The test asks again and again while it waits: more than the 20 questions a minute one person may ask.
    settings = settings.model_copy(update={"sources": sources, "rate_limit_per_minute": 1000})
    try:
        async with open_chat_service(settings, kb=kb) as chat, knowledge_upkeep(settings, kb):
            await until_cited(chat, "Where are visitor parking permits collected?", f"{site.url}/parking", 30)

            (folder / "bikes.md").write_text("# Bikes\nThe bicycle cage code is given out by the porter Ignatius.\n")
            text, seconds = await until_cited(
                chat, "Who gives out the bicycle cage code?", str(folder / "bikes.md"), 10
            )
            assert "Ignatius" in text and seconds < 10

            site.page("/parking", "Parking", "Visitor parking permits now come from the reception desk in hall B.")
            text, _ = await until_cited(chat, "Where do visitor parking permits come from?", f"{site.url}/parking", 15)
            deadline = time.monotonic() + 15
            while "hall B" not in text and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                text, _ = await ask(chat, "Where do visitor parking permits come from?")
            assert "hall B" in text and "blue kiosk" not in text, text

            del site.pages["/canteen"]
            store, deadline = StateStore(settings.data_dir / "sources"), time.monotonic() + 15
            while store.status("site").documents != 1:  # the sync that prunes it
                assert time.monotonic() < deadline, "a deleted page is still synced after 15 s"
                await asyncio.sleep(0.2)
            assert f"{site.url}/canteen" not in (await ask(chat, "When is tapioca pudding served?"))[1]
    finally:
        site.server.stop()
    status = StateStore(tmp_path / "data" / "sources").status("site")
    assert (status.documents, status.error) == (1, "") and len(status.failures) == 2  # /loop and /huge


async def test_ingest_beside_a_running_bot_is_handed_to_it(kb, tmp_path: Path, settings: Settings, cli) -> None:
    folder = tmp_path / "extra"
    folder.mkdir()
    (folder / "plants.md").write_text("# Plants\nThe office ficus is watered by the night guard Philomena.\n")
    async with open_chat_service(settings, kb=kb) as chat, knowledge_upkeep(settings, kb):
        await asyncio.sleep(0.3)  # the bot has opened its inbox
        result = await asyncio.to_thread(cli, "ingest", str(folder), "--category", "facilities")
        assert result.exit_code == 0, result.output
        assert "the ingest is handed to it" in result.output and "1 new" in result.output
        text, cited = await ask(chat, "Who waters the office ficus?")
        assert "Philomena" in text and str(folder / "plants.md") in cited
        refused = await asyncio.to_thread(cli, "ingest", str(folder), "--rebuild")
        assert refused.exit_code == 2 and "stop it to --rebuild" in refused.output
