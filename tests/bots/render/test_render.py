from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from threadsage.bots.render import (
    to_mrkdwn,
    to_mrkdwn_sections,
    to_plain,
    to_slack_fallback,
    to_telegram_html,
    to_telegram_messages,
)

SAMPLE = (
    "### Resetting\nUse **Gatekeeper** at <https://gk.example/reset> or [the portal](https://x.y/a?b=1&c=2)"
    " — *now* & <b>not</b> later.\n- step `tide rollback x --env prod` [1]\n\n| A | B |\n|---|---|\n| 1 < 2 | ok |\n\n"
    '```bash\necho "<hi>" && exit\n```\nsnake_case_name stays.'
)


def test_mrkdwn() -> None:
    out = to_mrkdwn(SAMPLE)
    assert out.startswith("*Resetting*\nUse *Gatekeeper* at <https://gk.example/reset|https://gk.example/reset>")
    assert "<https://x.y/a?b=1&amp;c=2|the portal>" in out
    assert "_now_ &amp; &lt;b&gt;not&lt;/b&gt; later" in out
    assert "• step `tide rollback x --env prod` [1]" in out
    assert "```\n| A | B |\n| 1 &lt; 2 | ok |\n```" in out  # tables keep their columns in a block
    assert '```\necho "&lt;hi&gt;" &amp;&amp; exit\n```' in out
    assert "snake_case_name stays." in out and "**" not in out


def test_telegram_html_is_balanced_and_escaped() -> None:
    out = to_telegram_html(SAMPLE)
    assert "<b>Resetting</b>" in out and "<b>Gatekeeper</b>" in out and "<i>now</i>" in out
    assert '<a href="https://x.y/a?b=1&amp;c=2">the portal</a>' in out
    assert "&amp; &lt;b&gt;not&lt;/b&gt;" in out
    assert '<pre>echo "&lt;hi&gt;" &amp;&amp; exit</pre>' in out
    tags = re.findall(r"</?(\w+)[^>]*>", out)
    assert set(tags) <= {"b", "i", "a", "code", "pre"}
    for tag in set(tags):
        assert out.count(f"<{tag}") == out.count(f"</{tag}>")


def test_plain_fallback_has_no_markup() -> None:
    out = to_plain(SAMPLE)
    assert "Gatekeeper" in out and "**" not in out and "the portal (https://x.y/a?b=1&c=2)" in out


# Text that looks like the old converters' internal placeholders (NUL, digits, NUL): inside code,
# a link, bold or a heading it made the restore loop spin forever; elsewhere it raised IndexError.
PLACEHOLDER_LOOKALIKES = [
    "`a\x000\x00b`",
    "[x\x000\x00y](https://example.com)",
    "**b\x000\x00c**",
    "# h\x000\x00i",
    "plain \x007\x00 text",
]


