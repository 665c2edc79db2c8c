from __future__ import annotations

import itertools

from threadsage.adapters.documents.chunking import chunk_document, split_text
from threadsage.adapters.documents.loaders import Document
from threadsage.adapters.documents.sections import Section


def document(*sections: Section) -> Document:
    return Document(source="/d.md", path="d.md", title="Doc", sections=sections, content_hash="h")


def test_small_sections_under_one_heading_are_packed_with_their_subheadings() -> None:
    doc = document(
        Section(("Leave",), "Intro."),
        Section(("Leave", "Annual"), "25 days."),
        Section(("Leave", "Sick"), "10 days."),
        Section(("Expenses",), "Meals 50 EUR."),
    )
    chunks = chunk_document(doc, max_chars=500, overlap=50)
    assert [c.heading_path for c in chunks] == [("Leave",), ("Expenses",)]
    assert chunks[0].text == "Intro.\n\n### Annual\n25 days.\n\n### Sick\n10 days."
    assert chunks[0].search_text.startswith("Doc\nLeave\nIntro.")
    assert [c.index for c in chunks] == [0, 1]
    assert chunks[1].id.endswith("-00001")


def test_sections_are_not_packed_beyond_the_size_limit() -> None:
    doc = document(Section(("A",), "x" * 80), Section(("A", "B"), "y" * 80))
    chunks = chunk_document(doc, max_chars=120, overlap=0)
    assert [c.heading_path for c in chunks] == [("A",), ("A", "B")]


def test_long_sections_split_with_overlap_and_keep_their_heading() -> None:
    sentences = [f"Sentence number {i} says something." for i in range(60)]
    doc = document(Section(("Long",), " ".join(sentences)))
    chunks = chunk_document(doc, max_chars=300, overlap=80)
    assert len(chunks) > 5
    assert all(c.heading_path == ("Long",) and len(c.text) <= 300 for c in chunks)
    for previous, following in itertools.pairwise(chunks):
        assert following.text.split("\n\n")[0] in previous.text  # the overlap
    joined = " ".join(c.text for c in chunks)
    assert all(s in joined for s in sentences)


def test_split_text_handles_chinese_sentences_and_unbroken_runs() -> None:
    chinese = "。".join(f"第{i}条规定适用于所有员工" for i in range(40)) + "。"
    pieces = split_text(chinese, max_chars=100, overlap=20)
    assert len(pieces) > 3 and all(len(p) <= 100 for p in pieces)
    unbroken = "a" * 1000
    assert all(len(p) <= 300 for p in split_text(unbroken, max_chars=300, overlap=50))
    assert "".join(split_text(unbroken, max_chars=300, overlap=0)) == unbroken
