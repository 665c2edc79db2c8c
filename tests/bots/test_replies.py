"""What every front-end says alike: the sources' labels, the low-confidence note, a place's
categories — and that Slack, Telegram and the terminal each show them."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from threadsage.bots.render import to_telegram_html
from threadsage.bots.replies import LOW_CONFIDENCE, citation_label, place_categories, source_markdown
from threadsage.bots.slack.blocks import reply_messages
from threadsage.bots.slack.places import Place
from threadsage.bots.telegram.sending import answer_markdown
from threadsage.bots.terminal import TerminalChat
from threadsage.bots.tokens import Signer
from threadsage.chat import Citation, Reply, ReplyKind, Turn
from threadsage.settings.environment import Settings


def citation(number: int, title: str, heading: str, source: str, path: str) -> Citation:
    return Citation(number=number, title=title, heading=heading, source=source, path=path, snippet="")


URL = "https://status.example/api"
LABEL = "[1] Business travel policy › Flights"
FILE = citation(1, "Business travel policy", "Flights", "/kb/finance/travel.md", "finance/travel.md")
WEB = citation(2, "Status page", "", "https://status.example/api", "status.example/api")
BARE = citation(3, "", "", "/kb/notes.txt", "notes.txt")


@pytest.mark.parametrize(
    ("cited", "label", "markdown"),
    [
        (FILE, "Business travel policy › Flights", "[1] Business travel policy › Flights — `finance/travel.md`"),
        (WEB, "Status page", "[2] [Status page](https://status.example/api)"),
        (BARE, "notes.txt", "[3] notes.txt — `notes.txt`"),
    ],
)
def test_a_source_is_labelled_and_linked_or_located(cited: Citation, label: str, markdown: str) -> None:
    assert citation_label(cited) == label
    assert source_markdown(cited) == markdown


@pytest.mark.parametrize(
    ("channel", "private", "expected"),
    [("C1", False, ("it",)), ("C2", False, ("hr",)), ("C1", True, ("hr",)), ("D9", True, ("hr",))],
)
def test_a_place_reads_its_channels_categories_and_private_chats_the_default(
    channel: str, private: bool, expected: tuple
) -> None:
    settings = Settings(_env_file=None, channel_categories={"C1": ["it"], "D9": ["secret"]}, default_categories=["hr"])
    assert place_categories(settings, channel, private) == expected


REPLY = Reply(ReplyKind.ANSWER, "Economy, or premium economy over 6 hours.", citations=(FILE, WEB), low_confidence=True)


def slack_text() -> str:
    place = Place("T1", "C1", "1.0", False)
    turn = Turn("slack", place.session, "U1", "C1:1.0")
    [(blocks, _fallback)] = reply_messages(REPLY, place, turn, Signer(b"0" * 32))
    return "\n".join(e["text"] for b in blocks if b["type"] == "context" for e in b["elements"])


def telegram_text() -> str:
    return to_telegram_html(answer_markdown(REPLY))


def terminal_text() -> str:
    out = io.StringIO()
    TerminalChat(None, "s", Console(file=out, force_terminal=False)).show(REPLY)  # type: ignore[arg-type]
    return out.getvalue()


@pytest.mark.parametrize(
    ("shown", "note", "file", "web"),
    [
        (slack_text, f"_{LOW_CONFIDENCE}_", f"{LABEL} — `finance/travel.md`", f"[2] <{URL}|Status page>"),
        (
            telegram_text,
            f"<i>{LOW_CONFIDENCE}</i>",
            f"{LABEL} — <code>finance/travel.md</code>",
            f'[2] <a href="{URL}">Status page</a>',
        ),
        (terminal_text, LOW_CONFIDENCE, f"{LABEL} — finance/travel.md", f"[2] Status page ({URL})"),
    ],
)
def test_every_front_end_shows_the_note_and_the_same_sources(shown, note: str, file: str, web: str) -> None:
    text = shown()
    assert note in text and file in text and web in text


def slack_body(text: str) -> list[dict]:
    place = Place("T1", "C1", "1.0", False)
    turn = Turn("slack", place.session, "U1", "C1:1.0")
    reply = Reply(ReplyKind.ANSWER, text)
    return [b for (blocks, _) in reply_messages(reply, place, turn, Signer(b"0" * 32)) for b in blocks][:-1]


def test_slack_answers_are_standard_markdown_that_slack_renders_where_a_markdown_block_fits() -> None:
    table = "| Flight | Class |\n|---|---|\n| Under 6 hours | Economy [1] |\n\n年假：**25 天** [1]"
    assert slack_body(table) == [{"type": "markdown", "text": table}]  # tables, Chinese: Slack renders them
    # Slack's control characters: the escaped mrkdwn path (what a markdown block makes of them is undocumented)
    quoted = "The page says <!channel> & **more**"
    [section] = slack_body(quoted)
    assert section["type"] == "section" and "&lt;!channel&gt; &amp; *more*" in section["text"]["text"]
    long = "word " * 2_500  # over the 12,000 characters markdown blocks take: mrkdwn sections, split
    assert {b["type"] for b in slack_body(long)} == {"section"} and len(slack_body(long)) > 1
