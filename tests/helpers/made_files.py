"""Small real files made in the tests themselves: a PDF (pypdf reads its text), a Word file, and any file
written where it goes (`write`)."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import docx

PAGE = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>"


def pdf_bytes(*lines: str, pages: int = 1) -> bytes:
    """A PDF 1.4 of `pages` pages, each with each line as text in Helvetica, with a correct
    cross-reference table."""
    content = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({_pdf_escape(line)}) Tj T*" for line in lines) + " ET"
    kids = " ".join(f"{5 + n} 0 R" for n in range(pages))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    objects += [PAGE] * pages  # every page shows the same content stream
    return pdf_file([body.encode("latin-1") for body in objects])


def pdf_file(objects: list[bytes], info: int | None = None) -> bytes:
    """A PDF 1.4 of these objects (numbered from 1, the catalog first) with its cross-reference table;
    `info`, the number of the document information object, if one of them is."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    described = f" /Info {info} 0 R" if info else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{described} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def docx_bytes(title: str, sections: dict[str, str]) -> bytes:
    """A Word file: the title, then a "Heading 1" and a paragraph for each section."""
    document = docx.Document()
    document.add_heading(title, level=0)
    for heading, text in sections.items():
        document.add_heading(heading, level=1)
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def empty_text_pdf(pages: int = 1000, operators: int = 900_000) -> bytes:
    """A hostile PDF: `pages` pages sharing one compressed content stream of `operators` empty
    `() Tj` operators — about 142 KB, no text at all, hours of pypdf's time."""
    stream = zlib.compress(b"BT /F1 12 Tf " + b"() Tj " * operators + b"ET", 9)
    kids = " ".join(f"{5 + n} 0 R" for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode() + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    objects += [PAGE.encode()] * pages
    return pdf_file(objects)


def many_paragraphs_docx(paragraphs: int = 10_000) -> bytes:
    """A hostile Word file: `paragraphs` short paragraphs (about 39 KB zipped, seconds to read)."""
    document = docx.Document()
    for n in range(paragraphs):
        document.add_paragraph(f"p{n}")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
