"""Ingesting a folder other people can write to: links that lead out of it, control characters in it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.made_files import write
from threadsage.adapters.documents.loaders import load_file
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.ingestion.pipeline import Ingestor

CANARY = "hunter2-canary"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def ingestor(kb: KnowledgeBase) -> Ingestor:
    return Ingestor(kb, chunk_chars=1200, chunk_overlap=200)


def planted(tmp_path: Path) -> Path:
    """docs/ with one real page, a link that stays inside and links that lead out of it."""
    project = tmp_path / "project"
    write(project / ".env", f"DATABASE_PASSWORD={CANARY}\n")
    write(project / "notes.md", f"# Notes\n\nThe {CANARY} beside the docs.\n")
    write(tmp_path / "elsewhere" / "leak.md", f"# Leak\n\nThe {CANARY} in another folder.\n")
    docs = project / "docs"
    write(docs / "guide.md", "# Guide\n\nThe VPN guide.\n")
    (docs / "x.txt").symlink_to("../.env")
    (docs / "env").symlink_to("../.env")  # no supported suffix: reported all the same
    (docs / "notes.md").symlink_to(project / "notes.md")
    (docs / "mounted").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (docs / "sub").mkdir()
    (docs / "sub" / "up").symlink_to("../..", target_is_directory=True)
    (docs / "alias.md").symlink_to("guide.md")  # stays inside: followed
    (docs / "loop").symlink_to(".", target_is_directory=True)  # stays inside: not walked, no loop
    return docs.resolve()


def test_links_out_of_the_ingested_folder_are_skipped_and_reported(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = planted(tmp_path)
    report = ingestor(kb).ingest_paths([docs])
    assert sorted(Path(path).relative_to(docs).as_posix() for path, _ in report.skipped) == [
        "env",
        "mounted",
        "notes.md",
        "sub/up",
        "x.txt",
    ]
    assert {reason for _, reason in report.skipped} == {f"symbolic link to outside {docs}"}
    assert sorted(hit.path for hit in kb.search_blocking("VPN guide", k=10)) == ["alias.md", "guide.md"]
    assert not [hit for hit in kb.search_blocking(f"DATABASE_PASSWORD {CANARY} notes leak", k=20) if CANARY in hit.text]


def test_a_named_file_may_not_lead_out_of_its_folder_either(kb: KnowledgeBase, tmp_path: Path) -> None:
    """`threadsage ingest docs/*` names every link of the folder: each is held to the folder."""
    docs = planted(tmp_path)
    report = ingestor(kb).ingest_paths([docs / "x.txt", docs / "notes.md", docs / "alias.md"])
    assert sorted(Path(path).name for path, _ in report.skipped) == ["notes.md", "x.txt"]
    assert report.new == 1 and [hit.path for hit in kb.search_blocking("VPN guide", k=10)] == ["alias.md"]
    assert not [hit for hit in kb.search_blocking(f"DATABASE_PASSWORD {CANARY} notes", k=20) if CANARY in hit.text]


def test_control_characters_are_stripped_and_line_ends_normalised(tmp_path: Path) -> None:
    file = write(tmp_path / "pl\x1bain.txt", "Ti\x07tle\r\na\r\nb\rc\x01d\x1b[0me\tf\x0bg\x0ch\x7fi\x85j\x9bk\n")
    doc = load_file(file, tmp_path)
    assert (doc.title, doc.path, [s.text for s in doc.sections]) == (
        "Title",
        "plain.txt",
        ["Title\na\nb\ncd[0me\tf\ng\nhi\njk"],
    )


def test_no_stored_chunk_holds_a_control_character(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    padding = "Plain words to pass the binary check. " * 250  # a NUL in the first 8 KiB means a binary file
    write(
        docs / "notes.md",
        f"# Ti\x07tle\x1b[31m\r\n\r\n## Sec\x01tion\r\nBell\x07 and \x1b[1mbold\x1b[0m\rnext line\x0bvertical"
        f"\x0cpage\x7f\x85\n{padding}\n\n## Last\n\x00<1>\x00 closing words\x00\n",
    )
    write(docs / "page.html", "<h2>Head&#1;ing\x02</h2><p>Para\x01graph with \x1f marks&#x7f;</p>")
    write(docs / "plain.txt", "Plain\x06 text\x1b]8;;evil\x07 file\r\n")
    report = ingestor(kb).ingest_paths([docs])
    assert report.ok and report.new == 3
    hits = kb.search_blocking("bold next line vertical page plain words closing paragraph marks text file", k=100)
    # every section of every file: a hit joins the pieces of its section (`search.by_place`)
    assert {hit.path for hit in hits} == {"notes.md", "page.html", "plain.txt"} and len(hits) > 3
    for hit in hits:
        assert not CONTROL.search(hit.text + hit.title + hit.heading + hit.path), hit
    assert any("closing words" in hit.text for hit in hits)
