from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.locations import HANDBOOK
from tests.helpers.made_files import pdf_file, write
from threadsage.adapters.documents.loaders import discover_files, load_file, load_jsonl_corpus
from threadsage.adapters.documents.sections import UnreadableDocument


def make_pdf(pages: list[str], title: str = "") -> bytes:
    """A minimal but valid PDF with one Helvetica text line per page."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids).encode()
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(len(pages)).encode() + b" >>")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for page_id, text in zip(page_ids, pages, strict=True):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    info_id = len(objects) + 1
    objects.append(f"<< /Title ({title}) >>".encode())
    return pdf_file(objects, info_id)


def test_markdown_front_matter_headings_and_shortcodes(tmp_path: Path) -> None:
    file = write(
        tmp_path / "people" / "leave.md",
        "---\ntitle: Leave policy\nowner: people-team\n---\n"
        "Intro text.\n\n"
        "## Annual leave\nEmployees get 25 days.\n"
        "{{< note >}}Ask early.{{< /note >}}\n"
        '{{% panel header="**Carry over**" %}}Five days.{{% /panel %}}\n'
        "### Carry-over\nUntil 31 March.\n"
        "```bash\n# not a heading\necho hi\n```\n"
        "## Sick leave {#sick}\nTen days.\n",
    )
    doc = load_file(file, tmp_path, category="people")
    assert doc.title == "Leave policy"
    assert doc.path == "people/leave.md"
    assert doc.category == "people"
    paths = [s.heading_path for s in doc.sections]
    assert paths == [(), ("Annual leave",), ("Annual leave", "Carry-over"), ("Sick leave",)]
    annual = doc.sections[1].text
    assert "Ask early." in annual and "{{" not in annual and "Carry over" in annual
    assert "# not a heading" in doc.sections[2].text  # code blocks are not split on '#'


def test_markdown_title_falls_back_to_h1_then_file_name(tmp_path: Path) -> None:
    with_h1 = load_file(write(tmp_path / "a.md", "# The Title\n\nBody text.\n"), tmp_path)
    assert with_h1.title == "The Title"
    assert with_h1.sections[0].heading_path == ()
    repeated = "---\ntitle: The Title\n---\n# The Title\n\nIntro.\n\n## Part\nText.\n"
    both = load_file(write(tmp_path / "b.md", repeated), tmp_path)
    assert [s.heading_path for s in both.sections] == [(), ("Part",)]
    bare = load_file(write(tmp_path / "expense-rules.md", "Body only.\n"), tmp_path)
    assert bare.title == "Expense rules"


def test_broken_front_matter_is_treated_as_text(tmp_path: Path) -> None:
    doc = load_file(write(tmp_path / "x.md", "---\ntitle: [unclosed\n---\nBody.\n"), tmp_path)
    assert doc.title == "X"
    assert "Body." in doc.sections[-1].text


def test_html_sections_follow_headings(tmp_path: Path) -> None:
    file = write(
        tmp_path / "conduct.html",
        "<html><head><title>Code of conduct</title><style>p{}</style></head><body>"
        "<nav>Home | About</nav><h1>Code of conduct</h1><p>Be kind.</p>"
        "<h2>Reporting</h2><p>Write to <a href='mailto:x'>ethics</a>.</p>"
        "<ul><li>Anonymous form</li><li><p>Hotline</p></li></ul>"
        "<h3>Deadlines</h3><table><tr><th>Step</th><th>Days</th></tr><tr><td>Reply</td><td>5</td></tr></table>"
        "<script>alert(1)</script></body></html>",
    )
    doc = load_file(file, tmp_path)
    assert doc.title == "Code of conduct"
    by_path = {s.heading_path: s.text for s in doc.sections}
    assert by_path[()] == "Be kind."
    assert "Write to ethics" in by_path[("Reporting",)]
    assert by_path[("Reporting",)].count("Hotline") == 1  # nested blocks are not doubled
    assert "Reply | 5" in by_path[("Reporting", "Deadlines")]
    assert "alert" not in str(by_path) and "Home | About" not in str(by_path)


def test_plain_text_is_one_section_titled_by_its_first_line(tmp_path: Path) -> None:
    doc = load_file(write(tmp_path / "wifi.txt", "Office Wi-Fi\n\nThe network is LarkNet.\n"), tmp_path)
    assert doc.title == "Office Wi-Fi"
    assert len(doc.sections) == 1 and "LarkNet" in doc.sections[0].text


def test_pdf_pages_become_sections(tmp_path: Path) -> None:
    file = write(tmp_path / "policy.pdf", make_pdf(["Hotel cap is 130 EUR", "Meals 50 EUR"], "Travel policy"))
    doc = load_file(file, tmp_path)
    assert doc.title == "Travel policy"
    assert [s.heading_path for s in doc.sections] == [("Page 1",), ("Page 2",)]
    assert "130 EUR" in doc.sections[0].text


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.md", "  \n\n", "empty file"),
        ("blob.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        ("latin.txt", "caf\xe9 au lait".encode("latin-1"), "not UTF-8 text"),
        ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "not a readable PDF"),
        ("headings-only.md", "# Title\n## Nothing here\n", "no text found"),
    ],
)
def test_unreadable_files_say_why(tmp_path: Path, name: str, content, reason: str) -> None:
    with pytest.raises(UnreadableDocument, match=reason):
        load_file(write(tmp_path / name, content), tmp_path)


def test_discovery_skips_hidden_files_and_reports_unsupported_types(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "A")
    write(tmp_path / "sub" / "b.html", "<p>B</p>")
    write(tmp_path / ".git" / "config.md", "hidden")
    write(tmp_path / "logo.png", b"\x89PNG")
    found, unsupported = discover_files([tmp_path])
    assert sorted(f.relative_to(tmp_path).as_posix() for f, _ in found) == ["a.md", "sub/b.html"]
    assert [p.name for p in unsupported] == ["logo.png"]


def test_jsonl_corpus(tmp_path: Path) -> None:
    file = write(
        tmp_path / "corpus.jsonl",
        '{"_id": "D1", "title": "标题", "text": "正文内容"}\n\n{"_id": "D2", "text": ""}\n',
    )
    docs = list(load_jsonl_corpus(file))
    assert [(d.path, d.title) for d in docs] == [("D1", "标题")]


def test_every_bundled_handbook_page_loads() -> None:
    files, unsupported = discover_files([HANDBOOK])
    assert not unsupported
    suffixes = {file.suffix for file, _ in files}
    assert {".md", ".txt", ".html"} <= suffixes
    for file, root in files:
        doc = load_file(file, root)
        assert doc.title and doc.sections, file
