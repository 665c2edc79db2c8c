"""Files shared with a question in Slack, through the real bolt app and slack_sdk against the fake
Slack over HTTP: downloaded with the bot token, answered from, never added to the knowledge base."""

from __future__ import annotations

import pytest

from tests.fakes.slack_api import BOT_USER
from tests.helpers import screenshots
from tests.helpers.made_files import docx_bytes, pdf_bytes
from tests.helpers.slack_harness import DM, Harness, as_text, file_share
from threadsage.adapters.documents.attachments import MAX_IMAGES

HERON = "The Heron pilot budget is 48,000 euros, approved by the steering board in March."
QUESTION = "What is the Heron pilot budget?"
FILES = {
    "heron.pdf": ("application/pdf", lambda: pdf_bytes("Project Heron", HERON)),
    "heron.docx": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        lambda: docx_bytes("Project Heron", {"Budget": HERON}),
    ),
    "heron.md": ("text/markdown", lambda: f"# Project Heron\n\n## Budget\n\n{HERON}\n".encode()),
}


@pytest.mark.parametrize("name", list(FILES))
async def test_a_file_in_a_dm_is_downloaded_with_the_token_and_the_answer_cites_it(slack: Harness, name: str) -> None:
    mimetype, make = FILES[name]
    file = slack.fake.upload(name, make(), mimetype)
    assert await slack.event(file_share(QUESTION, [file])) == 200
    await slack.settle()
    [answer] = slack.fake.posted()
    assert answer["channel"] == DM and "48,000 euros" in as_text(answer) and name in as_text(answer)
    assert slack.fake.downloads() == [{"file": file["id"], "authorization": "Bearer xoxb-test"}]
    hits = await slack.chat.context.kb.search("Heron pilot budget steering board", 20)
    assert not any("Heron" in hit.text for hit in hits)  # the shared knowledge base never gets it


async def test_a_file_too_big_is_not_downloaded_and_the_question_is_answered_anyway(slack: Harness) -> None:
    file = slack.fake.upload("manual.pdf", pdf_bytes("Manual"), "application/pdf", size=11 * 1024 * 1024)
    await slack.event(file_share("Which cabin class may I book for a flight of 6 hours or more?", [file]))
    await slack.settle()
    answer, problem = slack.fake.posted()
    assert "premium economy" in as_text(answer).lower()
    assert problem["text"] == "I couldn't use “manual.pdf”: it is 11.0 MB, and I read files of up to 10 MB."
    assert slack.fake.downloads() == []


async def test_a_file_in_a_followed_thread_is_looked_up_with_files_info(slack: Harness) -> None:
    root = await slack.mention("What is the rate limit per API key for the Tidewater API?")
    await slack.settle()
    file = slack.fake.upload("heron.md", FILES["heron.md"][1](), "text/markdown")
    stub = {"id": file["id"], "mode": "hosted", "file_access": "check_file_info"}  # what some events carry
    await slack.event(file_share(QUESTION, [stub], channel="C111", thread_ts=root))
    await slack.settle()
    answer = slack.fake.posted()[-1]
    assert answer["thread_ts"] == root and "48,000 euros" in as_text(answer) and "heron.md" in as_text(answer)
    assert slack.fake.of("files.info") == [{"file": file["id"]}] and len(slack.fake.downloads()) == 1


async def test_a_file_alone_is_kept_for_the_next_question_and_a_foreign_url_gets_no_token(slack: Harness) -> None:
    file = slack.fake.upload("heron.md", FILES["heron.md"][1](), "text/markdown")
    await slack.event(file_share("", [file]))
    await slack.settle()
    assert slack.fake.posted()[-1]["text"] == "I've read “heron.md”. What would you like to know about it?"
    elsewhere = {**file, "id": "F9", "name": "notes.md", "url_private_download": "https://attacker.example/notes.md"}
    await slack.event(file_share(f"<@{BOT_USER}> {QUESTION}", [elsewhere]))
    await slack.settle()
    answer, problem = slack.fake.posted()[-2:]
    assert "48,000 euros" in as_text(answer)
    assert problem["text"] == "I couldn't download “notes.md” — please try sending it again."


@pytest.mark.slow  # real OCR: seconds on a busy machine
async def test_a_screenshot_is_read_and_what_does_this_mean_is_answered_from_it(slack: Harness) -> None:
    """A screenshot of an error with "what does this mean?": its text (OCR) quoted, the image
    cited by its name; a type not read is named without being downloaded."""
    screenshot = slack.fake.upload("screenshot.png", screenshots.error_dialog(), "image/png")
    sheet = slack.fake.upload(
        "budget.xlsx", b"PK\x03\x04", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    )
    await slack.event(file_share("what does this mean?", [screenshot, sheet]))
    await slack.settle()
    answer, problem = slack.fake.posted()
    assert "license server at 10.0.4.12" in as_text(answer) and "screenshot.png" in as_text(answer)
    assert problem["text"].startswith("I can't read “budget.xlsx”: I read PDF, Word (.docx)")
    assert slack.fake.downloads() == [{"file": screenshot["id"], "authorization": "Bearer xoxb-test"}]


async def test_images_that_cannot_be_read_or_too_many_each_get_a_plain_sentence(slack: Harness) -> None:
    """A decompression bomb (a few KB declaring 10 gigapixels), a cut-off PNG, and images past the
    cap of a message: each said plainly after the answer, none decoded; the question answered."""
    images = [
        slack.fake.upload("bomb.png", screenshots.bomb(), "image/png"),
        *(slack.fake.upload(f"cut{n}.png", screenshots.corrupt(), "image/png") for n in range(MAX_IMAGES + 1)),
    ]
    await slack.event(file_share("Which cabin class may I book for a flight of 6 hours or more?", images))
    await slack.settle()
    answer, *problems = slack.fake.posted()
    assert "premium economy" in as_text(answer).lower()
    assert [p["text"] for p in problems] == [
        "I couldn't read “bomb.png”: it is larger than 40 megapixels. Please send a screenshot.",
        *(
            f"I couldn't open the image “cut{n}.png”: it seems damaged or cut off. Please send it again."
            for n in range(MAX_IMAGES - 1)
        ),
        f"I read the first {MAX_IMAGES} images of a message; 2 more went unread — please send them in another message.",
    ]
    downloaded = {c["file"] for name, c in slack.fake.calls if name == "files.download"}
    assert downloaded == {i["id"] for i in images[:MAX_IMAGES]}  # those past the cap were never fetched
