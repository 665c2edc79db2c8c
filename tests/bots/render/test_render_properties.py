"""Property tests: whatever the Markdown, rendering is quick, never raises, and its output is valid for the platform.

Several strategies (about 10,000 inputs in all): Markdown syntax mixed with control characters and
mention bait, arbitrary Unicode, deep nesting, and 100 kB lines of pathological syntax. Each input is
rendered for Slack (sections and fallback), Telegram (messages) and as plain text; the slowest render
is reported at the end of the module (run with -s to see it), in CPU time without collector pauses.
"""

from __future__ import annotations

import gc
import random
import re
import time
from collections.abc import Callable, Iterator
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from threadsage.bots.render import to_mrkdwn_sections, to_plain, to_slack_fallback, to_telegram_messages
from threadsage.bots.render.segments import units

pytestmark = pytest.mark.slow  # about 10,000 generated inputs

# fmt: off
SYNTAX = [
    "*", "**", "_", "__", "~~", "`", "``", "```", "```py\n", "~~~\n", "[", "]", "(", ")", "](", "![", "<", ">",
    "> ", ">>", "- ", "* ", "+ ", "1. ", "9) ", "  ", "    ", "\n", "\n\n", "|", "| a | b |\n|---|---|\n", "#",
    "## ", "&", "&amp;", "&lt;", "&#0;", "\\", "<b>", "</b>", "<div>\n", "<!-- ", "---\n", "***\n",
    "[x](https://e.com/a?b=1&c=2)", "[x](tg://resolve?domain=a)", "[x](javascript:alert(1))", "<https://a.b/c>",
    "<a@b.c>", "[x]: https://r.s\n", "[x]", "![i](https://i.j/k.png)", "@here", "@channel", "@everyone", "@devs",
    "<!channel>", "<!here|here>", "<!subteam^S123>", "<@U123>", "\x00", "\x007\x00", "\x01", "\x1b[31m", "\x7f",
    "\x85", "\t", "\r", "\r\n", "\u2028", "\u202e", "\ufeff", "😀", "é", "word ", "a", "1",
    "**a `b` c**", "*`x`*", "~~`s`~~", "[a `b`](https://l.m)", "# h `c`", "> > q", "[![i](https://i.j)](https://k.l)",
]
# fmt: on
markdownish = st.lists(st.sampled_from(SYNTAX) | st.text(max_size=4), max_size=80).map("".join)
unicode_text = st.text(
    st.characters(codec=None) | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=300
)


@st.composite
def deeply_nested(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 1500))
    body = draw(markdownish)
    shape = draw(st.sampled_from(["quote", "list", "ordered", "emphasis", "link", "image", "mixed"]))
    if shape == "quote":
        return ">" * depth + " " + body
    if shape == "list":
        return "".join("  " * i + "- item\n" for i in range(min(depth, 400))) + body
    if shape == "ordered":
        return "".join("   " * i + "1. x\n" for i in range(min(depth, 400))) + body
    if shape == "emphasis":
        return "*_" * depth + body + "_*" * depth
    if shape == "link":
        return "[" * depth + body + "](https://x.y)" * depth
    if shape == "image":
        return "![[" * depth + body + "](u)](https://x.y)" * depth
    return "".join(draw(st.sampled_from(["> ", "- ", "1. ", "**", "[", "`"])) for _ in range(depth)) + body


HUGE = 100_000
# markdown-it-py needed seconds for the bracket ones; ">" and "> - " nest 100,000 levels deep
PATHOLOGICAL = ["[", "[*", "![", "*a", "**_~~", "`a``", ">", "> - ", "&", "@here "]


HUGE_BOUND = 3.0  # CPU seconds for one render of 100 kB (about 0.5 s measured)


