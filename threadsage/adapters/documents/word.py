"""Word (.docx) files as sections, for `loaders.parse_bytes` (python-docx parses them)."""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from lxml.etree import LxmlError

from threadsage.adapters.documents.sections import Section, SectionBuilder, UnreadableDocument

MAX_DOCX_UNPACKED = 200 * 1024 * 1024  # a Word file is a zip: refuse one that would unpack past this


def parse_docx(data: bytes, fallback_title: str) -> tuple[str, list[Section]]:
    """Word's heading styles ("Heading 1"…) make the sections, as `#` headings do in Markdown; a
    "Title" paragraph (or the core properties' title) is the title; table rows are lines."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if sum(info.file_size for info in archive.infolist()) > MAX_DOCX_UNPACKED:
                raise UnreadableDocument("Word file unpacks too large")
        document = docx.Document(io.BytesIO(data))
        title = document.core_properties.title or ""
        blocks = list(document.iter_inner_content())
    except (zipfile.BadZipFile, PackageNotFoundError, LxmlError, KeyError, ValueError) as exc:
        raise UnreadableDocument(f"not a readable Word file ({exc.__class__.__name__})") from exc
    out = SectionBuilder()
    for block in blocks:
        if isinstance(block, Table):
            out.lines.extend(" | ".join(cell.text.strip() for cell in row.cells) for row in block.rows)
            continue
        text, style = block.text.strip(), (block.style.name if block.style is not None else "") or ""
        level = _DOCX_HEADING.match(style)
        if style == "Title" and text and not title:
            title = text
        elif level and text:
            out.heading(int(level.group(1)), text)
        elif text:
            out.lines.append(text)
    out.flush()
    return title.strip() or fallback_title, out.sections


_DOCX_HEADING = re.compile(r"^Heading (\d)$")
