"""The git connector on a temporary repository (clone, nothing re-read at the same commit, only
changed blobs after a new one), and the sources file's fixed shape."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.helpers.repositories import commit, git
from threadsage.ingestion.connectors import connector_for
from threadsage.ingestion.engine import SyncEngine
from threadsage.ingestion.spec import SourcesFileError, load_sources
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings


@pytest.mark.slow
async def test_markdown_under_a_path_of_a_repository_syncs_by_commit(kb, tmp_path: Path, settings: Settings) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"docs/release.md": "# Release\nTags are cut by the capybara bot.\n",
                  "docs/style.md": "---\nurl: https://style.example.com/g\n---\n# Style\nHeadings: sentence case.\n",
                  "README.md": "# Readme\nThe narwhal readme is not under docs.\n"})  # fmt: skip
    (spec,) = _specs(tmp_path, f"- {{name: docs, type: git, url: {repo}, path: docs/, category: engineering, "
                               f"base_url: 'https://git.example.com/blob/main'}}")  # fmt: skip
    engine = SyncEngine(kb, StateStore(tmp_path / "state"), 1200, 200, asyncio.Lock())
    connector = connector_for(spec, settings, settings.data_dir)
    first = await engine.sync(connector)
    assert (first.new, first.failures, first.error) == (2, [], "")
    [hit] = kb.search_blocking("capybara bot tags", k=1)
    assert (hit.source, hit.category) == ("https://git.example.com/blob/main/docs/release.md", "engineering")
    assert hit.url == "https://git.example.com/blob/main/docs/release.md"
    assert kb.search_blocking("headings sentence case", k=1)[0].url == "https://style.example.com/g", "front matter"
    assert all("narwhal" not in h.text for h in kb.search_blocking("narwhal readme", k=5))

    same = await engine.sync(connector)
    assert (same.new, same.changed, same.unchanged) == (0, 0, 2)

    commit(repo, {"docs/release.md": "# Release\nTags are cut by the tapir bot now.\n", "docs/style.md": None})
    after = await engine.sync(connector)
    assert (after.changed, after.removed, after.unchanged) == (1, 1, 0)
    assert "tapir" in kb.search_blocking("bot tags release", k=1)[0].text


def _specs(tmp_path: Path, *lines: str):
    file = tmp_path / "sources.yaml"
    file.write_text("sources:\n" + "".join(f"  {line}\n" for line in lines))
    return load_sources(file)


def test_the_documented_sources_file_is_read_and_mistakes_are_named(tmp_path: Path) -> None:
    specs = _specs(
        tmp_path,
        "- {name: handbook, type: folder, path: ./docs, category: people, base_url: https://hb.example.com/}",
        "- {name: site, type: web, url: https://www.example.com/sitemap.xml, category: it, every: 15m}",
        "- {name: wiki, type: confluence, url: https://example.atlassian.net/wiki, space: ENG, category: engineering}",
        "- {name: docs, type: git, url: https://github.com/org/repo.git, path: docs/, category: engineering}",
    )
    assert [s.type for s in specs] == ["folder", "web", "confluence", "git"]
    assert specs[0].path == str(tmp_path / "docs") and specs[1].interval == 900 and specs[2].interval == 900
    with pytest.raises(SourcesFileError, match=r"source site: evry: Extra inputs"):
        _specs(tmp_path, "- {name: site, type: web, url: https://x.example.com/, evry: 5m}")
    with pytest.raises(SourcesFileError, match=r"source wiki: .*needs space"):
        _specs(tmp_path, "- {name: wiki, type: confluence, url: https://x.atlassian.net/wiki}")
    with pytest.raises(SourcesFileError, match=r"every: .*not a duration"):
        _specs(tmp_path, "- {name: f, type: folder, path: ., every: soon}")
