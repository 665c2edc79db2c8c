"""Document loaders: Markdown, plain text, HTML, PDF and Word files become `Document`s made of sections.

A section is a run of text under one heading path (("Leave", "Sick leave") for a `###` under a
`##`), which is what a citation later points at. Loaders never guess at layout they cannot see:
plain text is one section, a PDF has one section per page. `parse_bytes` is the part that needs
no file: files attached to a question go through it too. Markdown's own rules (front matter,
shortcodes, headings) are in `markdown`, Word's in `word`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from threadsage.adapters.documents.links import document_url

MARKDOWN_SUFFIXES = {".md", ".markdown"}
TEXT_SUFFIXES = {".txt", ".text"}
HTML_SUFFIXES = {".html", ".htm"}
PDF_SUFFIXES = {".pdf"}
DOCX_SUFFIXES = {".docx"}
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES | DOCX_SUFFIXES


MAX_PDF_PAGES = 1000
MAX_PDF_CHARS = 2_000_000  # of extracted text: a few MB of PDF can unpack to far more text than is useful


class UnreadableDocument(Exception):
    """A file that cannot be turned into text: binary, empty, undecodable or corrupt."""


class DocumentTooLong(UnreadableDocument):
    """A PDF past `MAX_PDF_PAGES` or `MAX_PDF_CHARS`: refused whole rather than cut, so that no
    answer rests on part of a file without saying so, and parsing stays bounded."""


@dataclass(frozen=True)
class Section:
    heading_path: tuple[str, ...]
    text: str


class SectionBuilder:
    """Lines gathered under the heading path in force. Markdown, HTML and Word nest their sections
    the same way: a heading ends the section before it and any open heading at its level or deeper."""

    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.stack: list[tuple[int, str]] = []  # (level, name) of the open headings, outermost first
        self.lines: list[str] = []

    def flush(self) -> None:
        """The lines so far become a section (unless they are blank)."""
        body = "\n".join(self.lines).strip()
        if body:
            self.sections.append(Section(tuple(h for _, h in self.stack), body))
        self.lines.clear()

    def heading(self, level: int, name: str) -> None:
        self.flush()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, name))


@dataclass(frozen=True)
class Document:
    """One source document. `source` is its identity (absolute path or URL); `path` is how
    citations show it (relative to the folder it was ingested from)."""

    source: str
    path: str
    title: str
    sections: tuple[Section, ...]
    content_hash: str
    category: str = ""
    updated_at: int = 0
    url: str = ""  # where people can read it on the web (see `links`); "" = nowhere, cite the path

    @property
    def doc_id(self) -> str:
        return hashlib.sha1(self.source.encode("utf-8")).hexdigest()[:20]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def discover_files(paths: list[Path]) -> tuple[list[tuple[Path, Path]], list[Path]]:
    """Expand files and folders into (file, root) pairs of supported documents.

    Returns the supported files (with the folder they were found under, for display paths) and
    the files passed over because their type is not supported. Hidden files and folders are
    ignored, as editors and version control keep their own files there.

    Folders are walked without entering linked folders: one inside the folder holds nothing the
    walk does not find anyway, and not entering it means no loops. Symbolic links that lead out
    of their folder are returned among the files whatever they point at, so that `load_file`
    refuses them and the report names them (a planted `docs/x.txt -> ../.env` must not be read).
    """
    found: list[tuple[Path, Path]] = []
    unsupported: list[Path] = []
    for given in paths:
        given = named_path(given)
        if given.is_dir():
            candidates, root = sorted(given.rglob("*")), given
        else:
            candidates, root = [given], given.parent
        for file in candidates:
            relative = file.relative_to(root)
            if any(part.startswith(".") for part in relative.parts):
                continue
            if file.is_symlink() and _leads_out(file, root):
                found.append((file, root))
            elif not file.is_file():
                continue
            elif file.suffix.lower() in SUPPORTED_SUFFIXES:
                found.append((file, root))
            else:
                unsupported.append(file)
    return found, unsupported


def named_path(path: Path) -> Path:
    """A path as an operator named it, made absolute: a folder resolved (it may itself be a link
    the operator chose), a file resolved up to its own name, as a link there is held to its folder."""
    path = path.absolute()
    return path.resolve() if path.is_dir() else path.parent.resolve() / path.name


Parse = Callable[[bytes, str], tuple[str, tuple[Section, ...]]]


def load_file(file: Path, root: Path, category: str = "", base_url: str = "", parse: Parse | None = None) -> Document:
    """Read one file into a `Document`, or raise `UnreadableDocument` saying why not. A file whose
    real path is outside `root` (through a symbolic link) is refused, not read. Its link: see `links`.
    `parse`: `parse_bytes` or one bounding it (ingestion reads within `reading`'s budget)."""
    root, real = root.resolve(), file.resolve()
    if not real.is_relative_to(root):
        raise UnreadableDocument(f"symbolic link to outside {root}")
    try:
        data = real.read_bytes()
        mtime = int(file.stat().st_mtime)
    except OSError as exc:
        raise UnreadableDocument(f"cannot read: {exc.strerror or exc}") from exc
    title, sections = (parse or parse_bytes)(data, file.name)
    relative = file.relative_to(root).as_posix()
    markdown = _decode_text(data) if file.suffix.lower() in MARKDOWN_SUFFIXES else None
    return Document(
        source=str(file),
        path=clean_text(relative),
        title=title,
        sections=sections,
        content_hash=content_hash(data),
        category=category,
        updated_at=mtime,
        url=document_url(relative, markdown, base_url),
    )


def parse_bytes(data: bytes, name: str) -> tuple[str, tuple[Section, ...]]:
    """The title and cleaned sections of a file's bytes, read as the type its name's suffix says;
    `UnreadableDocument` if there is no text. The caller checks that the suffix is supported."""
    if not data.strip():
        raise UnreadableDocument("empty file")
    suffix, fallback = Path(name).suffix.lower(), _title_from_name(Path(name))
    if suffix in PDF_SUFFIXES:
        title, sections = parse_pdf(data, fallback_title=fallback)
    elif suffix in DOCX_SUFFIXES:
        from threadsage.adapters.documents.word import parse_docx

        title, sections = parse_docx(data, fallback_title=fallback)
    else:
        from threadsage.adapters.documents.markdown import parse_markdown  # which builds on this module's sections

        text = _decode_text(data)
        if suffix in MARKDOWN_SUFFIXES:
            title, sections = parse_markdown(text, fallback_title=fallback)
        elif suffix in HTML_SUFFIXES:
            from threadsage.adapters.documents.html_pages import parse_html

            title, sections = parse_html(text, fallback_title=fallback)
        else:
            title, sections = parse_plain_text(text, fallback_title=fallback)
    return finished(title, sections)


def finished(title: str, sections: list[Section]) -> tuple[str, tuple[Section, ...]]:
    """The cleaned title and sections a loader produced; `UnreadableDocument` when none has text."""
    cleaned = _clean_sections(sections)
    if not cleaned:
        raise UnreadableDocument("no text found")
    return clean_text(title), cleaned


def load_jsonl_corpus(file: Path, category: str = "") -> Iterator[Document]:
    """Documents from a JSON-lines corpus (BEIR style: `_id`, `title`, `text` per line)."""
    with file.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            sections = _clean_sections([Section((), str(row.get("text", "")))])
            if not sections:
                continue
            doc_id = str(row["_id"])
            title = clean_text(str(row.get("title") or doc_id))
            yield Document(
                source=f"{file.name}#{doc_id}",
                path=clean_text(doc_id),
                title=title,
                sections=sections,
                content_hash=content_hash(line.encode("utf-8")),
                category=category,
            )


# --- formats (Markdown in `markdown`) --------------------------------------------------------


def parse_plain_text(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = first_line if 0 < len(first_line) <= 100 else fallback_title
    return title, [Section((), text.strip())]


def parse_pdf(data: bytes, fallback_title: str) -> tuple[str, list[Section]]:
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise UnreadableDocument("encrypted PDF")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise DocumentTooLong(f"PDF of more than {MAX_PDF_PAGES} pages")
        pages, total = [], 0
        for page in reader.pages:  # stops at the cap rather than extracting everything first
            pages.append((page.extract_text() or "").strip())
            total += len(pages[-1])
            if total > MAX_PDF_CHARS:
                raise DocumentTooLong(f"PDF of more than {MAX_PDF_CHARS} characters of text")
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise UnreadableDocument(f"not a readable PDF ({exc.__class__.__name__})") from exc
    sections = [Section((f"Page {n}",), text) for n, text in enumerate(pages, start=1) if text]
    return meta_title.strip() or fallback_title, sections


# --- helpers -------------------------------------------------------------------------------

_LINE_BREAK = re.compile(r"\r\n?|[\x0b\x0c\x85]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """Text without control characters (tab and newline stay; CR, CRLF, vertical tab, form feed
    and NEL become newlines): terminal escapes, NULs and the like in a document would otherwise
    reach every place an answer quotes it, and some renderers treat them as markup."""
    return _CONTROL.sub("", _LINE_BREAK.sub("\n", text))


def _clean_sections(sections: list[Section]) -> tuple[Section, ...]:
    cleaned = (Section(tuple(clean_text(h) for h in s.heading_path), clean_text(s.text).strip()) for s in sections)
    return tuple(s for s in cleaned if s.text)


def _leads_out(link: Path, root: Path) -> bool:
    """Whether a symbolic link's target is outside `root` (a resolved path)."""
    return not link.resolve().is_relative_to(root)


def _decode_text(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise UnreadableDocument("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument("not UTF-8 text") from exc


def _title_from_name(file: Path) -> str:
    return re.sub(r"[-_]+", " ", file.stem).strip().capitalize() or file.name
