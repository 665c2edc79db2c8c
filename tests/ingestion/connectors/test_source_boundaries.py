"""What a source may reach: a web site's every fetch stays on its scheme and host and off internal
addresses; robots.txt is read as RFC 9309 says; Confluence credentials go to the configured site
only. A refusal is a short line naming no URL."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.fakes.http import JsonServer
from tests.fakes.sites import FakeConfluence, FakeSite, WikiPage
from tests.helpers.repositories import commit, git
from tests.helpers.syncing import sync, wiki_settings
from threadsage.ingestion.connectors import connector_for
from threadsage.ingestion.connectors.http import FetchFailed, Site
from threadsage.ingestion.engine import SyncEngine
from threadsage.ingestion.spec import SourceSpec
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings

METADATA = "/latest/meta-data/iam/security-credentials/"


@pytest.fixture
def site():
    fake = FakeSite()
    fake.page("/vpn", "VPN", "Connect with Larkspur Connect; the okapi token rotates every 90 days.")
    yield fake
    fake.server.stop()


@pytest.fixture
def elsewhere():
    """Another server on this machine, standing for a cloud's metadata service."""
    fake = FakeSite()
    yield fake
    fake.server.stop()


async def test_a_sitemap_index_naming_another_host_is_not_followed(
    kb, tmp_path: Path, settings: Settings, site: FakeSite, elsewhere: FakeSite, caplog: pytest.LogCaptureFixture
) -> None:
    site.sitemap_xml = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{elsewhere.url}{METADATA}</loc></sitemap>"
        f"<sitemap><loc>{site.url}/pages.xml</loc></sitemap></sitemapindex>"
    )
    caplog.set_level(logging.DEBUG)
    status = await sync(kb, tmp_path, settings, name="site", type="web", url=f"{site.url}/sitemap.xml")
    assert sum(elsewhere.gets.values()) == 0, elsewhere.gets
    said = f"{status.error} {status.failures} {caplog.text}"
    assert "meta-data" not in said and elsewhere.url not in said


async def test_every_fetch_is_held_to_the_sites_scheme_host_and_addresses() -> None:
    local = Site("http://127.0.0.1:8080/sitemap.xml")  # a site on loopback may fetch loopback, its own host only
    await local.check("http://127.0.0.1:8080/page")
    for foreign in ("http://127.0.0.1:9090/x", "https://127.0.0.1:8080/x", "http://169.254.169.254/latest/"):
        with pytest.raises(FetchFailed, match=r"^refused: a URL outside the configured site$"):
            await local.check(foreign)
    public = Site("http://localhost:8080/", internal=False)  # as if the name had resolved outside at first
    with pytest.raises(FetchFailed, match="resolves to an internal address"):
        await public.check("http://localhost:8080/page")  # …and resolves to 127.0.0.1 now


async def test_robots_txt_missing_allows_and_unreachable_disallows_for_now(
    kb, tmp_path: Path, settings: Settings, site: FakeSite
) -> None:
    spec = {"name": "site", "type": "web", "url": f"{site.url}/sitemap.xml"}
    site.robots_status = 404
    first = await sync(kb, tmp_path, settings, **spec)
    assert first.new == 1 and first.error == ""
    site.robots_status, site.gets = 500, site.gets.__class__()
    second = await sync(kb, tmp_path, settings, **spec)
    assert "robots.txt answered HTTP 500: trying again at the next sync" in second.error
    assert site.gets["/vpn"] == 0 and second.removed == 0  # nothing fetched, nothing pruned
    assert kb.search_blocking("okapi token rotates", k=1)[0].source == f"{site.url}/vpn"
    site.server.stop()  # no answer at all
    third = await sync(kb, tmp_path, settings, **spec)
    assert "robots.txt unreachable" in third.error and kb.search_blocking("okapi token rotates", k=1)


async def test_confluence_credentials_do_not_follow_a_base_on_another_host(
    kb, tmp_path: Path, settings: Settings
) -> None:
    stolen: list[str] = []

    def thief(path: str, headers: dict[str, str], _body: bytes) -> tuple[int, dict[str, str], object]:
        stolen.append(headers.get("Authorization", ""))
        return 200, {}, {"results": [], "_links": {}}

    wiki, other = FakeConfluence(page_size=1), JsonServer(thief)
    try:
        wiki.add(WikiPage("101", "Expenses", "<p>Taxis are refunded up to 40 euros.</p>"))
        wiki.add(WikiPage("102", "Deploys", "<p>Deploys freeze on Fridays.</p>"))
        wiki.base = f"{other.url}/wiki"
        status = await sync(
            kb, tmp_path, wiki_settings(settings), name="wiki", type="confluence", url=wiki.site, space="ENG"
        )
    finally:
        wiki.server.stop()
        other.stop()
    assert stolen == []
    assert status.new == 2 and status.error == ""


async def test_a_git_source_reads_nothing_under_dot_git_through_a_tracked_link(
    kb, tmp_path: Path, settings: Settings
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "https://deploy:hunter2-secret@git.example.com/team/handbook.git")
    commit(repo, {"real.md": "# Real\nThe wombat rota is on Mondays.\n"})
    (repo / "leak.md").symlink_to(".git/config")
    (repo / "alias.md").symlink_to("real.md")
    commit(repo, {})
    spec = SourceSpec(name="repo", type="git", url=str(repo))
    status = await SyncEngine(kb, StateStore(tmp_path / "state"), 1200, 200, asyncio.Lock()).sync(
        connector_for(spec, settings, settings.data_dir)
    )
    assert status.new == 2 and [key for key, _ in status.failures] == ["repo:leak.md"]
    assert all("hunter2" not in h.text for h in kb.search_blocking("remote origin url deploy hunter2 secret", k=10))
    assert {h.path for h in kb.search_blocking("wombat rota Mondays", k=5)} == {"alias.md", "real.md"}


async def test_a_branch_is_never_taken_for_an_option(kb, tmp_path: Path, settings: Settings) -> None:
    planted = tmp_path / "planted"
    branch = f"--upload-pack=touch {planted}; git-upload-pack"
    with pytest.raises(ValidationError, match="not starting with '-'"):
        SourceSpec(name="repo", type="git", url="https://git.example.com/x.git", branch=branch)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"a.md": "# A\nText.\n"})
    engine = SyncEngine(kb, StateStore(tmp_path / "state"), 1200, 200, asyncio.Lock())
    await engine.sync(
        connector_for(SourceSpec(name="repo", type="git", url=f"file://{repo}"), settings, settings.data_dir)
    )
    unchecked = SourceSpec.model_construct(name="repo", type="git", url=f"file://{repo}", branch=branch, path=None)
    status = await engine.sync(
        connector_for(unchecked, settings, settings.data_dir)
    )  # as if a spec had got past the check
    assert "invalid refspec" in status.error and not planted.exists()
