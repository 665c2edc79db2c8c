"""Resolved Slack threads as a source: where much of a team's knowledge is, in the answers people
gave in help channels (docs/sources.md, "Slack").

A source `{type: slack, channels: [C0HELPDESK], category: it}` lists each channel's threads
(`conversations.history`, then `conversations.replies` for those with replies) and keeps those the
asker marked resolved: a ✅ (`white_check_mark`, `heavy_check_mark`) from the person who asked, on
the reply that answered (that reply is the answer) or on the question (the last reply of someone
else is). A ✅ from anyone else does not resolve a thread. Each resolved thread is one document —
the question and the accepted answer — cited by its link (`https://slack.com/archives/<channel>/
p<ts>`, which opens it in the workspace). An edited question or answer is read again at the next
sync (the thread's version is its text); a thread no longer resolved, or deleted, leaves the
knowledge base with it.

A private channel's threads are indexed in a category of their own, `slack-members-<channel id>`,
which only its members read, in a DM or in that channel (`chat.members`: fail-closed). Not indexed:
DMs, channels shared with other organisations (Slack Connect), bots' threads; secrets in messages
(tokens, keys, "password: …") are masked. Each channel refused says why in the sync's report.

The Web API is read over plain HTTP (`connectors.http`: the token goes to the API's host only, a
429's Retry-After is waited out), as the other connectors read theirs: the platform SDKs stay in
the front-ends. `conversations.*` are Tier 3 for internal apps, 1 a minute for a commercially
distributed app not in the Marketplace.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlencode

import httpx

from threadsage.adapters.documents.loaders import Document
from threadsage.adapters.documents.sections import Section, clean_text
from threadsage.adapters.knowledge.collection import members_category
from threadsage.ingestion.connectors import http
from threadsage.ingestion.connectors.base import Entry, Known, Scan
from threadsage.ingestion.spec import SourceSpec
from threadsage.observability.redaction import redact
from threadsage.settings.sections import PlatformSettings

RESOLVED = frozenset({"white_check_mark", "heavy_check_mark"})
PAGE = 200  # messages a page of history or replies
API = "https://slack.com/api/"
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
TITLE_CHARS = 80
_SECRET = re.compile(
    r"(?i)\b(password|passwd|pwd|passcode|pin|secret|api[ _-]?key|token)(\s*(?:is|:|=)\s*)(\S+)"
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key ids
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
)
_MENTION = re.compile(r"<[@#!][^>]*>")


class SlackRefused(Exception):
    """The Web API answered `ok: false` (its error says why)."""


class SlackThreadsConnector:
    def __init__(self, spec: SourceSpec, platform: PlatformSettings | None) -> None:
        self.spec = spec
        secret = platform.slack_bot_token if platform is not None else None
        self.token = secret.get_secret_value() if secret is not None else ""
        self.api = ((platform.slack_api_url if platform is not None else None) or API).rstrip("/") + "/"
        self.site = http.Site(self.api)  # the token goes nowhere else
        self._private: dict[str, bool] = {}  # channel → private, from conversations.info

    async def scan(self, known: Known) -> Scan:
        if not self.token:
            raise PermissionError("set SLACK_BOT_TOKEN for Slack sources (the bot must be in their channels)")
        scan = Scan()
        async with http.client() as client:
            for channel in self.spec.channels:
                try:
                    refused = await self._refused(client, channel)
                    if refused:
                        scan.failed.append((channel, refused))
                        continue
                    for root in await self._pages(client, "conversations.history", channel=channel):
                        if root.get("reply_count") and not root.get("bot_id") and root.get("user"):
                            replies = await self._pages(client, "conversations.replies", channel=channel, ts=root["ts"])
                            self._read(channel, replies, known, scan)
                except (SlackRefused, http.FetchFailed) as exc:
                    scan.failed.append((channel, str(exc)))
                    scan.complete = False  # a thread not listed may well still be resolved
        return scan

    async def _call(self, client: httpx.AsyncClient, method: str, **arguments: object) -> dict[str, Any]:
        query = urlencode({k: v for k, v in arguments.items() if v not in (None, "")})
        headers = {"Authorization": f"Bearer {self.token}"}
        fetched = await http.fetch(client, self.site, f"{self.api}{method}?{query}", MAX_RESPONSE_BYTES, headers)
        try:
            answer = json.loads(fetched.body)
        except ValueError:
            raise http.FetchFailed(f"not JSON from {method} (HTTP {fetched.status})") from None
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = answer.get("error") if isinstance(answer, dict) else None
            raise SlackRefused(f"Slack refused {method}: {error or f'HTTP {fetched.status}'}")
        return answer

    async def _refused(self, client: httpx.AsyncClient, channel: str) -> str:
        """Why a channel is not indexed ("" when it is): a DM, or shared with another organisation.
        A private channel is indexed for its members only (`_category`)."""
        info = (await self._call(client, "conversations.info", channel=channel)).get("channel") or {}
        if info.get("is_im") or info.get("is_mpim"):
            return "a direct message: not indexed"
        if info.get("is_ext_shared") or info.get("is_shared"):
            return "shared with another organisation (Slack Connect): not indexed"
        self._private[channel] = bool(info.get("is_private"))
        return ""

    def _category(self, channel: str) -> str:
        """A private channel's threads are for its members only, whatever the source's category."""
        return members_category(channel) if self._private.get(channel) else self.spec.category

    async def _pages(self, client: httpx.AsyncClient, method: str, **arguments: object) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        cursor = ""
        while True:
            answer = await self._call(client, method, limit=PAGE, cursor=cursor, **arguments)
            messages += answer.get("messages", [])
            cursor = (answer.get("response_metadata") or {}).get("next_cursor", "")
            if not cursor:
                return messages

    def _read(self, channel: str, thread: list[dict[str, Any]], known: Known, scan: Scan) -> None:
        """One thread: a document when its asker marked it resolved."""
        root, replies = thread[0], [m for m in thread[1:] if m.get("user") and not m.get("bot_id")]
        answer = accepted(root, replies)
        if answer is None:
            return
        question, reply = _plain(root.get("text", "")), _plain(answer.get("text", ""))
        link = f"https://slack.com/archives/{channel}/p{root['ts'].replace('.', '')}"
        version = hashlib.sha256(f"{question}\n{reply}".encode()).hexdigest()[:16]
        entry: Entry = {"version": version}
        if known.entries.get(link, {}).get("version") == version:
            scan.unchanged[link] = entry
            return
        title = clean_text(question.splitlines()[0])[:TITLE_CHARS] if question else root["ts"]
        text = f"Question: {question}\n\nAnswer: {reply}"
        document = Document(
            source=link,
            path=f"slack/{channel}/{root['ts']}",
            title=title,
            sections=(Section((title,), text),),
            content_hash=version,
            category=self._category(channel),
            url=link,
        )
        scan.documents.append((document, entry))


def accepted(root: dict[str, Any], replies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The reply the asker accepted: the one they marked ✅, else — their ✅ on the question — the
    last reply of someone else; None when the asker marked nothing (or no one else replied)."""
    asker = root.get("user")
    marked = [m for m in replies if _resolved_by(m, asker)]
    if marked:
        return marked[-1]
    if _resolved_by(root, asker):
        others = [m for m in replies if m.get("user") != asker]
        return others[-1] if others else None
    return None


def _resolved_by(message: dict[str, Any], asker: object) -> bool:
    return any(r.get("name") in RESOLVED and asker in (r.get("users") or []) for r in message.get("reactions") or [])


def _plain(text: str) -> str:
    """A message's text as it is indexed: mentions out, secrets masked."""
    masked = _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}***" if m.group(1) else "***", text)
    return redact(_MENTION.sub("", masked)).strip()
