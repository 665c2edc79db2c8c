"""What the renderers produce: text already escaped for its platform, and tags that open and close.

Keeping tags apart from text lets the splitter cut only between characters of text, close every tag
still open at a cut and reopen it in the next piece, so no piece ever ends inside a tag or an entity.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class Tag(NamedTuple):
    """Markup that opens with `start` and, at the matching CLOSE, ends with `end`."""

    start: str
    end: str


class _Close:
    def __repr__(self) -> str:
        return "CLOSE"


CLOSE: Final = _Close()
Segment = str | Tag | _Close


def units(text: str) -> int:
    """Length as the platforms count it: UTF-16 code units (an emoji counts two)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def join(segments: list[Segment]) -> str:
    """The segments as one string; a tag closed right after it opened is left out (platforms reject empty entities)."""
    out: list[str] = []
    opened: list[tuple[Tag, int]] = []
    for segment in segments:
        if isinstance(segment, Tag):
            opened.append((segment, len(out)))
            out.append(segment.start)
        elif isinstance(segment, _Close):
            tag, at = opened.pop()
            if at == len(out) - 1:
                out.pop()
            else:
                out.append(tag.end)
        elif segment:
            out.append(segment)
    return "".join(out)
