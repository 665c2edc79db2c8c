"""Markdown as the loaders read it: front matter (its `title`; its `url` is read by `links`),
site-generator shortcodes and HTML comments dropped, ATX headings (outside code fences) nesting
the sections. A leading `#` heading that names the page is its title, not a section.
"""

from __future__ import annotations

import re

from threadsage.adapters.documents.links import FRONT_MATTER, front_matter
from threadsage.adapters.documents.sections import Section, SectionBuilder

_SHORTCODE = re.compile(r"\{\{[<%]/?\*?(.*?)\*?/?[%>]\}\}", re.DOTALL)
_SHORTCODE_LABEL = re.compile(r"""\b(?:header|title)\s*=\s*"([^"]*)\"""")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ATX_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def parse_markdown(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    meta = front_matter(text)
    title = str(meta["title"]).strip() if meta.get("title") else None
    text = _HTML_COMMENT.sub("", _strip_shortcodes(FRONT_MATTER.sub("", text, count=1)))

    out = SectionBuilder()
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _ATX_HEADING.match(line)
        if not heading:
            out.lines.append(line)
            continue
        out.flush()
        level, name = len(heading.group(1)), _plain_inline(heading.group(2))
        if level == 1 and not out.sections and not out.stack and name.lower() == (title or name).lower():
            title = name  # the page's own title (often repeating the front matter's), not a section
            continue
        out.heading(level, name)
    out.flush()
    return title or fallback_title, out.sections


def _strip_shortcodes(text: str) -> str:
    """Site-generator shortcodes ({{< … >}}, {{% … %}}) go; a header/title they carry stays."""

    def replace(match: re.Match[str]) -> str:
        label = _SHORTCODE_LABEL.search(match.group(1))
        return _plain_inline(label.group(1)) if label else ""

    return _SHORTCODE.sub(replace, text)


def _plain_inline(text: str) -> str:
    """Heading text without inline Markdown: emphasis markers, code ticks, link targets."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\{#[^}]*\}", "", text)  # heading anchors: "## Title {#anchor}"
    return re.sub(r"[*_`]+", "", text).strip()
