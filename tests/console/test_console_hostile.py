"""The console shown hostile text: markup and script in questions, answers, document titles and
paths, headings, options, channel names, ingestion failures and the filters themselves is shown as
text, never run; every answer carries the strict headers; a CSV cell never becomes a formula."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from tests.helpers.console import TOKEN, console_served, console_settings
from tests.helpers.hostile import FORMULA, HOSTILE, assert_inert, assert_strict, record_hostile_turns
from threadsage import console

BEARER = {"Authorization": f"Bearer {TOKEN}"}
PAGES = ["/console", "/console/gaps", "/console/questions", "/console/clarifications", "/console/knowledge"]


async def test_hostile_text_is_shown_never_run(tmp_path: Path) -> None:
    async with console_served(console_settings(tmp_path)) as console:
        await record_hostile_turns(console.checkpointer)
        http = console.http
        for path in PAGES:
            for query in ("", f"?people=1&channel={HOSTILE}&platform={HOSTILE[:40]}", "?people=1"):
                async with http.get(console.url + path + query, headers=BEARER) as response:
                    page = await response.text()
                    assert response.status == 200, (path, query)
                    assert_strict(response.headers)
                if path != "/console/knowledge":  # the filter bar lists the hostile channel on every view
                    assert_inert(page)
        async with http.get(console.url + f"/console/signin?next=/console{HOSTILE}") as response:
            page = await response.text()
            assert_strict(response.headers)
        assert "<script" not in page.lower() and "&lt;script&gt;" in page
        async with http.get(console.url + "/console/api/questions", headers=BEARER) as response:
            assert_strict(response.headers)
            assert {t["question"] for t in await response.json()} == {HOSTILE, FORMULA}


async def test_the_knowledge_view_shows_hostile_ingestion_failures_as_text(tmp_path: Path) -> None:
    async with console_served(console_settings(tmp_path)) as console:
        await record_hostile_turns(console.checkpointer)
        async with console.http.get(console.url + "/console/knowledge", headers=BEARER) as response:
            assert_inert(await response.text())


async def test_no_csv_cell_is_a_formula(tmp_path: Path) -> None:
    async with console_served(console_settings(tmp_path)) as console:
        await record_hostile_turns(console.checkpointer)
        async with console.http.get(console.url + "/console/export/questions.csv", headers=BEARER) as response:
            assert_strict(response.headers)
            rows = list(csv.DictReader(io.StringIO(await response.text())))
    assert {r["question"] for r in rows} >= {"'" + FORMULA}
    assert {r["answer"] for r in rows} >= {"'@SUM(1)"}
    for row in rows:
        assert not any(cell[:1] in "=+-@" for cell in row.values() if cell), row


def test_no_template_or_module_turns_escaping_off() -> None:
    """Escaping is the default (autoescape on for every template); nothing opts out of it."""
    package = Path(console.__file__).parent
    templates = sorted((package / "templates").glob("*.html"))
    assert len(templates) >= 8
    for template in templates:
        text = template.read_text(encoding="utf-8").replace(" ", "")
        for opt_out in ("|safe", "autoescapefalse", "Markup"):
            assert opt_out.lower() not in text.lower(), (template.name, opt_out)
    for module in package.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert "Markup" not in text and "autoescape=False" not in text and "from html import" not in text, module
