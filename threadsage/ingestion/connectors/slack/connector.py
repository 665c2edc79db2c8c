"""Reading a Slack source's channels over the Web API: the whole history on the first sync and on
the source's schedule, and between those only the threads the bot saw change (`marks`).

- **A full sync** lists each channel's history (`conversations.history`, 200 a page) and reads the
  replies (`conversations.replies`) of the threads whose question shows a change since they were
  last read — a new reply, an edit, a ✅ on the question (`reading.signature`) — or were read more
  than a day ago (a ✅ on a reply shows nowhere in the history). A first sync reads every thread.
- **Between full syncs**, the bot marks the threads it saw change — a ✅ added or taken away, an
  edit, a deletion, the "Resolved" button — and a channel deleted or archived
  (`bots/slack/resolving.py`); the source's sync wakes within seconds and reads only those.
- A thread no longer resolved, or deleted, leaves the knowledge base; so does every thread of a
  channel deleted or archived, or one the bot was removed from.

The Web API is read over plain HTTP (`connectors.http`: the token goes to the API's host only, a
429's Retry-After is waited out), as the other connectors read theirs: the platform SDKs stay in
the front-ends. `conversations.history` and `.replies` are Tier 3 (50 a minute) for internal apps,
1 a minute for a commercially distributed app not in the Marketplace.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from threadsage.adapters.knowledge.collection import members_category
from threadsage.delivery.coordination import Coordinator
from threadsage.ingestion.connectors import http
from threadsage.ingestion.connectors.base import Known, Scan
from threadsage.ingestion.connectors.slack.reading import (
    Deciders,
    Message,
    accepted,
    document_of,
    link_of,
    signature,
)
from threadsage.ingestion.spec import SourceSpec
from threadsage.settings.sections import PlatformSettings

PAGE = 200  # messages a page of history or replies
API = "https://slack.com/api/"
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
RECHECK_SECONDS = 24 * 3600  # a thread whose question shows no change is read again after this
MARKS_KEPT = 7 * 24 * 3600  # a mark nobody takes (the source was removed) is forgotten after this
DECIDERS_KEPT = 300.0  # seconds the experts' channel's members are kept
WHOLE_CHANNEL = "*"  # the mark of a channel deleted or archived
_GONE_CHANNEL = ("channel_not_found", "not_in_channel", "is_archived")


def threads_key(channel: str) -> str:
    """Where the bot marks a channel's changed threads for its Slack source."""
    return f"slack-threads:{channel}"


class NotIndexed(Exception):
    """A channel whose threads are never indexed (a DM, Slack Connect); the message says why."""


class SlackRefused(Exception):
    """The Web API answered `ok: false`; `error` is Slack's code."""

    def __init__(self, method: str, error: str) -> None:
        super().__init__(f"Slack refused {method}: {error}")
        self.error = error


@dataclass
class Reading:
    """One channel's part of a sync: where its threads go and what is known of them."""

    channel: str
    category: str
    deciders: Deciders
    known: Known
    scan: Scan
    seen: dict[str, tuple[str, float]]


@dataclass
class Memory:
    """What a Slack source remembers between syncs (kept as the source's cursor): when it last
    listed everything, and per channel each thread's signature and when it was read."""

    listed: float = 0.0
    threads: dict[str, dict[str, tuple[str, float]]] = field(default_factory=dict)

    @classmethod
    def of(cls, cursor: str) -> Memory:
        try:
            data = json.loads(cursor) if cursor else {}
            threads = {
                c: {ts: (str(s), float(t)) for ts, (s, t) in seen.items()} for c, seen in data["threads"].items()
            }
            return cls(float(data["listed"]), threads)
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls()  # none yet, or unreadable: everything is read again

    def cursor(self) -> str:
        return json.dumps({"listed": self.listed, "threads": self.threads}, separators=(",", ":"))


