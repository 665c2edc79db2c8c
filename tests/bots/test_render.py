from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from threadsage.bots.render import split_markdown, to_mrkdwn, to_plain, to_telegram_html

SAMPLE = (
    "### Resetting\nUse **Gatekeeper** at <https://gk.example/reset> or [the portal](https://x.y/a?b=1&c=2)"
    " — *now* & <b>not</b> later.\n- step `tide rollback x --env prod` [1]\n\n| A | B |\n|---|---|\n| 1 < 2 | ok |\n\n"
    '```bash\necho "<hi>" && exit\n```\nsnake_case_name stays.'
)


def test_mrkdwn() -> None:
    out = to_mrkdwn(SAMPLE)
    assert out.startswith("*Resetting*\nUse *Gatekeeper* at <https://gk.example/reset>")
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


def test_split_keeps_fences_balanced_and_pieces_small() -> None:
    text = "intro\n\n" + "```\n" + "\n".join(f"line {i} " + "x" * 50 for i in range(200)) + "\n```\n\n" + "word " * 3000
    pieces = split_markdown(text, 1000)
    assert len(pieces) > 10 and all(len(p) <= 1000 for p in pieces)
    for piece in pieces:
        assert piece.count("```") % 2 == 0
        assert to_telegram_html(piece).count("<pre>") == to_telegram_html(piece).count("</pre>")
    assert "".join(pieces).count("line 199") == 1


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
        done = subprocess.run(
            [sys.executable, "-c", program], input=json.dumps(PLACEHOLDER_LOOKALIKES), capture_output=True, text=True, timeout=20
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{function} did not finish within 20 s")
    assert done.returncode == 0, done.stderr
    outputs = json.loads(done.stdout)
    for text, digits in zip(outputs, ["a0b", "x0y", "b0c", "h0i", "plain 7 text"], strict=True):
        assert digits in text and "\x00" not in text
