"""Document loaders: Markdown, plain text, HTML, PDF and Word files become `Document`s made of sections.

Loaders never guess at layout they cannot see: plain text is one section (see `sections`), a PDF
has one section per page. `parse_bytes` is the part that needs no file: files attached to a
question go through it too, images among them. Markdown's own rules (front matter, shortcodes,
headings) are in `markdown`, HTML's in `html_pages`, Word's in `word`, an image's (OCR) in `images`.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from threadsage.adapters.documents.html_pages import parse_html
from threadsage.adapters.documents.images import IMAGE_SUFFIXES, parse_image
from threadsage.adapters.documents.links import document_url
from threadsage.adapters.documents.markdown import parse_markdown
from threadsage.adapters.documents.sections import (
    Section,
    UnreadableDocument,
    clean_sections,
    clean_text,
    finished,
)
from threadsage.adapters.documents.word import parse_docx

MARKDOWN_SUFFIXES = {".md", ".markdown"}
TEXT_SUFFIXES = {".txt", ".text"}
HTML_SUFFIXES = {".html", ".htm"}
PDF_SUFFIXES = {".pdf"}
DOCX_SUFFIXES = {".docx"}
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES | DOCX_SUFFIXES


MAX_PDF_PAGES = 1000
MAX_PDF_CHARS = 2_000_000  # of extracted text: a few MB of PDF can unpack to far more text than is useful


class DocumentTooLong(UnreadableDocument):
    """A PDF past `MAX_PDF_PAGES` or `MAX_PDF_CHARS`: refused whole rather than cut, so that no
    answer rests on part of a file without saying so, and parsing stays bounded."""


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
        return doc_id_of(self.source)


def doc_id_of(source: str) -> str:
    """A document's id: what its chunks are stored under, and what the answers citing it record."""
    return hashlib.sha1(source.encode("utf-8")).hexdigest()[:20]


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
    """The title and cleaned sections of a file's bytes, read as the type its name's suffix says
    (an image's by OCR); `UnreadableDocument` if there is no text. The caller checks that the
    suffix is supported."""
    if not data.strip():
        raise UnreadableDocument("empty file")
    suffix, fallback = Path(name).suffix.lower(), _title_from_name(Path(name))
    if suffix in PDF_SUFFIXES:
        title, sections = parse_pdf(data, fallback_title=fallback)
    elif suffix in DOCX_SUFFIXES:
        title, sections = parse_docx(data, fallback_title=fallback)
    elif suffix in IMAGE_SUFFIXES:  # sent with questions only: `discover_files` leaves images out
        title, sections = parse_image(data, fallback_title=fallback)
    else:
        text = _decode_text(data)
        if suffix in MARKDOWN_SUFFIXES:
            title, sections = parse_markdown(text, fallback_title=fallback)
        elif suffix in HTML_SUFFIXES:
            title, sections = parse_html(text, fallback_title=fallback)
        else:
            title, sections = parse_plain_text(text, fallback_title=fallback)
    return finished(title, sections)


def load_jsonl_corpus(file: Path, category: str = "") -> Iterator[Document]:
    """Documents from a JSON-lines corpus (BEIR style: `_id`, `title`, `text` per line)."""
    with file.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            sections = clean_sections([Section((), str(row.get("text", "")))])
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