class SlackThreadsConnector:
    def __init__(
        self,
        spec: SourceSpec,
        platform: PlatformSettings | None,
        experts: str | None = None,
        marks: Coordinator | None = None,
    ) -> None:
        self.spec = spec
        secret = platform.slack_bot_token if platform is not None else None
        self.token = secret.get_secret_value() if secret is not None else ""
        self.api = ((platform.slack_api_url if platform is not None else None) or API).rstrip("/") + "/"
        self.site = http.Site(self.api)  # the token goes nowhere else
        self.experts_channel = experts  # whose members may resolve a thread too
        self.marks = marks
        self.calls: dict[str, int] = {}  # Web API calls by method, for the backfill's figures
        self._marked: dict[str, set[str]] = {}  # taken from `marks`, not yet read
        self._bot_user = ""
        self._deciders_read: tuple[float, Deciders] | None = None

    async def waiting(self) -> bool:
        """Whether the bot marked threads of this source's channels since the last sync (the
        marks are taken now; the next `scan` reads them)."""
        if self.marks is not None:
            for channel in self.spec.channels:
                self._marked.setdefault(channel, set()).update(await self.marks.take_marks(threads_key(channel)))
        return any(self._marked.values())

    async def scan(self, known: Known) -> Scan:
        if not self.token:
            raise PermissionError("set SLACK_BOT_TOKEN for Slack sources (the bot must be in their channels)")
        await self.waiting()
        marked, self._marked = self._marked, {}
        memory = Memory.of(known.cursor)
        full = time.time() - memory.listed >= self.spec.interval
        scan = Scan(complete=full)
        async with http.client() as client:
            deciders = await self._deciders(client)
            for channel in self.spec.channels:
                if full or marked.get(channel):
                    await self._channel(
                        client, channel, full, marked.get(channel, set()), deciders, known, memory, scan
                    )
        if full and scan.complete:
            memory.listed = time.time()
        scan.cursor = memory.cursor()
        return scan

    async def _channel(
        self,
        client: httpx.AsyncClient,
        channel: str,
        full: bool,
        marked: set[str],
        deciders: Deciders,
        known: Known,
        memory: Memory,
        scan: Scan,
    ) -> None:
        try:
            category = await self._category(client, channel)
            seen = memory.threads.setdefault(channel, {})
            read = Reading(channel, category, deciders, known, scan, seen)
            if full:
                await self._history(client, read, marked)
            else:
                for ts in sorted(marked - {WHOLE_CHANNEL}):
                    await self._thread(client, read, ts, None)
        except NotIndexed as exc:  # none of its threads stay
            scan.failed.append((channel, str(exc)))
            self._drop(channel, known, memory, scan)
        except SlackRefused as exc:
            if exc.error in _GONE_CHANNEL:
                self._drop(channel, known, memory, scan)
            else:
                self._failed(scan, channel, str(exc))
        except http.FetchFailed as exc:
            self._failed(scan, channel, str(exc))

    async def _history(self, client: httpx.AsyncClient, read: Reading, marked: set[str]) -> None:
        """Every thread of the channel, read again where its question shows a change."""
        roots = await self._pages(client, "conversations.history", channel=read.channel)
        for ts in set(read.seen) - {root["ts"] for root in roots}:
            del read.seen[ts]  # its question was deleted: pruned as absent from the listing
        for root in roots:
            if not root.get("reply_count") or root.get("bot_id") or not root.get("user"):
                continue
            last = read.seen.get(root["ts"], ("", 0.0))
            fresh = last[0] == signature(root) and time.time() - last[1] < RECHECK_SECONDS
            link = link_of(read.channel, root["ts"])
            if fresh and root["ts"] not in marked:
                if link in read.known.entries:
                    read.scan.unchanged[link] = dict(read.known.entries[link])
                continue
            await self._thread(client, read, root["ts"], signature(root))

    async def _thread(self, client: httpx.AsyncClient, read: Reading, ts: str, sign: str | None) -> None:
        """Read one thread (`ts`: its question's, or — a ✅ on a reply — one of its replies'):
        indexed if resolved, gone if not (or deleted)."""
        thread = await self._replies(client, read.channel, ts)
        root = thread[0].get("thread_ts") if thread else None
        if root and root != ts and thread[0].get("ts") == ts:  # a reply alone: its thread is read
            ts, thread = root, await self._replies(client, read.channel, root)
        link = link_of(read.channel, ts)
        answer = accepted(thread, read.deciders) if thread and thread[0].get("ts") == ts else None
        read.seen[ts] = (sign if sign is not None else read.seen.get(ts, ("", 0.0))[0], time.time())
        if answer is None:
            if link in read.known.entries:
                read.scan.gone.add(link)
            return
        document, entry = document_of(read.channel, thread, answer, read.category)
        if read.known.entries.get(link, {}).get("version") == entry["version"]:
            read.scan.unchanged[link] = entry
        else:
            read.scan.documents.append((document, entry))

    async def _replies(self, client: httpx.AsyncClient, channel: str, ts: str) -> list[Message]:
        """A thread's messages, its question first ([] when it is gone)."""
        try:
            return await self._pages(
                client, "conversations.replies", channel=channel, ts=ts, include_all_metadata="true"
            )
        except SlackRefused as exc:
            if exc.error != "thread_not_found":
                raise
            return []

    @staticmethod
    def _drop(channel: str, known: Known, memory: Memory, scan: Scan) -> None:
        """A channel gone, or not to be indexed: its threads leave the knowledge base."""
        scan.gone |= {key for key in known.entries if key.startswith(link_of(channel, ""))}
        memory.threads.pop(channel, None)

    def _failed(self, scan: Scan, channel: str, reason: str) -> None:
        scan.failed.append((channel, reason))
        scan.complete = False  # a thread not listed may well still be resolved

    async def _category(self, client: httpx.AsyncClient, channel: str) -> str:
        """Where a channel's threads are indexed: the source's category, or a private channel's
        members-only one. NotIndexed for a DM or a channel shared with another organisation;
        SlackRefused when it is gone or archived."""
        info: dict[str, Any] = (await self._call(client, "conversations.info", channel=channel)).get("channel") or {}
        if info.get("is_im") or info.get("is_mpim"):
            raise NotIndexed("a direct message: not indexed")
        if info.get("is_ext_shared") or info.get("is_shared"):
            raise NotIndexed("shared with another organisation (Slack Connect): not indexed")
        if info.get("is_archived"):
            raise SlackRefused("conversations.info", "is_archived")
        return members_category(channel) if info.get("is_private") else self.spec.category

    async def _deciders(self, client: httpx.AsyncClient) -> Deciders:
        """The bot itself (`auth.test`, once) and the experts of the source's category (the
        members of their channel, kept `DECIDERS_KEPT`); only askers when Slack does not say."""
        if self._deciders_read and time.monotonic() - self._deciders_read[0] < DECIDERS_KEPT:
            return self._deciders_read[1]
        try:
            bot_user = self._bot_user or str((await self._call(client, "auth.test")).get("user_id") or "")
            experts: list[str] = []
            if self.experts_channel:
                experts = await self._pages(
                    client, "conversations.members", key="members", channel=self.experts_channel
                )
        except (SlackRefused, http.FetchFailed):
            return Deciders(bot_user=self._bot_user)
        self._bot_user = bot_user
        self._deciders_read = (time.monotonic(), Deciders(frozenset(str(e) for e in experts), bot_user))
        return self._deciders_read[1]

    async def _call(self, client: httpx.AsyncClient, method: str, **arguments: object) -> dict[str, Any]:
        self.calls[method] = self.calls.get(method, 0) + 1
        query = urlencode({k: v for k, v in arguments.items() if v not in (None, "")})
        headers = {"Authorization": f"Bearer {self.token}"}
        fetched = await http.fetch(client, self.site, f"{self.api}{method}?{query}", MAX_RESPONSE_BYTES, headers)
        try:
            answer = json.loads(fetched.body)
        except ValueError:
            raise http.FetchFailed(f"not JSON from {method} (HTTP {fetched.status})") from None
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = answer.get("error") if isinstance(answer, dict) else None
            raise SlackRefused(method, str(error or f"HTTP {fetched.status}"))
        return answer

    async def _pages(
        self, client: httpx.AsyncClient, method: str, key: str = "messages", **arguments: object
    ) -> list[Any]:
        items: list[Any] = []
        cursor = ""
        while True:
            answer = await self._call(client, method, limit=PAGE, cursor=cursor, **arguments)
            items += answer.get(key) or []
            cursor = (answer.get("response_metadata") or {}).get("next_cursor", "")
            if not cursor:
                return items
