"""The knowledge loop through the real chat service, the Slack bot on the Slack fake and a synced
folder, on SQLite and Postgres: a question not covered, then a page added to the folder closes
the gap with one follow-up in the original thread; a cited page changed marks its answer stale;
a verified answer reused for a paraphrase, then retired by its document's change; scoping and
the per-place limit of follow-ups."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.library import COVERED, GAP, LEAVE, TRAVEL, TRAVEL_2
from tests.helpers.slack_harness import Harness, as_text, mention_event, running, thread_messages
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.ingestion.connectors import connector_for
from threadsage.ingestion.engine import SyncEngine
from threadsage.ingestion.spec import SourceSpec
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow  # a live sync, its files read by reader processes

TOKEN = "console-test-password-4b1d"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@dataclass
class Loop:
    slack: Harness
    folder: Path
    engine: SyncEngine
    settings: Settings

    async def sync(self) -> None:
        """Both synced folders: `docs` (category docs) and `hr` (category hr)."""
        for name in ("docs", "hr"):
            spec = SourceSpec(name=name, type="folder", path=str(self.folder.parent / name), category=name)
            await self.engine.sync(connector_for(spec, self.settings, self.settings.data_dir))
        await self.slack.settle()

    async def page(self, path: str) -> str:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with self.slack.http.get(f"{self.slack.url}{path}", headers=headers) as response:
            assert response.status == 200
            return await response.text()

    async def post(self, path: str, form: dict[str, str]) -> int:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with self.slack.http.post(
            f"{self.slack.url}{path}", data=form, headers=headers, allow_redirects=False
        ) as response:
            return response.status

    async def api(self, view: str) -> list[dict]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with self.slack.http.get(f"{self.slack.url}/console/api/{view}", headers=headers) as response:
            assert response.status == 200, await response.text()
            return await response.json()


@asynccontextmanager
async def loop_on(tmp_path: Path, database_url: str, **overrides: object) -> AsyncIterator[Loop]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (tmp_path / "hr").mkdir()
    (folder / "travel.md").write_text(TRAVEL)
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "data", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    kb = open_knowledge_base(settings)
    try:
        async with running(tmp_path, kb, database_url, THREADSAGE_CONSOLE_TOKEN=TOKEN, **overrides) as slack:
            engine = SyncEngine(
                kb, StateStore(tmp_path / "state"), 1200, 200, asyncio.Lock(), slack.chat.knowledge.changed
            )
            loop = Loop(slack, folder, engine, settings)
            await loop.sync()
            yield loop
    finally:
        kb.close()


def covered_notes(slack: Harness, ts: str) -> list[dict]:
    return [m for m in thread_messages(slack.fake, ts) if "now covered" in as_text(m)]


async def test_a_page_added_closes_the_gap_with_one_follow_up_in_its_thread(tmp_path: Path, database_url: str) -> None:
    async with loop_on(tmp_path, database_url) as loop:
        gap_ts = await loop.slack.mention(GAP)
        await loop.slack.settle()
        [gap] = await loop.api("gaps")
        assert gap["newest"]["outcome"] == "not_covered"
        assert covered_notes(loop.slack, gap_ts) == []

        (loop.folder / "parental-leave.md").write_text(LEAVE)
        await loop.sync()
        [note] = covered_notes(loop.slack, gap_ts)
        assert "eight weeks" in as_text(note) and "Parental leave" in as_text(note)  # the answer, its source
        [closed] = await loop.api("closed")
        assert closed["title"] == "Parental leave" and closed["follow_up"] == "sent"
        assert closed["question"] == GAP

        (loop.folder / "parental-leave.md").write_text(LEAVE + "\nAsk the people team for the form.\n")
        await loop.sync()  # changed again: the gap is closed, no second follow-up
        assert len(covered_notes(loop.slack, gap_ts)) == 1
        assert len(await loop.api("closed")) == 1


async def test_a_cited_page_changed_marks_its_answer_stale(tmp_path: Path, database_url: str) -> None:
    async with loop_on(tmp_path, database_url) as loop:
        await loop.slack.mention(COVERED)
        await loop.slack.mention(COVERED, user="U333")
        await loop.slack.settle()
        assert await loop.api("stale") == []
        (loop.folder / "travel.md").write_text(TRAVEL_2)
        await loop.sync()
        [document] = await loop.api("stale")
        assert document["title"] == "Travel" and document["answers"] == 2 and document["people"] == 2
        assert document["change"].startswith("changed to version")
        assert [a["question"] for a in document["newest"]] == [COVERED, COVERED]


async def mention_in(slack: Harness, channel: str, text: str) -> str:
    event = mention_event(text) | {"channel": channel}
    assert await slack.event(event) == 200
    return str(event["ts"])


def answers_in(slack: Harness, ts: str) -> list[str]:
    return [as_text(m) for m in thread_messages(slack.fake, ts)]


async def test_a_verified_answer_is_reused_for_a_paraphrase_until_its_document_changes(
    tmp_path: Path, database_url: str
) -> None:
    async with loop_on(tmp_path, database_url) as loop:
        await loop.slack.mention(COVERED)
        await loop.slack.settle()
        page = await loop.page("/console/questions")
        key = re.search(r'name="session_key" value="([^"]+)"', page)
        message = re.search(r'name="message_id" value="([^"]+)"', page)
        assert key and message
        form = {"session_key": key.group(1), "message_id": message.group(1), "by": "Ada"}
        assert await loop.post("/console/verify", form) == 303
        [kept] = await loop.api("verified")
        assert kept["verified_by"] == "Ada" and kept["uses"] == 0 and kept["stale_at"] is None

        paraphrase = await loop.slack.mention("Flights of six hours: which class may I book?")
        await loop.slack.settle()
        [reply] = answers_in(loop.slack, paraphrase)
        assert "Verified answer (by Ada" in reply and "business class" in reply and "travel.md" in reply
        unrelated = await loop.slack.mention("Which class may I book for trains?")
        await loop.slack.settle()
        assert all("Verified answer" not in m for m in answers_in(loop.slack, unrelated))
        [kept] = await loop.api("verified")
        assert kept["uses"] == 1

        (loop.folder / "travel.md").write_text(TRAVEL_2)
        await loop.sync()
        [kept] = await loop.api("verified")
        assert kept["stale_at"] is not None and "Travel: changed to version" in kept["change"]
        again = await loop.slack.mention("Flights of six hours: which class may I book?")
        await loop.slack.settle()
        [reply] = answers_in(loop.slack, again)
        assert "Verified answer" not in reply and "economy" in reply  # from the new version

        assert await loop.post("/console/retire", {"id": kept["id"]}) == 303
        [kept] = await loop.api("verified")
        assert kept["retired_at"] is not None


async def test_no_follow_up_where_the_place_may_not_read_the_document_nor_beyond_the_hourly_limit(
    tmp_path: Path, database_url: str
) -> None:
    scoped = {"C111": ["docs"], "C222": ["docs", "hr"]}
    async with loop_on(
        tmp_path, database_url, THREADSAGE_CHANNEL_CATEGORIES=scoped, THREADSAGE_GAP_FOLLOW_UPS_PER_HOUR=1
    ) as loop:
        unreadable = await loop.slack.mention(GAP)  # in C111, which may not read hr
        first = await mention_in(loop.slack, "C222", GAP)
        second = await mention_in(loop.slack, "C222", "How long does parental leave last?")
        await loop.slack.settle()
        (loop.folder.parent / "hr" / "parental-leave.md").write_text(LEAVE)
        await loop.sync()
        closed = {row["question"] + row["channel"]: row["follow_up"] for row in await loop.api("closed")}
        assert sorted(closed.values()) == ["limit", "scope", "sent"]
        assert closed[GAP + "C111"] == "scope"
        assert covered_notes(loop.slack, unreadable) == []
        notes = covered_notes(loop.slack, first) + covered_notes(loop.slack, second)
        assert len(notes) == 1 and notes[0]["channel"] == "C222"
