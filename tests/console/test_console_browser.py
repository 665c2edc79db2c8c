"""The console in a real browser: Debian's headless Chromium, driven by Playwright (from PyPI; its
own browser download is never used). A question asked through the Slack fake and its 👎 are seen
after signing in, with a chart and the gaps list; a screenshot of each view (on a laptop, and the
overview on a phone) is saved under the test's temporary directory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.helpers.console import GAP, TOKEN, TRAVEL, ask_and_vote_down
from tests.helpers.slack_harness import Harness

pytestmark = pytest.mark.slow  # a real Chromium

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        await chromium.close()


async def sign_in(page: Page, url: str) -> None:
    await page.goto(url + "/console")
    assert page.url.startswith(url + "/console/signin")
    await page.fill("input[type=password]", TOKEN)
    await page.click("text=Sign in")
    await page.wait_for_url(url + "/console")


async def test_an_operator_signs_in_and_sees_the_question_its_thumbs_down_a_chart_and_the_gaps(
    served: Harness, browser: Browser, tmp_path: Path
) -> None:
    await ask_and_vote_down(served, TRAVEL)
    await ask_and_vote_down(served, GAP)
    shots = tmp_path / "screenshots"
    laptop = await browser.new_page(viewport={"width": 1280, "height": 900})

    await laptop.goto(served.url + "/console/gaps")  # not signed in: the sign-in page, nothing else
    assert "/console/signin" in laptop.url
    assert TRAVEL not in await laptop.content()
    await laptop.screenshot(path=shots / "signin.png")

    await sign_in(laptop, served.url)
    chart = laptop.locator("svg[aria-label='Questions per day by outcome']")
    await chart.wait_for()
    assert await chart.locator("rect").count() >= 1  # today's bar, at least one outcome
    assert "liked: 0 👍 / 2 👎" in await laptop.inner_text(".cards")
    await laptop.screenshot(path=shots / "overview.png", full_page=True)

    await laptop.click("header >> text=Questions")
    row = laptop.locator("tr", has_text=TRAVEL)
    await row.wait_for()
    assert "1 👎" in await row.inner_text()
    await laptop.screenshot(path=shots / "questions.png", full_page=True)

    await laptop.click("header >> text=Gaps")
    gaps = laptop.locator("article.gap")
    await gaps.first.wait_for()
    texts = await gaps.all_inner_texts()
    assert any(GAP in t and "not covered" in t and "Closest document" in t for t in texts)
    assert any(TRAVEL in t and "1 👎" in t for t in texts)
    await laptop.screenshot(path=shots / "gaps.png", full_page=True)

    for view in ("Clarifications", "Knowledge base"):
        await laptop.click(f"header >> text={view}")
        await laptop.wait_for_load_state()
        await laptop.screenshot(path=shots / f"{view.split()[0].lower()}.png", full_page=True)
    assert "Documents per category" in await laptop.content()

    phone = await browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    await sign_in(phone, served.url)
    await phone.locator("svg.chart").first.wait_for()
    assert await phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scroll
    await phone.screenshot(path=shots / "overview-phone.png", full_page=True)
    assert sorted(p.name for p in shots.iterdir()) == [
        "clarifications.png",
        "gaps.png",
        "knowledge.png",
        "overview-phone.png",
        "overview.png",
        "questions.png",
        "signin.png",
    ]
