"""Rendered segments → pieces within a platform's limit, never cut inside a tag or an entity.

A piece is cut at a blank line if one lies in its last quarter, else at a line end, else at a
space, else where the limit falls; the tags open at the cut are closed there and reopened in the
next piece. Lengths are UTF-16 units, as Telegram counts them (never fewer than Slack's characters).
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from threadsage.bots.render.layout import MAX_TAG
from threadsage.bots.render.segments import CLOSE, Segment, Tag, join, units

MIN_LIMIT = 4 * MAX_TAG  # room for a piece's text beside the longest tags it may have to reopen and close
_CUTS = ("\n\n", "\n", " ")  # preferred first


class _Kind(Enum):
    TEXT = 0
    OPEN = 1
    CLOSE = 2


def pack(segments: list[Segment], limit: int) -> list[str]:
    """The segments as pieces of at most `limit` units each (empty pieces included: callers drop them)."""
    if limit < MIN_LIMIT:
        raise ValueError(f"pieces must allow at least {MIN_LIMIT} characters")
    packer = _Packer(limit)
    for segment in segments:
        packer.add(segment)
    packer.flush(len(packer.entries), 0, 0)
    return packer.pieces


def fit(text: str, room: int) -> int:
    """How many characters of escaped `text` fit in `room` units without cutting an entity such as &amp;."""
    k = max(min(len(text), room), 0)
    while k > 0 and (over := units(text[:k]) - room) > 0:
        k = max(k - over, 0)
    entity = text.rfind("&", max(0, k - 7), k)
    return entity if entity >= 0 and ";" not in text[entity:k] else k


class _Entry(NamedTuple):
    kind: _Kind
    segment: Segment
    open_before: tuple[Tag, ...]
    size: int


class _Packer:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pieces: list[str] = []
        self.entries: list[_Entry] = []  # the piece so far; tags reopened after a cut come first
        self.used = 0  # units of the entries
        self.stack: tuple[Tag, ...] = ()
        self.closing = 0  # units of the ends of the tags in the stack

    def room(self) -> int:
        return self.limit - self.used - self.closing

    def append(self, kind: _Kind, segment: Segment, size: int) -> None:
        self.entries.append(_Entry(kind, segment, self.stack, size))
        self.used += size

    def add(self, segment: Segment) -> None:
        if isinstance(segment, str):
            while units(segment) > self.room():
                k = fit(segment, self.room())
                if k:
                    self.append(_Kind.TEXT, segment[:k], units(segment[:k]))
                segment = segment[k:]
                self.cut()
            if segment:
                self.append(_Kind.TEXT, segment, units(segment))
        elif isinstance(segment, Tag):
            if units(segment.start) + units(segment.end) > self.room():
                self.cut()
            self.append(_Kind.OPEN, segment, units(segment.start))
            self.stack += (segment,)
            self.closing += units(segment.end)
        else:
            size = units(self.stack[-1].end)
            self.append(_Kind.CLOSE, segment, size)
            self.stack = self.stack[:-1]
            self.closing -= size

    def cut(self) -> None:
        """End the piece at the best place in its last quarter; what follows moves to the next piece."""
        budget = self.limit // 4
        best: dict[int, tuple[int, int, int]] = {}
        tail = 0
        for i in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[i]
            if entry.kind is _Kind.TEXT:
                assert isinstance(entry.segment, str)
                for rank, mark in enumerate(_CUTS):
                    at = entry.segment.rfind(mark)
                    if rank not in best and at >= 0 and tail + units(entry.segment[at + len(mark) :]) <= budget:
                        best[rank] = (i, at, len(mark))
            tail += entry.size
            if tail > budget or len(best) == len(_CUTS):
                break
        self.flush(*best[min(best)]) if best else self.flush(len(self.entries), 0, 0)

    def flush(self, index: int, at: int, skip: int) -> None:
        """Emit the entries before `index`, and the first `at` characters of entry `index`, as a piece;
        the rest (less `skip` characters at the cut) starts the next piece, after the tags open there."""
        head, rest = self.entries[:index], self.entries[index:]
        open_at = rest[0].open_before if rest else self.stack
        if at or skip:
            first = rest[0]
            assert isinstance(first.segment, str)
            head.append(first._replace(segment=first.segment[:at]))
            rest[0] = first._replace(segment=first.segment[at + skip :], size=units(first.segment[at + skip :]))
        self.pieces.append(join([entry.segment for entry in head] + [CLOSE] * len(open_at)))
        reopened = [_Entry(_Kind.OPEN, tag, open_at[:depth], units(tag.start)) for depth, tag in enumerate(open_at)]
        self.entries = reopened + rest
        self.used = sum(entry.size for entry in self.entries)
