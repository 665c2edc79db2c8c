"""One Slack thread as the knowledge base keeps it: resolved or not, and by whom; its question and
the accepted answer as one document, cited by the thread's link.

A thread is resolved by a ✅ (`white_check_mark`, `heavy_check_mark`) from the person who asked or
from an expert — on the reply that answered (that reply is the answer), or on the question (then
the last reply of someone other than the asker is) — or by the bot's "Resolved" button, which the
bot records in the thread as a message of its own carrying `RESOLVED_EVENT` metadata: who pressed it
and which answer (`bots/slack/resolving.py`). A ✅ or a press from anyone else resolves nothing; so
does such a message from any other app.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from threadsage.adapters.documents.loaders import Document
from threadsage.adapters.documents.sections import Section, clean_text
from threadsage.ingestion.connectors.base import Entry
from threadsage.observability.redaction import redact

RESOLVED = frozenset({"white_check_mark", "heavy_check_mark"})
RESOLVED_EVENT = "threadsage_resolved"  # the metadata of the bot's record of a "Resolved" press
TITLE_CHARS = 80
_SECRET = re.compile(
    r"(?i)\b(password|passwd|pwd|passcode|pin|secret|api[ _-]?key|token)(\s*(?:is|:|=)\s*)(\S+)"
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key ids
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
)
_MENTION = re.compile(r"<[@#!][^>]*>")

Message = dict[str, Any]


@dataclass(frozen=True)
class Deciders:
    """Who may resolve a channel's threads besides their asker: the experts (everyone in the
    experts' channel of the source's category), and the bot, whose record of a press counts."""

    experts: frozenset[str] = frozenset()
    bot_user: str = ""

    def may_resolve(self, user: object, asker: object) -> bool:
        return user == asker or user in self.experts


def link_of(channel: str, thread_ts: str) -> str:
    """The thread's link, which opens it in the workspace: the document's identity and citation."""
    return f"https://slack.com/archives/{channel}/p{thread_ts.replace('.', '')}"


def accepted(thread: list[Message], deciders: Deciders) -> Message | None:
    """The answer the thread was resolved with (None: not resolved). `thread` is its messages,
    the question first, as conversations.replies returns them."""
    root, rest = thread[0], thread[1:]
    if root.get("subtype") == "tombstone":  # the question was deleted, its replies stay
        return None
    asker = root.get("user")
    people = [m for m in rest if m.get("user") and not m.get("bot_id")]
    pressed = [m for m in rest if _press(m, deciders, asker)]
    if pressed:  # the newest press names its answer, a person's or the bot's own (if not deleted since)
        answer_ts = pressed[-1]["metadata"]["event_payload"].get("answer_ts")
        answer = next((m for m in rest if m.get("ts") == answer_ts and m is not pressed[-1]), None)
        if answer is not None:
            return answer
    marked = [m for m in people if _ticked(m, deciders, asker)]
    if marked:
        return marked[-1]
    if _ticked(root, deciders, asker):
        others = [m for m in people if m.get("user") != asker]
        return others[-1] if others else None
    return None


def document_of(channel: str, thread: list[Message], answer: Message, category: str) -> tuple[Document, Entry]:
    """The question and its accepted answer, as one document and its change token."""
    root = thread[0]
    question, reply = plain(root.get("text", "")), plain(answer.get("text", ""))
    link = link_of(channel, root["ts"])
    version = hashlib.sha256(f"{question}\n{reply}\n{category}".encode()).hexdigest()[:16]
    title = clean_text(question.splitlines()[0])[:TITLE_CHARS] if question else root["ts"]
    document = Document(
        source=link,
        path=f"slack/{channel}/{root['ts']}",
        title=title,
        sections=(Section((title,), f"Question: {question}\n\nAnswer: {reply}"),),
        content_hash=version,
        category=category,
        url=link,
    )
    return document, {"version": version}


def plain(text: str) -> str:
    """A message's text as it is indexed: mentions out, secrets masked."""
    masked = _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}***" if m.group(1) else "***", text)
    return redact(_MENTION.sub("", masked)).strip()


def signature(root: Message) -> str:
    """What a thread's question shows of its thread in the channel's history: a new reply, or a ✅
    added or taken away on the question, changes it (one on a reply does not: events tell)."""
    ticks = sorted(
        f"{r.get('name')}:{','.join(sorted(r.get('users') or []))}"
        for r in root.get("reactions") or []
        if r.get("name") in RESOLVED
    )
    return f"{root.get('latest_reply', '')}|{root.get('reply_count', 0)}|{root.get('text', '')}|{';'.join(ticks)}"


def _ticked(message: Message, deciders: Deciders, asker: object) -> bool:
    return any(
        r.get("name") in RESOLVED and any(deciders.may_resolve(u, asker) for u in r.get("users") or [])
        for r in message.get("reactions") or []
    )


def _press(message: Message, deciders: Deciders, asker: object) -> bool:
    """The bot's own record of a "Resolved" press by someone who may resolve the thread."""
    metadata = message.get("metadata") or {}
    payload = metadata.get("event_payload") or {}
    return (
        bool(deciders.bot_user)
        and message.get("user") == deciders.bot_user
        and metadata.get("event_type") == RESOLVED_EVENT
        and deciders.may_resolve(payload.get("by"), asker)
    )
