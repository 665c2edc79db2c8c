"""Sync time of a web source of N pages: all new, then all unchanged, then 1% changed.

    PYTHONPATH=$PWD .venv/bin/python bench/sync.py [--pages 1000] [--dated | --folder] [--concurrency 8]
        [--latency 0.05]

The site is the fake of the tests (tests/fakes/sites.py) on 127.0.0.1: a sitemap, pages
of ~600 characters with ETags (304 to a matching If-None-Match). By default the sitemap gives no
`<lastmod>`, so every page costs a conditional GET; `--dated` gives each page's, so an unchanged
page costs no request at all. `--latency` makes each page answer that much later, as a site across
a network does (where requests at once pay off; on 127.0.0.1 they only share the CPU). `--folder`
measures a folder source of N Markdown files instead (unchanged = same mtime and size, not
re-read). BM25 only (no embeddings), Milvus Lite on a fresh temporary data dir.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.sites import FakeSite
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.ingestion.connectors import connector_for
from threadsage.ingestion.engine import SyncEngine
from threadsage.ingestion.spec import SourceSpec
from threadsage.ingestion.state import StateStore
from threadsage.settings.environment import Settings

WORDS = [
    "policy",
    "leave",
    "travel",
    "expense",
    "laptop",
    "badge",
    "parking",
    "canteen",
    "meeting",
    "review",
    "release",
    "deploy",
]


def text(n: int) -> str:
    return " ".join(f"{WORDS[(n * 7 + i) % len(WORDS)]} item{n}x{i}" for i in range(50)) + "."


async def main(pages: int, folder: bool, dated: bool, concurrency: int, latency: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(THREADSAGE_DATA_DIR=Path(tmp) / "data", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(settings)
        site = FakeSite(dated=dated, latency=latency)
        if folder:
            root = Path(tmp) / "docs"
            root.mkdir()
            for n in range(pages):
                (root / f"page{n}.md").write_text(f"# Page {n}\n{text(n)}\n")
            spec = SourceSpec(name="bench", type="folder", path=str(root))
        else:
            for n in range(pages):
                site.page(f"/page{n}", f"Page {n}", text(n))
            url = f"{site.url}/sitemap.xml"
            spec = SourceSpec(name="bench", type="web", url=url, max_pages=pages + 2, concurrency=concurrency)
        engine = SyncEngine(kb, StateStore(Path(tmp) / "state"), 1200, 200, asyncio.Lock())
        connector = connector_for(spec, settings, settings.data_dir)
        try:
            for label in ("new", "unchanged", "1% changed"):
                if label == "1% changed":
                    for n in range(0, pages, 100):
                        if folder:
                            (root / f"page{n}.md").write_text(f"# Page {n}\n{text(n + 1)}\n")
                        else:
                            site.page(f"/page{n}", f"Page {n}", text(n + 1))
                status = await engine.sync(connector)
                far = f", {latency * 1000:.0f} ms a page" if latency else ""
                kind = "folder" if folder else f"web ({'dated' if dated else 'undated'}, {concurrency} at once{far})"
                print(f"{kind} {pages} pages, {label}: {status.seconds:.2f} s ({status.summary()})")
        finally:
            site.server.stop()
            kb.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--folder", action="store_true")
    parser.add_argument("--dated", action="store_true", help="the sitemap gives each page's <lastmod>")
    parser.add_argument("--concurrency", type=int, default=8, help="requests to the site at once")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the site takes per page, as a far one")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.pages, arguments.folder, arguments.dated, arguments.concurrency, arguments.latency))
