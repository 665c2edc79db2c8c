"""What every front-end says the same way about a reply: where its answer comes from, that it may
be incomplete, whom to ask when the documents don't know, and which knowledge the place it was
asked in may read — in the reply's language. The platforms only style these (mrkdwn, Telegram
HTML, plain lines), so an answer reads alike wherever it is asked."""

from __future__ import annotations

import re

from threadsage.chat import Citation, Found, Reply, ReplyKind, Step, answers_from_documents
from threadsage.i18n import Language, say
from threadsage.settings.sections import AccessSettings

STEPS = {Step.SEARCHING: "step_searching", Step.CHECKING: "step_checking", Step.WRITING: "step_writing"}  # keys
LOW_CONFIDENCE = say("low_confidence")  # in English; `say("low_confidence", reply.language)` for a reply
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\](){}<>#+\-.!|~&])")


def handoff_markdown(reply: Reply) -> str:
    """The pointer to the reply's hand-off contact, as Markdown showing its name ("" when none)."""
    if reply.handoff is None:
        return ""
    return say("handoff", reply.language, contact=_MARKDOWN_PUNCTUATION.sub(r"\\\1", reply.handoff.plain))


def citation_label(citation: Citation) -> str:
    """'title › heading', or the path of a document that has neither."""
    return " › ".join(part for part in (citation["title"], citation["heading"]) if part) or citation["path"]


def citation_url(citation: Citation) -> str:
    """The web link of a cited document: its own (front matter, base URL, connector), or its source
    when that is a web address; "" for a file only known by its path."""
    if citation.get("url"):
        return citation["url"]
    return citation["source"] if citation["source"].startswith(("http://", "https://")) else ""


def source_markdown(citation: Citation) -> str:
    """One source as a Markdown line: a document with a link links its label; a file names its path."""
    label, url = citation_label(citation), citation_url(citation)
    if url:
        return f"[{citation['number']}] [{label}]({url})"
    return f"[{citation['number']}] {label} — `{citation['path']}`"


def found_text(found: Found, language: Language) -> str:
    """ "Found 5 passages in 3 documents", in `language`."""
    passages = say("found_passage" if found.passages == 1 else "found_passages", language, count=found.passages)
    return say("step_found", language, passages=passages, documents=documents_text(len(found.documents), language))


def documents_text(count: int, language: Language) -> str:
    """ "1 document", "3 documents"."""
    return say("coverage_document" if count == 1 else "coverage_documents", language, count=count)


def web_sources(found: Found) -> list[tuple[str, str]]:
    """The found documents that can be opened on the web: (title, address)."""
    return [(title, link) for title, link in found.documents if link.startswith(("http://", "https://"))]


def place_categories(settings: AccessSettings, channel: str, private: bool) -> tuple[str, ...] | None:
    """The knowledge categories a place may read (None: every one). Private conversations (DMs)
    are all one place, channel "", whatever their id: the default categories cover them."""
    return settings.categories_for("" if private else channel)


# What every front-end's escalation to experts keeps (`slack.help`, `telegram.help`; how long: `chat.escalations`).
QUESTION_CHARS = 1000  # of the question, kept with an escalation
ATTEMPT_CHARS = 1500  # of the bot's answer, shown in an escalation


def covered(reply: Reply) -> bool:
    """An answer from the documents, or a verified answer (an expert's cites nothing): what a help
    channel posts rather than sends to the experts."""
    return answers_from_documents(reply) or reply.route == "verified"


def verifiable(reply: Reply) -> bool:
    """Whether a curator may keep `reply` as a verified answer: a turn's own answer from the
    documents (not a verified answer given again, nor a gap's follow-up)."""
    return reply.kind is ReplyKind.ANSWER and bool(reply.citations) and reply.route not in ("verified", "gap_follow_up")
