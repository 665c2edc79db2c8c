"""Files sent with a question: read by the ingestion loaders, used as context in that session
only (never in the shared knowledge base), with a clear message for what cannot be read; on the
offline back-end and on the LLM back-end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, kind_of, user_text
from tests.helpers.conversation import llm_chat, route_to, service
from tests.helpers.made_files import docx_bytes, pdf_bytes
from threadsage.adapters.documents.attachments import (
    MB,
    Attachment,
    AttachmentReader,
    best_attached,
    images_read,
    too_big,
    with_attached,
)
from threadsage.adapters.documents.loaders import MAX_PDF_CHARS, MAX_PDF_PAGES
from threadsage.adapters.reasoner import Passage, TurnImage
from threadsage.chat import EMPTY, STALE, ClarificationAnswer, ReplyKind, Turn
from threadsage.i18n import say

HERON = "The Heron pilot budget is 48,000 euros, approved by the steering board in March."
QUESTION = "What is the Heron pilot budget?"
FILES = {
    "heron.pdf": lambda: pdf_bytes("Project Heron", HERON),
    "heron.docx": lambda: docx_bytes("Project Heron", {"Budget": HERON, "Team": "Five engineers and a designer."}),
    "heron.md": lambda: f"# Project Heron\n\n## Budget\n\n{HERON}\n".encode(),
    "heron.txt": lambda: f"Project Heron\n\n{HERON}\n".encode(),
}


def turn(n: int, text: str | None, *files: Attachment, key: str = "test:ws:chan:thread") -> Turn:
    return Turn("test", key, "U1", f"m{n}", text=text, attachments=files)


@pytest.mark.parametrize("name", list(FILES))
async def test_a_question_with_a_file_is_answered_from_it_citing_it(tmp_path: Path, handbook_kb, name: str) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        [answer] = await chat.handle(turn(1, QUESTION, Attachment(name, FILES[name]())))
        assert answer.kind is ReplyKind.ANSWER and "48,000 euros" in answer.text
        assert answer.citations[0]["path"] == name
        [follow_up] = await chat.handle(turn(2, "Who approved the Heron budget?"))  # the file stays in the session
        assert "steering board" in follow_up.text and follow_up.citations[0]["path"] == name
        [elsewhere] = await chat.handle(turn(1, QUESTION, key="test:ws:chan:other"))  # another session: no file
        assert "48,000" not in elsewhere.text and all(c["path"] != name for c in elsewhere.citations)
    assert not any("Heron" in hit.text for hit in await handbook_kb.search("Heron pilot budget steering board", 20))


async def test_without_the_file_the_question_is_not_answered_from_it(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        [answer] = await chat.handle(turn(1, QUESTION))
    assert "48,000" not in answer.text  # the test above fails when the file is not used


async def test_a_file_without_a_question_is_kept_for_the_next_one(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        [note] = await chat.handle(turn(1, "", Attachment("heron.md", FILES["heron.md"]())))
        assert (
            note.kind is ReplyKind.NOTICE and note.text == "I've read “heron.md”. What would you like to know about it?"
        )
        [answer] = await chat.handle(turn(2, QUESTION))
        assert "48,000 euros" in answer.text and answer.citations[0]["path"] == "heron.md"
        assert [r.text for r in await chat.handle(turn(3, "  "))] == [EMPTY]


async def test_files_that_cannot_be_used_get_a_message_and_the_question_is_still_answered(
    tmp_path: Path, handbook_kb
) -> None:
    files = [
        Attachment("big.md", b"x" * (MB + 1)),
        Attachment("budget.xlsx", b"PK\x03\x04", "application/vnd.ms-excel"),
        Attachment("photo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "image/png"),
        Attachment("broken.pdf", b"%PDF-1.4 not really"),
        Attachment("huge.pdf", b"", problem=too_big("huge.pdf", 30 * MB, MB)),  # as a front-end refuses it
    ]
    async with service(tmp_path, "", handbook_kb, attachments=AttachmentReader(max_bytes=MB)) as chat:
        replies = await chat.handle(turn(1, "Which cabin class may I book for a flight of 6 hours or more?", *files))
        assert replies[0].kind is ReplyKind.ANSWER and "premium economy" in replies[0].text.lower()
        assert [r.text for r in replies[1:]] == [
            "I couldn't use “big.md”: it is 1.0 MB, and I read files of up to 1 MB.",
            "I can't read “budget.xlsx”: I read PDF, Word (.docx), Markdown, HTML or plain text files,"
            " and images (PNG, JPEG, WebP, GIF).",
            "I couldn't open the image “photo.png”: it seems damaged or cut off. Please send it again.",
            "I couldn't read “broken.pdf”: not a readable PDF (PdfStreamError).",
            "I couldn't use “huge.pdf”: it is 30.0 MB, and I read files of up to 1 MB.",
        ]
        [only_problem] = await chat.handle(turn(2, None, files[1]))  # no question, nothing readable
        assert only_problem.text.startswith("I can't read “budget.xlsx”")


async def test_what_is_said_about_files_is_in_the_askers_language(tmp_path: Path, handbook_kb) -> None:
    """A Chinese question's file problems are said in Chinese; files sent without a question are
    acknowledged in the language the front-end knows for the person (Telegram's language_code)."""
    broken = [
        Attachment("budget.xlsx", b"PK\x03\x04", "application/vnd.ms-excel"),
        Attachment("huge.pdf", b"", problem=too_big("huge.pdf", 30 * MB, MB)),
    ]
    files = [Attachment("heron.md", FILES["heron.md"]()), Attachment("heron.txt", FILES["heron.txt"]())]
    async with service(tmp_path, "", handbook_kb, attachments=AttachmentReader(max_bytes=MB)) as chat:
        replies = await chat.handle(turn(1, "出差住酒店的标准是多少？", *broken))
        assert [r.text for r in replies[1:]] == [
            say("file_unsupported", "zh", name="budget.xlsx"),
            say("file_too_big", "zh", name="huge.pdf", size="30.0", limit="1"),
        ]
        assert "我无法读取“budget.xlsx”" in replies[1].text and all(r.language == "zh" for r in replies)
        [chinese] = await chat.handle(dataclasses.replace(turn(2, None, *files), language="zh"))
        assert chinese.text == "我已读取“heron.md”和“heron.txt”。你想了解它们的哪些内容？"
        [english] = await chat.handle(turn(3, None, *files, key="test:ws:chan:other"))
    assert english.text == "I've read “heron.md” and “heron.txt”. What would you like to know about them?"


async def test_a_pdf_past_the_page_or_text_cap_is_refused_with_a_message() -> None:
    """A few MB of PDF can hold thousands of pages or millions of characters: past the caps it is
    refused whole, saying the limits, in the asker's language; one within them is read."""
    many_pages = pdf_bytes("Project Heron", pages=MAX_PDF_PAGES + 1)
    much_text = pdf_bytes(*["word " * 200] * (MAX_PDF_CHARS // 2000 + 10), pages=2)  # just past, over 2 pages
    files = [
        Attachment("many.pdf", many_pages),
        Attachment("dense.pdf", much_text),
        Attachment("two.pdf", pdf_bytes(HERON, pages=2)),
    ]
    passages, problems = await AttachmentReader(max_bytes=50 * MB).read(files, "zh")
    limits = {"pages": MAX_PDF_PAGES, "chars": f"{MAX_PDF_CHARS:,}"}
    assert problems == [say("file_too_long", "zh", name=n, **limits) for n in ("many.pdf", "dense.pdf")]
    assert {p["path"] for p in passages} == {"two.pdf"}
    _, [english] = await AttachmentReader(max_bytes=50 * MB).read(files[:1], "en")
    assert english.startswith("I couldn't use “many.pdf”: it is too long — I read PDFs of up to 1000 pages")


async def test_a_name_without_a_suffix_is_read_by_its_media_type_and_shown_without_folders() -> None:
    [passage], problems = await AttachmentReader().read(
        [Attachment("../../etc/notes\x1b[2J", b"# Notes\n\nHello.", "text/markdown")], "en"
    )
    assert not problems and passage["path"] == "notes[2J" and passage["title"] == "Notes"


async def test_the_attached_passages_that_share_no_term_with_the_question_are_not_offered() -> None:
    passages, _ = await AttachmentReader(chunk_chars=200, chunk_overlap=0).read(
        [Attachment("a.md", f"# A\n\n## Budget\n\n{HERON}\n\n## Lunch\n\nSoup on Fridays.\n".encode())], "en"
    )
    assert [p["heading"] for p in best_attached(QUESTION, passages, 5)] == ["Budget"]
    assert best_attached("parking spaces", passages, 5) == []


async def test_the_llm_back_end_gets_the_file_and_cites_it(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = "The pilot budget is 48,000 euros [1]."
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        [answer] = await chat.handle(turn(1, QUESTION, Attachment("heron.docx", FILES["heron.docx"]())))
    assert answer.citations[0]["path"] == "heron.docx" and answer.citations[0]["title"] == "Project Heron"
    [answering] = [
        body for path, body in llm.requests if path.endswith("/chat/completions") and kind_of(body) == "answer"
    ]
    assert HERON in user_text(answering)


async def test_a_file_alone_while_a_clarification_is_pending_drops_it(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        [ask] = await chat.handle(turn(1, "How do I reset my password?"))
        assert ask.kind is ReplyKind.CLARIFICATION and ask.interrupt_id
        [note] = await chat.handle(turn(2, None, Attachment("heron.md", FILES["heron.md"]())))
        assert note.text.startswith("I've read “heron.md”")
        click = Turn("test", "test:ws:chan:thread", "U1", "c3", answer=ClarificationAnswer(ask.interrupt_id, 0))
        assert [r.text for r in await chat.handle(click)] == [STALE]
        [answer] = await chat.handle(turn(4, QUESTION))
        assert "48,000 euros" in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "What does the attached file say about the money?",  # "money" is not in it: the file is named
        "Can you summarise this document?",
        "这个文件讲了什么？",
    ],
)
async def test_a_question_about_the_attached_file_is_answered_from_it(
    tmp_path: Path, handbook_kb, question: str
) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        await chat.handle(turn(1, "", Attachment("heron.md", FILES["heron.md"]())))
        [answer] = await chat.handle(turn(2, question))
    assert answer.kind is ReplyKind.ANSWER and "48,000 euros" in answer.text, answer.text
    assert {c["path"] for c in answer.citations} == {"heron.md"}


def test_attached_passages_weigh_like_the_best_hit_not_more() -> None:
    def p(id: str, score: float, source: str) -> dict:
        return {"id": id, "path": id, "source": source, "title": "", "heading": "", "text": "", "score": score}

    hits = [p("kb-1", 12.0, "kb"), p("kb-2", 11.0, "kb"), p("kb-3", 4.0, "kb")]
    mine = [p("file-1", 3.0, "attachment:f.md"), p("file-2", 0.6, "attachment:f.md")]
    merged = with_attached(hits, mine, 4)  # type: ignore[arg-type]
    # The file's best passage ties with the best hit and goes first; its weak one ranks by score.
    assert [m["id"] for m in merged] == ["file-1", "kb-1", "kb-2", "kb-3"]


def test_the_images_read_are_those_whose_text_was_read_at_most_four() -> None:
    """What a model that sees is shown: the images that gave passages, by their type as named
    (a JPEG sent as `application/octet-stream`), never one that could not be read, nor a fifth."""

    def read(name: str) -> Passage:
        return Passage(id=name, path=name, source=f"attachment:{name}", title=name, heading="", text="x", score=0)

    sent = [
        Attachment("folder/photo.JPEG", b"jpeg", "application/octet-stream"),
        Attachment("notes.md", b"# notes", "text/markdown"),
        Attachment("blank.png", b"png", "image/png"),  # no text in it: no passage
        *(Attachment(f"shot{n}.png", b"png", "image/png") for n in range(4)),
    ]
    passages = [read(name) for name in ("photo.JPEG", "notes.md", "shot0.png", "shot1.png", "shot2.png", "shot3.png")]
    assert images_read(sent, passages) == [
        TurnImage("photo.JPEG", "image/jpeg", b"jpeg"),
        TurnImage("shot0.png", "image/png", b"png"),
        TurnImage("shot1.png", "image/png", b"png"),
    ]  # shot2 and shot3 were past the four images a message may carry (blank.png was the third)
