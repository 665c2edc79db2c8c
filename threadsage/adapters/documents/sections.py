"""What every parser (Markdown, HTML, Word, PDF, plain text) produces: a document's text as
sections under heading paths, cleaned the same way whatever the format, or `UnreadableDocument`.

A section is a run of text under one heading path (("Leave", "Sick leave") for a `###` under a
`##`), which is what a citation later points at. These types live apart from `loaders` so that
the parsers and the loaders that dispatch to them both import them, and neither imports the other's caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class UnreadableDocument(Exception):
    """A file that cannot be turned into text: binary, empty, undecodable or corrupt."""


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


def finished(title: str, sections: list[Section]) -> tuple[str, tuple[Section, ...]]:
    """The cleaned title and sections a parser produced; `UnreadableDocument` when none has text."""
    cleaned = clean_sections(sections)
    if not cleaned:
        raise UnreadableDocument("no text found")
    return clean_text(title), cleaned


_LINE_BREAK = re.compile(r"\r\n?|[\x0b\x0c\x85]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """Text without control characters (tab and newline stay; CR, CRLF, vertical tab, form feed
    and NEL become newlines): terminal escapes, NULs and the like in a document would otherwise
    reach every place an answer quotes it, and some renderers treat them as markup."""
    return _CONTROL.sub("", _LINE_BREAK.sub("\n", text))


def clean_sections(sections: list[Section]) -> tuple[Section, ...]:
    """Sections with their headings and text cleaned (`clean_text`); those left without text dropped."""
    cleaned = (Section(tuple(clean_text(h) for h in s.heading_path), clean_text(s.text).strip()) for s in sections)
    return tuple(s for s in cleaned if s.text)
