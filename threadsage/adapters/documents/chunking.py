"""Chunking that follows the heading structure of a document.

Every chunk carries the heading path it sits under, so a citation can say "Leave › Sick leave".
Small neighbouring sections under the same top-level heading are packed together (a lone
three-line section makes a poor search unit); long sections are split on paragraph, then
sentence, boundaries with an overlap so that a fact on a boundary is whole in one of the pieces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from threadsage.adapters.documents.loaders import Document

HEADING_SEPARATOR = " > "


@dataclass(frozen=True)
class Chunk:
    document: Document
    index: int
    heading_path: tuple[str, ...]
    text: str

    @property
    def id(self) -> str:
        """Unique per version of the document too: a new version is written beside the old one,
        which is deleted after, so a search in between sees one version or the other, whole."""
        return f"{self.document.doc_id}-{self.document.content_hash[:8]}-{self.index:05d}"

    @property
    def heading(self) -> str:
        return HEADING_SEPARATOR.join(self.heading_path)

    @property
    def search_text(self) -> str:
        """What the search index sees: the body under its title and headings, which often
        hold the very words a question uses ("Sick leave", "Hotel limits")."""
        return "\n".join(part for part in (self.document.title, self.heading, self.text) if part)


@dataclass
class _Block:
    path: tuple[str, ...]
    text: str
    whole_section: bool


def chunk_document(document: Document, max_chars: int, overlap: int) -> list[Chunk]:
    blocks: list[_Block] = []
    for section in document.sections:
        pieces = split_text(section.text.strip(), max_chars, overlap)
        blocks.extend(_Block(section.heading_path, piece, len(pieces) == 1) for piece in pieces)

    packed: list[tuple[tuple[str, ...], list[_Block]]] = []
    for block in blocks:
        if packed and block.whole_section:
            path, members = packed[-1]
            fits = _rendered_length(path, [*members, block]) <= max_chars
            same_part = path[:1] == block.path[:1] and all(m.whole_section for m in members)
            if fits and same_part:
                members.append(block)
                packed[-1] = (_common_prefix(path, block.path), members)
                continue
        packed.append((block.path, [block]))

    return [Chunk(document, index, path, _render(path, members)) for index, (path, members) in enumerate(packed)]


def split_text(text: str, max_chars: int, overlap: int) -> list[str]:
    """Split text into pieces of at most `max_chars`, each starting with up to `overlap`
    characters of whole sentences or paragraphs from the end of the previous one."""
    if len(text) <= max_chars:
        return [text]
    units = _units(text, max_chars)
    pieces: list[str] = []
    current: list[str] = []
    for unit in units:
        if current and len(_join([*current, unit])) > max_chars:
            pieces.append(_join(current))
            carried: list[str] = []
            for previous in reversed(current):
                if len(_join([previous, *carried])) > overlap:
                    break
                carried.insert(0, previous)
            current = carried if len(_join([*carried, unit])) <= max_chars else []
        current.append(unit)
    if current:
        pieces.append(_join(current))
    return pieces


_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])")


def _units(text: str, max_chars: int) -> list[str]:
    """Paragraphs; a paragraph too long becomes sentences; a sentence too long is cut."""
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            units.append(paragraph)
            continue
        for sentence in _SENTENCE_END.split(paragraph):
            sentence = sentence.strip()
            while len(sentence) > max_chars:
                cut = sentence.rfind(" ", 0, max_chars)
                cut = cut if cut > max_chars // 2 else max_chars
                units.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence:
                units.append(sentence)
    return units


def _join(units: list[str]) -> str:
    return "\n\n".join(units)


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    common = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common.append(x)
    return tuple(common)


def _render(path: tuple[str, ...], members: list[_Block]) -> str:
    """Members under deeper headings than the chunk's own path keep their heading as a line."""
    parts = []
    for block in members:
        if len(block.path) > len(path):
            parts.append(f"{'#' * (len(block.path) + 1)} {block.path[-1]}\n{block.text}")
        else:
            parts.append(block.text)
    return _join(parts)


def _rendered_length(path: tuple[str, ...], members: list[_Block]) -> int:
    common = path
    for block in members:
        common = _common_prefix(common, block.path)
    return len(_render(common, members))
