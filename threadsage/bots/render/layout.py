"""Parser events → segments for one platform, described by a Flavour.

One walk serves every platform: blocks are laid out as lines (quotes and list items become line
prefixes or tags), inline formatting becomes tags. It keeps its own stacks and never recurses, so
nesting depth costs nothing but the levels past MAX_DEPTH are no longer indented.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyromark.event import Event

from threadsage.bots.render.parse import Target, events, label_differs, live_target
from threadsage.bots.render.segments import CLOSE, Segment, Tag, units

MAX_DEPTH = 8  # quote and list levels that indent; deeper ones are laid out flat
MAX_TAG = 600  # a link whose opening tag would be longer is not made live (keeps every cut's reopening small)


@dataclass(frozen=True)
class Flavour:
    """How one platform writes each element; tags are None where the platform has no such markup."""

    escape: Callable[[str], str]
    escape_code: Callable[[str], str]
    strong: Tag | None
    emphasis: Tag | None
    strike: Tag | None
    code: Tag | None
    pre: Tag | None
    quote: Tag | None  # the outermost quote as a tag; nested quotes (or all, without it) get quote_prefix
    quote_prefix: str
    link: Callable[[Target], Tag | None] | None  # None: the target is written after the text instead
    formatting_in_links: bool
    code_inside_formatting: bool  # False: formatting is closed around inline code and reopened after it
    bullet: str = "• "
    rule: str = "———"


@dataclass
class _Container:
    marker: str  # written on the container's first line (a list item's bullet); "" for quotes
    prefix: str  # written on each later line
    tag: bool = False  # a quote written as a tag rather than a prefix


@dataclass
class _Link:
    target: Target | None
    destination: str
    tag: Tag | None
    label: list[str] = field(default_factory=list)


def render(markdown: str, flavour: Flavour) -> list[Segment]:
    """The Markdown as the flavour's segments, tags balanced."""
    walk = _Walk(flavour)
    for event in events(markdown):
        walk.event(event)
    return walk.out