@st.composite
def huge_line(draw: st.DrawFn) -> str:
    pattern = draw(markdownish.filter(bool)).replace("\n", " ")
    return (pattern * (HUGE // len(pattern) + 1))[:HUGE]


# -- platform rules


def slack_problems(text: str, link_allowed: bool) -> Iterator[str]:
    if re.search(r"@(?:channel|here|everyone)\b", text, re.IGNORECASE):
        yield "a broadcast mention"
    if re.search(r"&(?!amp;|lt;|gt;)", text):
        yield "an unescaped &"
    for link in re.finditer(r"<([^>]*)>?", text):
        if not link_allowed:
            yield f"a < in plain text: {link.group(0)[:40]!r}"
        elif not re.match(r"(?:https?://[^|<>\s]+|mailto:[^|<>\s]+)\|[^<]*>", text[link.start() + 1 :]):
            yield f"a < that is not one of our links: {link.group(0)[:40]!r}"


TELEGRAM_TAGS = {"b", "i", "u", "s", "a", "code", "pre", "blockquote"}


class TelegramChecker(HTMLParser):
    """Telegram's HTML rules: known tags only, balanced and nested as its entities allow, entities escaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TELEGRAM_TAGS:
            self.problems.append(f"tag <{tag}>")
        if tag == "a" and not (
            len(attrs) == 1 and attrs[0][0] == "href" and re.match(r"(https?://|mailto:)", attrs[0][1] or "")
        ):
            self.problems.append(f"link {attrs}")
        elif tag != "a" and attrs:
            self.problems.append(f"attributes on <{tag}>")
        if set(self.open) & {"code", "pre"}:
            self.problems.append(f"<{tag}> inside code")
        if tag in ("code", "pre") and set(self.open) & {"a", "b", "i", "u", "s"}:
            self.problems.append(f"<{tag}> inside {self.open}")
        if tag in ("a", "blockquote") and tag in self.open:
            self.problems.append(f"nested <{tag}>")
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open.pop() != tag:
            self.problems.append(f"</{tag}> does not close the last tag")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.problems.append(f"self-closing <{tag}/>")

    def handle_data(self, data: str) -> None:
        if set(data) & set("<>&"):
            self.problems.append(f"unescaped markup in {data[:40]!r}")

    def handle_entityref(self, name: str) -> None:
        if name not in ("lt", "gt", "amp", "quot"):
            self.problems.append(f"entity &{name};")

    def handle_comment(self, data: str) -> None:
        self.problems.append("a comment")

    def handle_decl(self, decl: str) -> None:
        self.problems.append("a declaration")

    def unknown_decl(self, data: str) -> None:
        self.problems.append("a declaration")

    def handle_pi(self, data: str) -> None:
        self.problems.append("a processing instruction")


def telegram_problems(html: str) -> list[str]:
    checker = TelegramChecker()
    checker.feed(html)
    checker.close()
    if checker.rawdata:
        checker.problems.append(f"unparsed {checker.rawdata[:40]!r}")
    return checker.problems + [f"unclosed {checker.open}"] * bool(checker.open)


# -- one check for every input

SLOWEST: dict[str, tuple[float, int]] = {}  # the slowest render (CPU seconds, input length) of each kind
RENDERS = {"count": 0, "inputs": 0}


def timed(name: str, render: Callable[[str], object], markdown: str, bound: float) -> object:
    # CPU time (on a shared machine wall time also counts other processes' turns), without the cyclic
    # collector, whose pauses (up to 0.3 s here) depend on the whole test process's heap, not on this render
    gc.disable()
    try:
        start = time.thread_time()
        out = render(markdown)
        elapsed = time.thread_time() - start
    finally:
        gc.enable()
    RENDERS["count"] += 1
    key = f"{name} ({'100 kB' if len(markdown) >= HUGE else '<= 10 kB' if len(markdown) <= 10_000 else '10-100 kB'})"
    SLOWEST[key] = max(SLOWEST.get(key, (0.0, 0)), (elapsed, len(markdown)))
    assert elapsed < bound, f"{name} took {elapsed:.2f} s for {len(markdown)} characters"
    return out


def check(markdown: str, bound: float = 0.5) -> None:
    RENDERS["inputs"] += 1
    sections = timed("slack sections", to_mrkdwn_sections, markdown, bound)
    assert isinstance(sections, list)
    for section in sections:
        assert 1 <= units(section) <= 3000 and section.strip() == section
        assert not list(slack_problems(section, link_allowed=True)), (
            list(slack_problems(section, True)),
            section[:300],
        )
    fallback = timed("slack fallback", to_slack_fallback, markdown, bound)
    assert isinstance(fallback, str) and units(fallback) <= 3000
    assert not list(slack_problems(fallback, link_allowed=False)), fallback[:300]
    messages = timed("telegram messages", to_telegram_messages, markdown, bound)
    assert isinstance(messages, list)
    for message in messages:
        assert 1 <= units(message.html) <= 4096 and message.text.strip()
        assert not telegram_problems(message.html), (telegram_problems(message.html), message.html[:300])
    plain = timed("plain", to_plain, markdown, bound)
    assert isinstance(plain, str) and not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", plain)
    if re.search(r"[0-9A-Za-z]", plain):  # what a person would see is never lost on a platform
        assert sections and messages


def examples(count: int, shrink: bool = True) -> settings:
    """Rendering time is bounded by check(), not by hypothesis' deadline; no example database is written.
    Without `shrink` a failure is reported as found: shrinking a 100 kB input re-renders it for many minutes."""
    phases = [p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)]
    return settings(
        max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck), phases=phases
    )


def soup(rng: random.Random) -> str:
    """Markdown syntax, control and arbitrary characters (surrogates too) and runs of spaces, mixed at random."""
    parts = []
    for _ in range(rng.randint(0, 80)):
        roll = rng.random()
        if roll < 0.7:
            parts.append(rng.choice(SYNTAX))
        elif roll < 0.85:
            parts.append(chr(rng.randint(0, 0x2FF)))
        elif roll < 0.95:
            parts.append(chr(rng.randint(0x300, 0x10FFFF)))
        else:
            parts.append(" " * rng.randint(1, 8))
    return "".join(parts)


SOUPS_PER_EXAMPLE = 6


@examples(1000)
@given(markdownish)
def test_markdown_syntax_soup(markdown: str) -> None:
    check(markdown)


@examples(1400)
@given(st.integers(0, 2**64))
def test_random_soups(seed: int) -> None:
    """Several inputs per example: generating them from one seed is cheap, so more inputs fit the time budget."""
    rng = random.Random(seed)
    for _ in range(SOUPS_PER_EXAMPLE):
        check(soup(rng))


@examples(1000)
@given(unicode_text)
def test_any_unicode(markdown: str) -> None:
    check(markdown)


@examples(100)
@given(st.lists(markdownish, min_size=5, max_size=60).map("\n\n".join))
def test_long_answers_split_within_limits(markdown: str) -> None:
    check(markdown)


@examples(100)
@given(deeply_nested())
def test_deep_nesting(markdown: str) -> None:
    check(markdown)


@pytest.mark.parametrize("pattern", PATHOLOGICAL)
def test_100_kb_lines_of_one_pattern(pattern: str) -> None:
    check((pattern * (HUGE // len(pattern) + 1))[:HUGE], bound=HUGE_BOUND)


def test_a_cut_between_sections_never_completes_a_broadcast_mention() -> None:
    """Found by test_100_kb_lines: "@here¹" is no mention, but a cut after "@here" made one."""
    pattern = (
        "\x02C\x19L@here¹z©´[x](javascript:alert(1))¹z©´[x](tg://resolve?domain=a)\U000aaf3bM\x84Tgpã"
        "[x](javascript:alert(1))](\x85\x19=[x](javascript:alert(1))"
    )
    check((pattern * (HUGE // len(pattern) + 1))[:HUGE], bound=HUGE_BOUND)


@examples(3, shrink=False)
@given(huge_line())
def test_100_kb_lines(markdown: str) -> None:
    check(markdown, bound=HUGE_BOUND)


@pytest.fixture(scope="module", autouse=True)
def report_slowest() -> Iterator[None]:
    yield
    print(
        f"\n{RENDERS['inputs']} inputs, {RENDERS['count']} renders; slowest: "
        + ", ".join(f"{name} {s * 1000:.0f} ms ({n} chars)" for name, (s, n) in sorted(SLOWEST.items()))
    )
