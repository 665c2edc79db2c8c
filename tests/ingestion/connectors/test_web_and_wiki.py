"""The web and Confluence connectors against fake servers over real HTTP, synced into a real
Milvus Lite knowledge base: what is new is indexed, what did not change is not re-read (304s,
version numbers), what is gone is pruned, and a bad page fails alone."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.fakes.sites import FakeConfluence, FakeSite, WikiPage
from tests.helpers.syncing import sync, wiki_settings
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow  # fake servers, Retry-After waits


@pytest.fixture
def site():
    fake = FakeSite()
    fake.page("/vpn", "VPN", "Connect with Larkspur Connect; the okapi token rotates every 90 days.", ("/leave",))
    fake.page("/leave", "Leave", "Sick leave needs a note after three days of absence.")
    fake.page("/private/salaries", "Salaries", "The salary bands of the okapi team.")
    yield fake
    fake.server.stop()


async def test_a_site_from_its_sitemap_syncs_incrementally(
    kb, tmp_path: Path, settings: Settings, site: FakeSite
) -> None:
    spec = {"name": "site", "type": "web", "url": f"{site.url}/sitemap.xml", "category": "it", "max_page_kb": 512}
    first = await sync(kb, tmp_path, settings, **spec)
    assert (first.new, first.changed, first.removed, first.error) == (2, 0, 0, "")
    failures = dict(first.failures)
    assert "redirect loop" in failures[f"{site.url}/loop"] and "larger than 512 KB" in failures[f"{site.url}/huge"]
    assert site.gets["/private/salaries"] == 0, "robots.txt disallows it"
    [hit] = kb.search_blocking("okapi token rotates", k=1)
    assert (hit.source, hit.path, hit.category) == (f"{site.url}/vpn", "/vpn", "it")
    assert "Menu" not in hit.text and "Example" not in hit.text, "only the main content is indexed"

    again = await sync(kb, tmp_path, settings, **spec)
    assert (again.new, again.changed, again.unchanged) == (0, 0, 2)
    assert site.not_modified["/vpn"] == site.not_modified["/leave"] == 1, "asked with If-None-Match, answered 304"

    site.page("/vpn", "VPN", "The VPN now uses WireGuard with a wombat passphrase.")
    del site.pages["/leave"]
    changed = await sync(kb, tmp_path, settings, **spec)
    assert (changed.changed, changed.removed) == (1, 1)
    assert kb.search_blocking("wombat passphrase WireGuard", k=1)[0].source == f"{site.url}/vpn"
    assert all("okapi" not in h.text for h in kb.search_blocking("okapi token rotates", k=5))
    assert all(h.source != f"{site.url}/leave" for h in kb.search_blocking("sick leave note", k=5))


async def test_a_site_crawled_from_a_start_page_keeps_to_its_host_and_depth(
    kb, tmp_path: Path, settings: Settings, site: FakeSite
) -> None:
    site.page("/", "Home", "Welcome to the intranet.", ("/vpn", "https://elsewhere.example/x", "/private/salaries"))
    status = await sync(kb, tmp_path, settings, name="site", type="web", url=f"{site.url}/", max_depth=1)
    assert (status.new, status.failures) == (2, [])  # home and /vpn; /leave is two links away
    assert site.gets["/leave"] == 0 and site.gets["/private/salaries"] == 0
    again = await sync(kb, tmp_path, settings, name="site", type="web", url=f"{site.url}/", max_depth=2)
    assert (again.new, again.unchanged) == (1, 2), "an unchanged page's links are remembered"


async def test_pages_the_sitemap_dates_as_unchanged_are_not_asked_for(kb, tmp_path: Path, settings: Settings) -> None:
    site = FakeSite(dated=True)
    for n in range(5):
        site.page(f"/p{n}", f"Page {n}", f"Page {n} tells of the heron number {n}.")
    spec = {"name": "site", "type": "web", "url": f"{site.url}/sitemap.xml"}
    try:
        assert (await sync(kb, tmp_path, settings, **spec)).new == 5
        asked = sum(site.gets[f"/p{n}"] for n in range(5))
        again = await sync(kb, tmp_path, settings, **spec)
        assert again.unchanged == 5 and sum(site.gets[f"/p{n}"] for n in range(5)) == asked, "no page asked for"
        site.page("/p3", "Page 3", "Page 3 now tells of the egret.")
        changed = await sync(kb, tmp_path, settings, **spec)
        assert (changed.changed, changed.unchanged) == (1, 4) and site.gets["/p3"] == 2
        untrusted = await sync(kb, tmp_path, settings, **spec, trust_lastmod=False)
        assert untrusted.unchanged == 5 and site.not_modified["/p0"] == 1, "asked again, answered 304"
    finally:
        site.server.stop()


async def test_requests_to_a_site_are_as_few_at_once_as_it_is_told(kb, tmp_path: Path, settings: Settings) -> None:
    site = FakeSite(latency=0.2)
    for n in range(6):
        site.page(f"/p{n}", f"Page {n}", f"Page {n} tells of the heron number {n}.")
    spec = {"name": "site", "type": "web", "url": f"{site.url}/sitemap.xml", "max_page_kb": 64}
    try:
        await sync(kb, tmp_path, settings, **spec, concurrency=2)
        assert site.most_in_flight == 2
        site.robots += "Crawl-delay: 1\n"
        for n in range(3, 6):
            del site.pages[f"/p{n}"]
        site.started.clear()
        await sync(kb, tmp_path / "again", settings, **spec)
        gaps = [b - a for a, b in zip(site.started, site.started[1:], strict=False)]
        assert len(gaps) == 2 and min(gaps) >= 1 + 0.2 - 0.05, f"robots.txt's Crawl-delay kept: {gaps}"
    finally:
        site.server.stop()


@pytest.fixture
def wiki():
    fake = FakeConfluence(page_size=2)
    fake.add(WikiPage("101", "Expense policy", "<p>Taxis are refunded up to <strong>40 euros</strong>.</p>",
                      labels=["finance"]))  # fmt: skip
    fake.add(WikiPage("102", "Onboarding", "<h2>First day</h2><p>Badges come from the <ac:link>lobby</ac:link>.</p>"))
    fake.add(WikiPage("103", "Deploys", "<p>Deploys freeze on Fridays after noon.</p>"))
    yield fake
    fake.server.stop()


async def test_a_confluence_space_syncs_by_version_number(kb, tmp_path: Path, settings: Settings, wiki) -> None:
    spec = {"name": "wiki", "type": "confluence", "url": wiki.site, "space": "ENG", "category": "engineering"}
    settings = wiki_settings(settings)
    first = await sync(kb, tmp_path, settings, **spec)
    assert (first.new, first.failures, first.error) == (3, [], "")
    listings = [r for r in wiki.requests if r.startswith(f"/wiki/api/v2/spaces/{wiki.SPACE_ID}/pages")]
    assert len(listings) == 2 and "cursor=" in listings[1], "two listing pages through _links.next"
    [taxi] = kb.search_blocking("taxi refunded euros", k=1)
    assert (taxi.source, taxi.title, taxi.category) == (f"{wiki.site}/spaces/ENG/pages/101/Expense+policy",
                                                        "Expense policy", "finance")  # fmt: skip
    assert kb.search_blocking("badges lobby first day", k=1)[0].category == "engineering"

    wiki.requests.clear()
    again = await sync(kb, tmp_path, settings, **spec)
    assert (again.new, again.changed, again.unchanged) == (0, 0, 3)
    assert not [r for r in wiki.requests if "/api/v2/pages/" in r], "unchanged pages are not fetched"

    wiki.pages["103"] = WikiPage("103", "Release process", "<p>Deploys freeze on Thursdays now.</p>", version=2)
    del wiki.pages["102"]
    wiki.throttle, started = 1, time.monotonic()
    moved = await sync(kb, tmp_path, settings, **spec)
    assert time.monotonic() - started >= 1.0, "429 waits for Retry-After"
    assert (moved.new, moved.removed, moved.unchanged) == (1, 2, 1)  # moved: new URL in, old URL out
    [deploys] = kb.search_blocking("deploys freeze", k=1)
    assert deploys.source.endswith("/pages/103/Release+process") and "Thursdays" in deploys.text
    assert all("Badges" not in h.text for h in kb.search_blocking("badges lobby first day", k=5))


async def test_refused_credentials_fail_the_source_not_the_sync(kb, tmp_path: Path, settings: Settings, wiki) -> None:
    bad = settings.model_copy(update={"confluence_email": "x@example.com", "confluence_api_token": SecretStr("no")})
    status = await sync(kb, tmp_path, bad, name="wiki", type="confluence", url=wiki.site, space="ENG")
    assert "refused CONFLUENCE_EMAIL" in status.error and status.new == 0


async def test_a_space_not_readable_or_not_there_is_said(kb, tmp_path: Path, settings: Settings, wiki) -> None:
    settings = wiki_settings(settings)
    wiki.forbidden = True
    status = await sync(kb, tmp_path, settings, name="wiki", type="confluence", url=wiki.site, space="ENG")
    assert "HTTP 403" in status.error and "ask for access" in status.error and status.new == 0
    missing = await sync(kb, tmp_path, settings, name="wiki2", type="confluence", url=wiki.site, space="OPS")
    assert "no space 'OPS'" in missing.error