class _Walk:
    def __init__(self, flavour: Flavour) -> None:
        self.f = flavour
        self.out: list[Segment] = []
        self.written = False  # any text so far
        self.in_block = False  # the current block has started its first line
        self.fresh = False  # a line was started and nothing written on it yet
        self.gap = 0  # line breaks owed before the next block
        self.after_paragraph = False  # the last block to end was a paragraph
        self.containers: list[_Container] = []
        self.prefixes: list[str] = []  # each container's continuation prefix, accumulated
        self.line_depth = 0  # containers whose marker is already written
        self.lists: list[int | None] = []  # the next number of each open list; None for bullets
        self.items = 0  # list items open
        self.inline: list[Tag | None] = []  # formatting as opened (None: not written)
        self.written_tags: list[Tag] = []
        self.quote_tag = False
        self.link: _Link | None = None
        self.inner_links = 0  # links and images inside the current one: never live
        self.buffer: list[str] | None = None  # a code or HTML block's text, written at its end
        self.table: list[list[str]] | None = None
        self.cell: list[str] | None = None

    def event(self, event: Event) -> None:
        """One event: a bare string (SoftBreak, HardBreak, Rule) or a dict with a single key."""
        if isinstance(event, str):
            if event == "Rule":
                self.begin_block()
                self.write(self.f.rule)
                self.end_block(2)
            else:
                self.text("\n")
            return
        for kind, value in event.items():
            if kind == "Start":
                self.start(*_tag(value))
            elif kind == "End":
                self.end(_tag(value)[0])
            elif kind == "Code" and isinstance(value, str):
                self.code(value)
            elif isinstance(value, str):  # Text, InlineHtml, Html and anything else carrying text
                self.text(value)

    def start(self, name: str, data: Any) -> None:
        if self.table is not None:
            if name in ("TableHead", "TableRow"):
                self.table.append([])
            elif name == "TableCell":
                self.cell = []
        elif name in ("Paragraph", "Heading"):
            self.begin_block()
            if name == "Heading":
                self.push_inline(self.f.strong)
        elif name in ("CodeBlock", "HtmlBlock"):
            self.buffer = []
        elif name == "Table":
            self.table = []
        elif name == "BlockQuote":
            if self.f.quote is not None and not self.quote_tag:
                self.begin_block()
                self.out.append(self.f.quote)
                self.quote_tag = True
                self.push(_Container("", "", tag=True))
            else:
                self.push(_Container(self.f.quote_prefix, self.f.quote_prefix))
        elif name == "List":
            self.lists.append(data)
            if self.after_paragraph:  # "Steps:" and its list stay together, as chat clients show them
                self.gap = min(self.gap, 1)
        elif name == "Item":
            number = self.lists[-1] if self.lists else None
            marker = self.f.bullet if number is None else f"{number}. "
            if number is not None:
                self.lists[-1] = number + 1
            self.items += 1
            self.push(_Container(marker, " " * len(marker)))
        elif name in ("Emphasis", "Strong", "Strikethrough"):
            self.push_inline({"Emphasis": self.f.emphasis, "Strong": self.f.strong}.get(name, self.f.strike))
        elif name in ("Link", "Image"):
            self.open_link(data)

    def end(self, name: str) -> None:
        if self.table is not None and name != "Table":
            if name == "TableCell" and self.cell is not None:
                self.table[-1].append("".join(self.cell).strip())
                self.cell = None
        elif name == "Paragraph":
            self.end_block(2)
            self.after_paragraph = True
        elif name == "Heading":
            self.pop_inline()
            self.end_block(1)
        elif name in ("CodeBlock", "HtmlBlock"):
            text, self.buffer = "".join(self.buffer or ()).rstrip("\n"), None
            self.begin_block()
            if name == "HtmlBlock":
                self.text(text)
            else:
                self.preformatted(text)
            self.end_block(2)
        elif name == "Table":
            rows, self.table = self.table or [], None
            self.begin_block()
            self.preformatted("\n".join("| " + " | ".join(cells) + " |" for cells in rows))
            self.end_block(2)
        elif name == "BlockQuote":
            if self.pop().tag:
                self.out.append(CLOSE)
                self.quote_tag = False
            self.end_block(2)
        elif name == "List":
            self.lists.pop()
            self.end_block(1 if self.items else 2)
        elif name == "Item":
            self.pop()
            self.items -= 1
            self.end_block(1)
        elif name in ("Emphasis", "Strong", "Strikethrough"):
            self.pop_inline()
        elif name in ("Link", "Image"):
            self.close_link()

    # -- blocks and lines

    def push(self, container: _Container) -> None:
        outer = self.prefixes[-1] if self.prefixes else ""
        self.prefixes.append(outer + container.prefix if len(self.containers) < MAX_DEPTH else outer)
        self.containers.append(container)
        self.in_block = False

    def pop(self) -> _Container:
        self.prefixes.pop()
        self.line_depth = min(self.line_depth, len(self.containers) - 1)
        return self.containers.pop()

    def end_block(self, gap: int) -> None:
        self.gap = max(self.gap, gap)
        self.in_block = self.after_paragraph = False

    def begin_block(self) -> None:
        """Start a line for a new block: the owed line breaks, then the quote and list prefixes."""
        if not self.fresh:
            settled = self.prefixes[self.line_depth - 1] if self.line_depth else ""
            if self.written:
                self.out.append("\n" + (settled.rstrip() + "\n") * (max(self.gap, 1) - 1))
            self.out.append(settled)
        self.out.append("".join(self.marker(i) for i in range(self.line_depth, len(self.containers))))
        self.line_depth = len(self.containers)
        self.gap = 0
        self.fresh = self.in_block = True

    def marker(self, index: int) -> str:
        container = self.containers[index]
        return (container.marker or container.prefix) if index < MAX_DEPTH else ""

    def write(self, escaped: str) -> None:
        if not self.in_block:
            self.begin_block()
        self.out.append(escaped)
        self.written, self.fresh = True, False

    def text(self, text: str) -> None:
        if self.buffer is not None:
            self.buffer.append(text)
        elif self.cell is not None:
            self.cell.append(text.replace("\n", " "))
        elif self.table is None:
            if self.link is not None:
                self.link.label.append(text)
            if "\n" in text:
                prefix = "\n" + (self.prefixes[-1] if self.prefixes else "")
                text = prefix.join(self.f.escape(line) for line in text.split("\n"))
                self.write(text)
            else:
                self.write(self.f.escape(text))

    def preformatted(self, text: str) -> None:
        if self.f.pre is None:
            self.write(text)
        else:
            self.write("")
            self.out += [self.f.pre, self.f.escape_code(text), CLOSE]

    # -- inline

    def push_inline(self, tag: Tag | None) -> None:
        if tag is None or tag in self.written_tags or (self.link is not None and not self.f.formatting_in_links):
            self.inline.append(None)
            return
        if not self.in_block:
            self.begin_block()
        self.out.append(tag)
        self.inline.append(tag)
        self.written_tags.append(tag)

    def pop_inline(self) -> None:
        if self.inline and self.inline.pop() is not None:
            self.written_tags.pop()
            self.out.append(CLOSE)

    def code(self, text: str) -> None:
        if self.cell is not None or self.link is not None or self.f.code is None:
            self.text(text)
            return
        self.write("")
        around = [] if self.f.code_inside_formatting else self.written_tags
        self.out += [CLOSE] * len(around)
        self.out += [self.f.code, self.f.escape_code(text), CLOSE, *around]

    def open_link(self, data: dict[str, Any]) -> None:
        if self.link is not None:
            self.inner_links += 1
            return
        destination = data["dest_url"] if data["link_type"] != "Email" else "mailto:" + data["dest_url"]
        target = live_target(destination)
        tag = self.f.link(target) if target is not None and self.f.link is not None else None
        if (tag is None and self.f.link is not None) or (tag is not None and units(tag.start) > MAX_TAG):
            target, tag = None, None
        if tag is not None:
            self.write("")
            self.out.append(tag)
        self.link = _Link(target, destination, tag)

    def close_link(self) -> None:
        if self.inner_links or self.link is None:
            self.inner_links = max(self.inner_links - 1, 0)
            return
        link, self.link = self.link, None
        label = "".join(link.label).strip()
        if link.target is None:
            return
        if not label:
            self.write(self.f.escape(link.target.href))
        if link.tag is not None:
            self.out.append(CLOSE)
        if label and label_differs(label, link.destination, link.target):
            self.write(self.f.escape(f" ({link.target.shown if link.tag is not None else link.target.href})"))


def _tag(value: object) -> tuple[str, Any]:
    """A Start or End event's tag and its data: a bare name ("Paragraph"), or {name: data}."""
    if isinstance(value, dict):
        name, data = next(iter(value.items()))
        return name, data
    return str(value), None