@pytest.mark.parametrize("function", ["to_mrkdwn", "to_telegram_html", "to_plain"])
def test_placeholder_lookalikes_render_promptly(function: str) -> None:
    """Rendered in a child process with a deadline, so a spinning loop fails the test instead of hanging it."""
    program = (
        "import json, sys\n"
        "from threadsage.bots import render\n"
        f"print(json.dumps([render.{function}(s) for s in json.load(sys.stdin)]))\n"
    )
    try:
        lookalikes = json.dumps(PLACEHOLDER_LOOKALIKES)
        command = [sys.executable, "-c", program]
        done = subprocess.run(command, input=lookalikes, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{function} did not finish within 20 s")
    assert done.returncode == 0, done.stderr
    outputs = json.loads(done.stdout)
    for text, digits in zip(outputs, ["a0b", "x0y", "b0c", "h0i", "plain 7 text"], strict=True):
        assert digits in text and "\x00" not in text


def test_links_cannot_lie() -> None:
    text = (
        "[docs](https://evil.example/x) [https://good.example](https://evil.example) "
        "[evil.example](https://evil.example/p) <https://auto.example/a> [bank.com](https://bank.com@evil.example/) "
        "[write](mailto:help@corp.example)"
    )
    slack = to_mrkdwn(text)
    assert "<https://evil.example/x|docs> (evil.example)" in slack
    assert "<https://evil.example|https://good.example> (evil.example)" in slack
    assert "<https://evil.example/p|evil.example> " in slack  # the text names the host: nothing to add
    assert "<https://auto.example/a|https://auto.example/a> " in slack
    assert "<https://evil.example/|bank.com> (evil.example)" in slack and "bank.com@" not in slack
    assert "<mailto:help@corp.example|write> (help@corp.example)" in slack
    telegram = to_telegram_html(text)
    assert '<a href="https://evil.example/x">docs</a> (evil.example)' in telegram
    assert '<a href="https://evil.example/">bank.com</a> (evil.example)' in telegram
    assert "docs (https://evil.example/x)" in to_plain(text)


def test_other_schemes_are_dropped_and_their_text_kept() -> None:
    text = (
        "[open](tg://resolve?domain=x) [run](javascript:alert(1)) [rel](docs/a.md) <tg://msg?text=hi> "
        "![img](data:image/png;base64,AA)"
    )
    for out in (to_mrkdwn(text), to_telegram_html(text), to_plain(text), to_slack_fallback(text)):
        assert "open" in out and "run" in out and "rel" in out and "img" in out
        assert not any(scheme in out for scheme in ("tg://resolve", "javascript:", "docs/a.md", "data:"))
    assert "<a " not in to_telegram_html(text) and "|" not in to_mrkdwn(text)


MENTIONS = "<!channel> <!here> <!everyone> <!subteam^S1|devs> <@U123> @channel @Here @everyone @devs mail a@b.example"


@pytest.mark.parametrize(
    "markdown",
    [
        *(MENTIONS, f"# {MENTIONS}", f"**{MENTIONS}**", f"`{MENTIONS}`", f"[{MENTIONS}](https://x.example)"),
        *(f"```\n{MENTIONS}\n```", f"> - {MENTIONS}"),
    ],
)
def test_nothing_posted_to_slack_can_ping(markdown: str) -> None:
    for out in [*to_mrkdwn_sections(markdown), to_slack_fallback(markdown)]:
        assert "<!" not in out and "<@" not in out and "&lt;!channel&gt;" in out
        assert not re.search(r"@(channel|here|everyone)\b", out, re.IGNORECASE)
        assert "@\u2060channel" in out and "@\u2060Here" in out and "a@b.example" in out


def test_code_keeps_ordinary_handles_intact() -> None:
    assert to_mrkdwn("`npm i @scope/pkg` and @devs") == "`npm i @scope/pkg` and @\u2060devs"


def test_telegram_keeps_its_nesting_rules() -> None:
    assert to_telegram_html("**run `make` now**") == "<b>run </b><code>make</code><b> now</b>"
    link = '<a href="https://x.example">the x tool</a> (x.example)'
    assert to_telegram_html("[the `x` tool](https://x.example)") == link
    assert to_telegram_html("> a\n>\n> > b") == "<blockquote>a\n\n&gt; b</blockquote>"


def test_controls_are_dropped_and_empty_input_posts_nothing() -> None:
    assert to_plain("a\x00b\x1b[0mc\x7f") == "ab[0mc"
    assert to_mrkdwn_sections("") == [] and to_telegram_messages(" \x00\n") == [] and to_slack_fallback("") == ""


def test_sections_and_messages_stay_within_limits_whatever_the_escaping() -> None:
    code = "\n".join(f"line {i} <&> " + "&" * 40 for i in range(300))
    text = "intro & more\n\n```\n" + code + "\n```\n\n" + "<b> & " * 3000
    sections = to_mrkdwn_sections(text)
    assert len(sections) > 10 and all(1 <= len(s) <= 3000 for s in sections)
    assert all(s.count("```") % 2 == 0 for s in sections)  # a code block cut in two is closed and reopened
    messages = to_telegram_messages(text)
    assert all(len(m.html) <= 4096 and m.html.count("<pre>") == m.html.count("</pre>") for m in messages)
    shown = "\n".join(m.text for m in messages)
    assert all(f"line {i} <&> " in shown for i in range(300)) and shown.count("<b> &") == 3000


def test_long_answers_are_cut_between_paragraphs() -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 150 for i in range(12)]
    sections = to_mrkdwn_sections("\n\n".join(paragraphs))
    assert len(sections) > 1 and all(s.startswith("Paragraph") and s.endswith("word") for s in sections)
    assert sum(s.count("Paragraph") for s in sections) == 12


def test_slack_fallback_is_cut_without_breaking_an_entity() -> None:
    out = to_slack_fallback("a" + " <b>" * 2000, limit=100)
    assert len(out) <= 100 and out.endswith("…") and re.fullmatch(r"a( &lt;b&gt;)* ?(&lt;b)?…", out)
