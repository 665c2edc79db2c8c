"""The console over real HTTP on the bot's own app: nothing without the token (pages redirect to
the sign-in page, the API and the exports answer 401, neither leaks a question), signing in by
cookie or Bearer, and what people asked through the Slack fake in its lists and exports."""

from __future__ import annotations

import csv
import io
import json
import logging
import sqlite3
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.slack_api import FakeSlack
from tests.helpers.console import GAP, TOKEN, TRAVEL, ask_and_vote_down
from tests.helpers.locations import HANDBOOK
from tests.helpers.slack_harness import Harness, running
from threadsage.ingestion.state import SourceStatus, StateStore
from threadsage.records.ingestions import IngestionLog

PAGES = ["/console", "/console/gaps", "/console/questions", "/console/clarifications", "/console/knowledge"]
SCRIPTS = ["/console/api/overview", "/console/api/gaps", "/console/api/knowledge", "/console/export/questions.csv"]


async def test_without_signing_in_nothing_is_shown(served: Harness) -> None:
    await ask_and_vote_down(served, TRAVEL)
    http, url = served.http, served.url
    for path in PAGES:
        async with http.get(url + path, allow_redirects=False) as response:
            assert response.status == 303 and response.headers["location"].startswith("/console/signin?next=")
            assert "cabin" not in await response.text()
    for path in SCRIPTS:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Cookie": "threadsage_console=forged"}):
            async with http.get(url + path, headers=headers, allow_redirects=False) as response:
                body = await response.text()
                assert response.status == 401 and "cabin" not in body.lower(), (path, headers)
    async with http.get(url + "/console/signin") as response:
        page = await response.text()
        assert response.status == 200 and 'type="password"' in page and "cabin" not in page.lower()
    async with http.post(url + "/console/signin", data={"token": "guess"}, allow_redirects=False) as response:
        assert response.status == 401 and "not the console password" in await response.text()
        assert "threadsage_console" not in response.cookies


async def test_signing_in_sets_a_strict_http_only_cookie(served: Harness) -> None:
    await ask_and_vote_down(served, TRAVEL)
    form = {"token": TOKEN, "next": "https://evil.example/steal"}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:  # unsafe: an IP host
        async with browser.post(served.url + "/console/signin", data=form, allow_redirects=False) as response:
            assert response.status == 303 and response.headers["location"] == "/console"  # no open redirect
            cookie = response.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie
        assert TOKEN not in cookie
        for path in PAGES:
            async with browser.get(served.url + path, allow_redirects=False) as response:
                assert response.status == 200, path
                assert "script-src" not in response.headers["content-security-policy"]  # no script at all
        async with browser.get(served.url + "/console/questions") as response:
            assert TRAVEL in await response.text()
        async with browser.post(served.url + "/console/signout", allow_redirects=False) as response:
            assert response.status == 303
        async with browser.get(served.url + "/console", allow_redirects=False) as response:
            assert response.status == 303


async def test_a_script_reads_the_lists_with_a_bearer_token(served: Harness) -> None:
    await ask_and_vote_down(served, TRAVEL)
    await ask_and_vote_down(served, GAP)
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    async with served.http.get(served.url + "/console/api/gaps", headers=bearer) as response:
        gaps = await response.json()
    assert {g["newest"]["question"] for g in gaps} == {TRAVEL, GAP}  # a 👎, and a question not covered
    iguana = next(g["newest"] for g in gaps if g["newest"]["question"] == GAP)
    assert iguana["outcome"] == "not_covered" and iguana["down"] == 1 and iguana["closest"]["path"]
    assert "user_id" not in iguana  # people hidden unless asked
    async with served.http.get(served.url + "/console/api/overview?days=7", headers=bearer) as response:
        overview = await response.json()
    assert overview["down"] == 2 and overview["outcomes"]["not_covered"] == 1
    async with served.http.get(served.url + "/console/export/questions.csv?people=1", headers=bearer) as response:
        assert response.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(await response.text())))
    assert {r["question"] for r in rows} == {TRAVEL, GAP} and {r["user_id"] for r in rows} == {"U222"}
    async with served.http.get(served.url + "/console/api/questions?platform=telegram", headers=bearer) as response:
        assert await response.json() == []  # the filters apply


async def test_without_a_token_the_console_is_off_and_the_log_says_so(
    tmp_path: Path, handbook_kb, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeSlack().start()
    with caplog.at_level(logging.INFO, logger="threadsage.console"):
        async with running(tmp_path, handbook_kb, fake=fake) as slack:
            for path in ["/console", "/console/signin", "/console/api/overview"]:
                async with slack.http.get(slack.url + path, allow_redirects=False) as response:
                    assert response.status == 404
    fake.stop()
    assert "operator console is off" in caplog.text


async def test_the_knowledge_view_shows_documents_ingestion_runs_and_synced_sources(
    tmp_path: Path, handbook_kb
) -> None:
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{name: wiki, type: folder, path: {tmp_path}, every: 1h}}\n")
    failed = [("guide.pdf", "encrypted PDF")]
    StateStore(tmp_path / "data" / "sources").save("wiki", {}, "", SourceStatus(documents=3, new=3, failures=failed))
    fake = FakeSlack().start()
    async with running(
        tmp_path, handbook_kb, fake=fake, THREADSAGE_CONSOLE_TOKEN=TOKEN, THREADSAGE_SOURCES=str(sources)
    ) as slack:
        log = IngestionLog(slack.chat.checkpointer)
        await log.setup()
        await log.record("12 files (12 new): 40 chunks added", [("scan.pdf", "no text")])
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        async with slack.http.get(slack.url + "/console/api/knowledge", headers=bearer) as response:
            info = await response.json()
        async with slack.http.get(slack.url + "/console/knowledge", headers=bearer) as response:
            page = await response.text()
    fake.stop()
    assert info["documents"] == sum(handbook_kb.category_counts().values()) and info["chunks"] == handbook_kb.count()
    assert info["search"] == "Milvus Lite · BM25" and info["embeddings"] == "none (BM25 only)"
    assert [(r["summary"], r["failures"]) for r in info["ingestions"]] == [
        ("12 files (12 new): 40 chunks added", [["scan.pdf", "no text"]])
    ]
    assert info["sources_synced"][0]["name"] == "wiki" and info["sources_synced"][0]["failures"] == [list(failed[0])]
    assert "guide.pdf: encrypted PDF" in page and "scan.pdf: no text" in page


def test_threadsage_ingest_records_its_run(cli, tmp_path: Path) -> None:
    result = cli("ingest", str(HANDBOOK))
    assert result.exit_code == 0, result.output
    with sqlite3.connect(tmp_path / "data" / "checkpoints.sqlite") as db:
        [(summary, failures)] = db.execute("SELECT summary, failures FROM threadsage_ingestions").fetchall()
    assert " files (" in summary and "chunks added" in summary
    assert json.loads(failures) == []
