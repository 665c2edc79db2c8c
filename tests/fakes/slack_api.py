"""A fake Slack: the Web API over real HTTP, signed event requests, and a Socket Mode websocket.

The real slack_sdk client talks to `FakeSlack.api_url`; tests read what it sent from `calls`.
`rate_limit_next(method)` answers the next call of a method with HTTP 429 and Retry-After: 1;
`refuse_next(method, error)` answers it with `{"ok": false, "error": error}`, as Slack refuses a
call (`invalid_blocks`, `msg_too_long`, …);
a token in `revoked` is refused (`invalid_auth`) by every method; `drop_next(method, times)`
closes the connection of the next calls without an answer; a channel in `not_member` refuses
chat.postMessage with `not_in_channel`, as Slack does where the bot was not invited.

The bot's messages are kept as Slack keeps them: chat.update changes them (text, blocks, metadata),
chat.delete removes them, and conversations.replies/history read them back. A `response_url` of a
command, shortcut or click points at `FakeSlack.response_url(name)`; what is posted there is
recorded as the call "response_url" — at most five per URL ("up to 5 times within 30 minutes" of
the invocation), with text or blocks, ephemeral unless `response_type` says `in_channel`.
chat.postEphemeral needs channel, user and text or blocks, and the bot's membership.

Streamed messages (docs.slack.dev/reference/methods/chat.startStream, …/chat.appendStream,
…/chat.stopStream): startStream needs `channel`, and `recipient_user_id` with `recipient_team_id`
when streaming to a channel (not a DM); without `thread_ts` only a channel's top level may be
streamed into; appendStream and stopStream need `channel` and `ts` of a message still streaming
(`message_not_in_streaming_state` otherwise); each markdown text is at most 12,000 characters.
The text (`markdown_text`, or `chunks` of type markdown_text as slack_sdk sends it) accumulates in
the stored message, which chat.update may change once the stream is stopped; `streams` keeps each
stream's appends in order.

Rate limits as the Web API documents them ("Rate limits"; each method's tier), per method in the
workspace: Tier 3 (`chat.update`, `chat.delete`, `reactions.add`, `reactions.remove`,
`conversations.history`, `.replies`, `.info`) 50 calls in any minute, Tier 4 (`chat.appendStream`,
`conversations.members`) 100; `chat.postMessage` one a second in a channel, taken
as 60 in any minute (bursts allowed). A call past them is answered HTTP 429 `ratelimited` with
Retry-After (the seconds until the window has room), recorded as `method#429` (`rate_limited()`).

Files (`upload`) are kept as Slack keeps them: `files.info` returns the file object, and its
`url_private_download` serves the bytes only to a request with a bearer token — without one Slack
answers with its sign-in page (HTML, status 200), and so does the fake.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.http import DROP, ServedFake

BOT_USER = "U0BOT"
BOT_ID = "B0BOT"
TEAM = "T111"


def signed_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """Headers Slack sends with every HTTP event: v0 signature over `v0:{ts}:{body}`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def event_body(event: dict, event_id: str, shared: bool = False) -> bytes:
    """An Events API delivery; `shared`: the channel is shared with another organisation (Slack Connect)."""
    return json.dumps(
        {
            "token": "verification-token",
            "team_id": TEAM,
            "api_app_id": "A111",
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True, "is_enterprise_install": False}],
            "is_ext_shared_channel": shared,
        }
    ).encode()


def command_body(
    text: str, response_url: str, trigger_id: str, channel: str = "C111", user: str = "U222", team: str = TEAM
) -> bytes:
    """A slash command as Slack posts it: form-encoded fields
    (docs.slack.dev/interactivity/implementing-slash-commands)."""
    fields = {
        "token": "verification-token", "team_id": team, "team_domain": "acme", "channel_id": channel,
        "channel_name": "directmessage" if channel.startswith("D") else "support", "user_id": user,
        "user_name": user.lower(), "command": "/ask", "text": text, "api_app_id": "A111",
        "is_enterprise_install": "false", "response_url": response_url, "trigger_id": trigger_id,
    }  # fmt: skip
    return urllib.parse.urlencode(fields).encode()


def shortcut_body(
    message: dict, channel: str, user: str, response_url: str, trigger_id: str, callback_id: str = "ask_threadsage"
) -> bytes:
    """A message shortcut (`message_action`) on `message`, form-encoded as `payload=<JSON>`
    (docs.slack.dev/reference/interaction-payloads/shortcuts-interactions-payload)."""
    payload = {
        "type": "message_action", "token": "verification-token", "action_ts": f"{time.time():.6f}",
        "team": {"id": TEAM, "domain": "acme"}, "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "channel": {"id": channel, "name": "support"}, "is_enterprise_install": False, "enterprise": None,
        "callback_id": callback_id, "trigger_id": trigger_id, "response_url": response_url,
        "message_ts": message["ts"], "message": {"type": "message", **message},
    }  # fmt: skip
    return ("payload=" + urllib.parse.quote(json.dumps(payload))).encode()


def home_opened(user: str, tab: str = "home", viewing: str | None = None) -> dict:
    """The `app_home_opened` event (docs.slack.dev/reference/events/app_home_opened); under agent
    messaging, the Messages tab's may carry the channel the person views (`context.entities`)."""
    ts = f"{time.time():.6f}"
    event = {"type": "app_home_opened", "user": user, "channel": "D" + user[1:], "tab": tab, "event_ts": ts}
    return event | ({"context": viewed(viewing)} if viewing is not None else {})


def app_context_changed(user: str, viewing: str | None) -> dict:
    """The `app_context_changed` event (docs.slack.dev/reference/events/app_context_changed): the
    channel the person views, `{}` when nothing is; the user is the one of its `authorizations`."""
    return {"type": "app_context_changed", "user": user, "context": viewed(viewing), "event_ts": f"{time.time():.6f}"}


def viewed(channel: str | None) -> dict:
    """An agent event's `context`: its entities, the most relevant first."""
    return {"entities": [{"type": "slack#/types/channel_id", "value": channel, "team_id": TEAM}]} if channel else {}


def assistant_thread(kind: str, user: str, channel: str, thread_ts: str, context: dict | None = None) -> dict:
    """`assistant_thread_started` or `assistant_thread_context_changed`: the person opened the AI panel
    (or moved to another channel with it open); `context` names the channel they view
    (docs.slack.dev/reference/events/assistant_thread_started, …/assistant_thread_context_changed)."""
    thread = {"user_id": user, "context": context or {}, "channel_id": channel, "thread_ts": thread_ts}
    return {"type": kind, "assistant_thread": thread, "event_ts": f"{time.time():.6f}"}


# The required arguments of the assistant.threads.* methods (docs.slack.dev/reference/methods/<method>).
ASSISTANT_METHODS = {
    "assistant.threads.setStatus": ("channel_id", "thread_ts", "status"),
    "assistant.threads.setSuggestedPrompts": ("channel_id", "prompts"),  # thread_ts: the assistant experience only
    "assistant.threads.setTitle": ("channel_id", "thread_ts", "title"),
}
MAX_PROMPTS = 4  # setSuggestedPrompts: "a maximum of 4 prompts"
MAX_LOADING_MESSAGES = 10  # setStatus's loading_messages: "Maximum of 10 messages"
RESPONSE_URL_USES = 5  # "up to 5 times within 30 minutes"
STREAM_TEXT_CHARS = 12_000  # markdown_text: "Limit this field to 12,000 characters"
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
TIERS = {
    **dict.fromkeys(("chat.update", "chat.delete", "reactions.add", "reactions.remove"), 50),
    **dict.fromkeys(("conversations.history", "conversations.replies", "conversations.info"), 50),
    **dict.fromkeys(("chat.appendStream", "conversations.members"), 100),
}
POSTS_A_MINUTE = 60  # chat.postMessage: "1 per second per channel", short bursts allowed


def message_changed(channel: str, original: dict, new_text: str, channel_type: str = "channel") -> dict:
    """The `message_changed` event of an edit (docs.slack.dev/reference/events/message/message_changed)."""
    edited_ts = f"{time.time():.6f}"
    message = {**original, "text": new_text, "edited": {"user": original["user"], "ts": edited_ts}}
    return {
        "type": "message", "subtype": "message_changed", "hidden": True, "channel": channel, "ts": edited_ts,
        "event_ts": edited_ts, "channel_type": channel_type, "message": message, "previous_message": original,
    }  # fmt: skip


def action_body(
    message: dict,
    channel: str,
    user: str,
    action_id: str,
    value: str,
    label: str,
    action_ts: str,
    user_team: str = TEAM,
    kind: str = "button",
) -> bytes:
    """A `block_actions` payload for a button in `message` (as posted by the bot), pressed by
    `user` of the team `user_team`; `kind` "feedback_buttons" for one of Slack's feedback buttons,
    whose action carries the pressed button's value and text (docs.slack.dev/reference/block-kit/
    block-elements/feedback-buttons-element)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": user_team},
        "api_app_id": "A111",
        "token": "verification-token",
        "container": {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": channel,
            "is_ephemeral": False,
            **({"thread_ts": message["thread_ts"]} if message.get("thread_ts") else {}),
        },
        "trigger_id": "1.2.3",
        "team": {"id": TEAM, "domain": "acme"},
        "channel": {"id": channel, "name": "support"},
        "message": message,
        "state": {"values": {}},
        "response_url": "http://127.0.0.1:9/none",
        "actions": [
            {
                "action_id": action_id,
                "block_id": "b",
                "text": {"type": "plain_text", "text": label, "emoji": True},
                "value": value,
                "type": kind,
                "action_ts": action_ts,
            }
        ],
    }
    return ("payload=" + urllib.parse.quote(json.dumps(payload))).encode()


def ephemeral_action_body(
    channel: str, user: str, action_id: str, value: str, label: str, response_url: str, action_ts: str
) -> bytes:
    """A `block_actions` payload for a button on an ephemeral message: its container says so
    (`is_ephemeral`), it has no `message` (Slack keeps no copy of it), and its `response_url`
    reaches the ephemeral message (docs.slack.dev/reference/interaction-payloads/block_actions-payload)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
        "api_app_id": "A111",
        "token": "verification-token",
        "container": {"type": "message", "message_ts": action_ts, "channel_id": channel, "is_ephemeral": True},
        "trigger_id": "1.2.3",
        "team": {"id": TEAM, "domain": "acme"},
        "channel": {"id": channel, "name": "support"},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [
            {
                "action_id": action_id,
                "block_id": "b",
                "text": {"type": "plain_text", "text": label, "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": action_ts,
            }
        ],
    }
    return ("payload=" + urllib.parse.quote(json.dumps(payload))).encode()


@dataclass
class FakeSlack(ServedFake):
    calls: list[tuple[str, dict]] = field(default_factory=list)
    _rate_limited: dict[str, int] = field(default_factory=dict)
    _refused: dict[str, str] = field(default_factory=dict)
    hold: dict[str, float] = field(default_factory=dict)  # method → seconds to wait after recording
    _dropped: dict[str, int] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    locales: dict[str, str] = field(default_factory=dict)  # users.info: a person's locale (default en-US)
    names: dict[str, str] = field(default_factory=dict)  # users.info: a person's full name (profile.real_name)
    not_member: set[str] = field(default_factory=set)
    # chat.postMessage takes "an encoded ID or channel name": a name posts to its channel's id, an
    # unknown one is `channel_not_found`
    channel_names: dict[str, str] = field(default_factory=dict)
    messages: dict[tuple[str, str], dict] = field(default_factory=dict)  # (channel, ts) → the message as it is now
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ts: int = 0
    socket_url: str = ""
    files: dict[str, tuple[dict, bytes]] = field(default_factory=dict)  # id → (file object, content)
    # (channel, thread_ts) → the assistant thread's status as shown: "" once cleared, by an empty
    # status or by the bot's next message in the thread (setStatus: "removed if no message has been sent")
    statuses: dict[tuple[str, str], str] = field(default_factory=dict)
    streams: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (channel, ts) → texts, in order
    tasks: dict[tuple[str, str], dict[str, dict]] = field(default_factory=dict)  # (channel, ts) → task id → task
    plans: dict[tuple[str, str], str] = field(default_factory=dict)  # (channel, ts) → the plan's title
    ephemerals: dict[str, list[dict]] = field(default_factory=dict)  # response_url name → what it was sent
    _made: dict[str, list[float]] = field(default_factory=dict)  # a rate limit's key → its calls' times
    # (channel, ts) → a person's message, as the events a test sends carry it (`person_said`)
    people: dict[tuple[str, str], dict] = field(default_factory=dict)
    private_channels: set[str] = field(default_factory=set)  # conversations.info: is_private
    shared: set[str] = field(default_factory=set)  # conversations.info: is_ext_shared (Slack Connect)
    members: dict[str, list[str]] = field(default_factory=dict)  # conversations.members, per channel
    gone: set[str] = field(default_factory=set)  # deleted channels: channel_not_found
    archived: set[str] = field(default_factory=set)  # conversations.info: is_archived

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/"

    def rate_limit_next(self, method: str, times: int = 1) -> None:
        self._rate_limited[method] = times

    def rate_limited(self) -> list[str]:
        """The calls answered 429: past a documented limit, or queued by `rate_limit_next`."""
        with self._lock:
            return [name for name, _ in self.calls if name.endswith("#429")]

    def _over_limit(self, method: str, params: dict) -> int:
        """0 if the call is within its documented limit (and counts), else the seconds to wait."""
        if method in TIERS:
            key, calls = method, TIERS[method]
        elif method == "chat.postMessage":
            key, calls = f"posts:{params.get('channel')}", POSTS_A_MINUTE
        else:
            return 0
        now = time.monotonic()
        made = [t for t in self._made.get(key, []) if t > now - 60]
        if len(made) >= calls:
            self._made[key] = made
            return max(1, int(made[0] + 60 - now + 1))
        self._made[key] = [*made, now]
        return 0

    def drop_next(self, method: str, times: int = 1) -> None:
        self._dropped[method] = times

    def refuse_next(self, method: str, error: str) -> None:
        self._refused[method] = error

    def of(self, method: str) -> list[dict]:
        with self._lock:
            return [params for name, params in self.calls if name == method]

    def posted(self) -> list[dict]:
        """The messages posted with chat.postMessage, as the fake stored them (with their ts)."""
        return self.of("chat.postMessage")

    def current(self, channel: str, thread_ts: str | None = None) -> list[dict]:
        """The bot's messages in a channel (or one thread of it) as they are now, updates applied."""
        with self._lock:
            return [
                dict(m) for (c, ts), m in sorted(self.messages.items(), key=lambda item: item[0][1])
                if c == channel and (thread_ts is None or thread_ts in (m.get("thread_ts"), ts))
            ]  # fmt: skip

    def response_url(self, name: str) -> str:
        return f"{self.url}/response/{name}"

    async def wait_for(self, method: str, count: int = 1, timeout: float = 20.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of(method)
            if len(found) >= count:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"expected {count} {method} call(s), got {self.of(method)}")

    def upload(self, name: str, content: bytes, mimetype: str, size: int | None = None, user: str = "U222") -> dict:
        """A file someone shared, as a `file_share` event lists it (`size` may be given larger than
        the content, to stand for a big file without making one)."""
        with self._lock:
            file_id = f"F{len(self.files) + 1:08d}"
            base = f"{self._server.url if self._server else ''}/files-pri/{TEAM}-{file_id}"
            kind = name.rsplit(".", 1)[-1]
            file = {
                "id": file_id, "created": int(time.time()), "timestamp": int(time.time()), "name": name, "title": name,
                "mimetype": mimetype, "filetype": kind, "pretty_type": kind.upper(), "user": user, "user_team": TEAM,
                "editable": False, "size": len(content) if size is None else size, "mode": "hosted",
                "is_external": False, "external_type": "", "is_public": False, "public_url_shared": False,
                "display_as_bot": False, "username": "", "url_private": f"{base}/{name}",
                "url_private_download": f"{base}/download/{name}",
                "permalink": f"https://acme.slack.com/files/{user}/{file_id}/{name}",
                "is_starred": False, "has_rich_preview": False, "file_access": "visible",
            }  # fmt: skip
            self.files[file_id] = (file, content)
        return file

    def downloads(self) -> list[dict]:
        return self.of("files.download")

    def person_said(self, event: dict) -> dict:
        """A person's message (an event a test sends) kept as Slack keeps it, for the
        conversations.replies/history that read it back; the event, for sending."""
        with self._lock:
            self.people[(event["channel"], event["ts"])] = {
                key: event[key] for key in ("ts", "user", "text", "thread_ts", "bot_id", "reactions") if key in event
            }
        return event

    def _read_back(self, params: dict) -> list[dict]:
        """The messages in a channel (or one thread of it) as they are now, oldest first, as Slack
        returns them: the bot's (metadata only with include_all_metadata) and the people's that
        tests kept (`person_said`); at most `limit`."""
        with_metadata = str(params.get("include_all_metadata", "")).lower() in ("1", "true")
        channel, thread = params.get("channel", ""), params.get("ts")
        messages = []
        for stored in self.current(channel, thread):
            message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "ts": stored["ts"]}
            message["text"] = stored.get("text", "")
            if stored.get("thread_ts"):
                message["thread_ts"] = stored["thread_ts"]
            if with_metadata and stored.get("metadata"):
                message["metadata"] = _json(stored["metadata"])
            messages.append(message)
        with self._lock:
            messages += [
                {"type": "message", **m}
                for (c, ts), m in self.people.items()
                if c == channel and (thread is None or thread in (m.get("thread_ts"), ts))
            ]
        messages.sort(key=lambda m: (m["ts"] != thread, m["ts"]))  # a thread's parent message first
        if thread is None:  # history: the channel's own messages, each parent with its replies' count and last
            replies = [(m.get("thread_ts"), m["ts"]) for m in messages if m.get("thread_ts") not in (None, m["ts"])]
            messages = [
                {**m, **_replies_of(m["ts"], replies)} for m in messages if m.get("thread_ts") in (None, m["ts"])
            ]
        return messages

    def _page(self, params: dict) -> tuple[int, dict, dict]:
        """One page of history or replies, as the Web API pages them: `limit` (100 by default)
        messages from the `cursor` on, `next_cursor` for the rest; a thread of which nothing is
        there is `thread_not_found` (a test's question may not be kept: its replies still are)."""
        messages = self._read_back(params)
        if params.get("ts") and not messages:
            return 200, {}, {"ok": False, "error": "thread_not_found"}
        start = int(base64.b64decode(str(params.get("cursor") or "") + "==").decode() or 0)
        end = start + int(params.get("limit") or 100)
        rest = base64.b64encode(str(end).encode()).decode() if end < len(messages) else ""
        page = {"ok": True, "messages": messages[start:end], "has_more": bool(rest)}
        return 200, {}, {**page, "response_metadata": {"next_cursor": rest}}

    def _respond(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], Any]:
        url = urllib.parse.urlparse(path)
        if url.path.startswith("/files-pri/"):
            return self._download(url.path, headers.get("Authorization", ""))
        params = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        if "json" in headers.get("Content-Type", ""):
            params |= json.loads(raw or b"{}")
        else:
            params |= {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
        if url.path.startswith("/response/"):  # a response_url: JSON in, "ok" out
            name = url.path.rsplit("/", 1)[-1]
            with self._lock:
                sent = self.ephemerals.setdefault(name, [])
                if len(sent) >= RESPONSE_URL_USES:
                    self.calls.append(("response_url#used_url", {**params, "url": name}))
                    return 404, {"Content-Type": "text/html"}, "used_url"
                if not params.get("text") and not params.get("blocks"):
                    self.calls.append(("response_url#no_text", {**params, "url": name}))
                    return 400, {"Content-Type": "text/html"}, "no_text"
                sent.append(params)
                self.calls.append(("response_url", {**params, "url": name}))
            return 200, {"Content-Type": "text/html"}, "ok"
        return self.respond(url.path.rsplit("/", 1)[-1], params, headers.get("Authorization", ""))

    def respond(self, method: str, params: dict, authorization: str) -> tuple[int, dict, dict]:
        with self._lock:
            if self._dropped.get(method):
                self._dropped[method] -= 1
                self.calls.append((f"{method}#dropped", params))
                return DROP, {}, {}
            if error := self._refused.pop(method, ""):
                self.calls.append((f"{method}#{error}", params))
                return 200, {}, {"ok": False, "error": error}
            if self._rate_limited.get(method):
                self._rate_limited[method] -= 1
                self.calls.append((f"{method}#429", params))
                return 429, {"Retry-After": "1"}, {"ok": False, "error": "ratelimited"}
            if authorization.removeprefix("Bearer ") in self.revoked:
                self.calls.append((f"{method}#invalid_auth", params))
                return 200, {}, {"ok": False, "error": "invalid_auth"}
            if wait := self._over_limit(method, params):
                self.calls.append((f"{method}#429", params))
                return 429, {"Retry-After": str(wait)}, {"ok": False, "error": "ratelimited"}
            if method == "apps.connections.open":
                self.calls.append((method, {"authorization": authorization}))
                return 200, {}, {"ok": True, "url": self.socket_url}
            self._ts += 1
            ts = f"{1700000000 + self._ts}.{self._ts:06d}"
            if method == "chat.postMessage" and str(params.get("channel", "")).startswith("#"):
                named = self.channel_names.get(params["channel"].removeprefix("#"))
                if named is None:
                    self.calls.append((f"{method}#channel_not_found", params))
                    return 200, {}, {"ok": False, "error": "channel_not_found"}
                params = {**params, "channel": named}
            if method in ("chat.postMessage", "chat.postEphemeral") and params.get("channel") in self.not_member:
                self.calls.append((f"{method}#not_in_channel", params))
                return 200, {}, {"ok": False, "error": "not_in_channel"}
            if method == "chat.postEphemeral" and (
                not params.get("channel") or not params.get("user") or not (params.get("text") or params.get("blocks"))
            ):
                self.calls.append((f"{method}#invalid_arguments", params))
                return 200, {}, {"ok": False, "error": "invalid_arguments"}
            if method in ("chat.postMessage", "chat.update", "chat.postEphemeral", "chat.stopStream") and (
                error := _refused_blocks(_json(params.get("blocks") or "[]"))
            ):
                self.calls.append((f"{method}#{error}", params))
                return 200, {}, {"ok": False, "error": error}
            if method in STREAM_METHODS:
                error = self._stream(method, params, ts)
                if error:
                    self.calls.append((f"{method}#{error}", params))
                    return 200, {}, {"ok": False, "error": error}
            where = (params.get("channel", ""), params.get("ts", ""))
            if method == "chat.delete" and self.messages.pop(where, None) is None:
                self.calls.append((f"{method}#message_not_found", params))
                return 200, {}, {"ok": False, "error": "message_not_found"}
            if method == "chat.postMessage":
                params = {**params, "ts": ts}
                self.messages[(params["channel"], ts)] = dict(params)
                if (params["channel"], params.get("thread_ts")) in self.statuses:
                    self.statuses[(params["channel"], params["thread_ts"])] = ""
            if method in ASSISTANT_METHODS:
                missing = [a for a in ASSISTANT_METHODS[method] if a not in params]
                prompts = _json(params.get("prompts", "[]"))
                loading = _json(params.get("loading_messages", "[]"))
                if missing or len(prompts) > MAX_PROMPTS or len(loading) > MAX_LOADING_MESSAGES:
                    self.calls.append((f"{method}#invalid_arguments", params))
                    return 200, {}, {"ok": False, "error": "invalid_arguments"}
                if method == "assistant.threads.setStatus":
                    self.statuses[(params["channel_id"], params["thread_ts"])] = params["status"]
            if method == "chat.update":
                stored = self.messages.get((params.get("channel", ""), params.get("ts", "")))
                if stored is not None and stored.get("streaming"):
                    self.calls.append((f"{method}#cant_update_message", params))
                    return 200, {}, {"ok": False, "error": "cant_update_message"}
                if stored is None:
                    self.calls.append((f"{method}#message_not_found", params))
                    return 200, {}, {"ok": False, "error": "message_not_found"}
                stored.update({k: v for k, v in params.items() if k in ("text", "blocks", "metadata")})
            self.calls.append((method, params))
        if self.hold.get(method):
            time.sleep(self.hold[method])  # the call took effect; the answer is late (or never read)
        if method == "auth.test":
            return 200, {}, {"ok": True, "url": "https://acme.slack.com/", "team": "Acme", "user": "threadsage",
                             "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID}  # fmt: skip
        if method == "chat.postMessage":
            message = {
                "type": "message",
                "user": BOT_USER,
                "bot_id": BOT_ID,
                "ts": ts,
                **{k: v for k, v in params.items() if k != "ts"},
            }
            return 200, {}, {"ok": True, "channel": params.get("channel"), "ts": ts, "message": message}
        if method == "chat.startStream":
            return 200, {}, {"ok": True, "channel": params["channel"], "ts": ts}
        if method in ("chat.appendStream", "chat.stopStream", "chat.delete"):
            stopped = self.messages.get((params["channel"], params["ts"]), {}) if method == "chat.stopStream" else {}
            message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, **stopped}
            return 200, {}, {"ok": True, "channel": params["channel"], "ts": params["ts"], "message": message}
        if method in ("chat.update", "chat.postEphemeral"):
            return 200, {}, {"ok": True, "channel": params.get("channel"), "ts": params.get("ts", ts), "message_ts": ts}
        if method == "chat.getPermalink":
            channel, message_ts = params["channel"], params["message_ts"]
            link = f"https://acme.slack.com/archives/{channel}/p{message_ts.replace('.', '')}"
            return 200, {}, {"ok": True, "channel": channel, "permalink": link}
        if method == "views.publish":
            view = {"id": f"V{self._ts}", "team_id": TEAM, **_json(params["view"])}
            return 200, {}, {"ok": True, "view": view}
        if method == "conversations.open":
            return 200, {}, {"ok": True, "channel": {"id": "D" + str(params["users"])[1:]}}
        if method in ("reactions.add", "reactions.remove") or method in ASSISTANT_METHODS:
            return 200, {}, {"ok": True}
        if method == "users.info":
            user: dict[str, Any] = {"id": str(params.get("user", "")), "name": "someone", "is_bot": False}
            if user["id"] in self.names:  # the display name is optional: people who set none show their full name
                real = self.names[user["id"]]
                user |= {"real_name": real, "profile": {"real_name": real, "display_name": ""}}
            if str(params.get("include_locale", "")).lower() in ("true", "1"):  # "only when include_locale is true"
                user["locale"] = self.locales.get(user["id"], "en-US")
            return 200, {}, {"ok": True, "user": user}
        if method == "files.info":
            known = self.files.get(str(params.get("file", "")))
            if known is None:
                return 200, {}, {"ok": False, "error": "file_not_found"}
            return 200, {}, {"ok": True, "file": known[0], "comments": [], "response_metadata": {"next_cursor": ""}}
        if str(params.get("channel", "")) in self.gone and method.startswith("conversations."):
            return 200, {}, {"ok": False, "error": "channel_not_found"}
        if method == "conversations.members":
            members = self.members.get(str(params.get("channel", "")))
            if members is None:
                return 200, {}, {"ok": False, "error": "channel_not_found"}
            return 200, {}, {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
        if method == "conversations.info":
            channel = str(params.get("channel", ""))
            info = {
                "id": channel,
                "is_private": channel in self.private_channels,
                "is_ext_shared": channel in self.shared,
                "is_archived": channel in self.archived,
            }
            names = [name for name, known in self.channel_names.items() if known == channel]
            return 200, {}, {"ok": True, "channel": info | ({"name": names[0]} if names else {})}
        if method in ("conversations.replies", "conversations.history"):
            return self._page(params)
        return 200, {}, {"ok": False, "error": "unknown_method"}

    def _stream(self, method: str, params: dict, ts: str) -> str:
        """A streaming method's effect on the stored message, or the error Slack answers with."""
        chunks = _json(params.get("chunks") or "[]")
        if (refused := _refused_chunks(chunks, params.get("task_display_mode"))) is not None:
            return refused
        texts = [str(params.get("markdown_text") or "")]
        texts += [str(chunk.get("text", "")) for chunk in chunks if chunk.get("type") == "markdown_text"]
        channel = str(params.get("channel") or "")
        if not channel or any(len(text) > STREAM_TEXT_CHARS for text in texts):
            return "invalid_arguments" if not channel else "msg_too_long"
        text = "".join(texts)
        if method == "chat.startStream":
            in_dm = channel.startswith("D")
            if not in_dm and not (params.get("recipient_user_id") and params.get("recipient_team_id")):
                return "invalid_arguments"  # "Required when streaming to channels"
            if in_dm and not params.get("thread_ts"):
                return "invalid_arguments"  # a top-level stream "is only supported in channels"
            thread = params.get("thread_ts")
            stored = {"channel": channel, "ts": ts, "thread_ts": thread, "text": text, "streaming": True}
            self.messages[(channel, ts)] = stored
            self.streams[(channel, ts)] = [text]
            self._keep_tasks(channel, ts, chunks)
            if (channel, params.get("thread_ts")) in self.statuses:
                self.statuses[(channel, params["thread_ts"])] = ""
            return ""
        stored = self.messages.get((channel, str(params.get("ts") or "")))
        if stored is None or not stored.get("streaming"):
            return "message_not_in_streaming_state"
        stored["text"] += text
        self.streams[(channel, stored["ts"])].append(text)
        self._keep_tasks(channel, stored["ts"], chunks)
        if method == "chat.stopStream":
            stored["streaming"] = False
            stored.update({k: _json(params[k]) for k in ("blocks", "metadata") if params.get(k)})
        return ""

    def _keep_tasks(self, channel: str, ts: str, chunks: list[dict]) -> None:
        """Each task of the stream as it shows now (a later task_update of the same id updates it),
        and the plan's title."""
        shown = self.tasks.setdefault((channel, ts), {})
        for chunk in chunks:
            if chunk.get("type") == "task_update":
                shown[chunk["id"]] = {**shown.get(chunk["id"], {}), **chunk}
            elif chunk.get("type") == "plan_update":
                self.plans[(channel, ts)] = chunk["title"]

    def _download(self, path: str, authorization: str) -> tuple[int, dict[str, str], Any]:
        """GET of a file's private URL: the bytes for a valid bearer token, else the sign-in page."""
        file_id = path.split("/")[2].split("-", 1)[-1]
        token = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else ""
        with self._lock:
            self.calls.append(("files.download", {"file": file_id, "authorization": authorization}))
            known = self.files.get(file_id)
        if not token or token in self.revoked:
            return 200, {"Content-Type": "text/html; charset=utf-8"}, "<!DOCTYPE html><title>Slack</title>Sign in"
        if known is None:
            return 404, {"Content-Type": "text/plain"}, "Not Found"
        file, content = known
        disposition = f'attachment; filename="{file["name"]}"'
        return 200, {"Content-Type": file["mimetype"], "Content-Disposition": disposition}, content


MARKDOWN_BLOCKS_CHARS = (
    12_000  # "The cumulative limit for all markdown blocks in a single payload is 12,000 characters"
)


def _refused_blocks(blocks: list[dict]) -> str | None:
    """`invalid_blocks` for markdown blocks Slack refuses (docs.slack.dev/reference/block-kit/blocks/markdown-block):
    one without its text, or texts over 12,000 characters together."""
    texts = [b.get("text") for b in blocks if b.get("type") == "markdown"]
    if any(not isinstance(t, str) or not t for t in texts) or sum(map(len, texts)) > MARKDOWN_BLOCKS_CHARS:
        return "invalid_blocks"
    return None


TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
TASK_TEXT_CHARS = 256  # a task's details and output


def _refused_chunks(chunks: list[dict], display_mode: Any) -> str | None:
    """The error Slack answers a stream's chunks with, None when they are as documented: types
    markdown_text (text), task_update (id, title, status of TASK_STATUSES, sources of type url with url
    and text), plan_update (title), blocks;
    task_display_mode `timeline` or `plan`."""
    if display_mode not in (None, "timeline", "plan"):
        return "invalid_arguments"
    for chunk in chunks:
        kind = chunk.get("type")
        if kind == "task_update":
            texts_ok = all(len(str(chunk.get(k) or "")) <= TASK_TEXT_CHARS for k in ("details", "output"))
            sources_ok = all(
                s.get("type") == "url" and s.get("url") and s.get("text") for s in chunk.get("sources") or []
            )
            if not (
                chunk.get("id")
                and chunk.get("title")
                and chunk.get("status") in TASK_STATUSES
                and texts_ok
                and sources_ok
            ):
                return "invalid_chunks"
        elif (kind == "plan_update" and not chunk.get("title")) or kind not in (
            "markdown_text",
            "task_update",
            "plan_update",
            "blocks",
        ):
            return "invalid_chunks"
    return None


def _replies_of(ts: str, replies: list[tuple[str, str]]) -> dict:
    """What history shows of a message's thread: `reply_count` and `latest_reply`, if it has one."""
    own = [reply for root, reply in replies if root == ts]
    return {"reply_count": len(own), "latest_reply": max(own)} if own else {}


def _json(value: Any) -> Any:
    """A JSON argument as slack_sdk sends it: an object in a JSON body, a string in a form."""
    return json.loads(value) if isinstance(value, str) else value


class FakeSocketMode:
    """A Socket Mode websocket: says hello, sends envelopes, collects the app's acks."""

    def __init__(self) -> None:
        self.acks: list[dict] = []
        self._connections: list[Any] = []
        self._connected = asyncio.Event()
        self._server: Any = None
        self.url = ""

    async def start(self) -> FakeSocketMode:
        import websockets

        async def session(websocket: Any) -> None:
            self._connections.append(websocket)
            self._connected.set()
            await websocket.send(
                json.dumps(
                    {"type": "hello", "num_connections": 1, "debug_info": {}, "connection_info": {"app_id": "A111"}}
                )
            )
            async for message in websocket:
                self.acks.append(json.loads(message))

        self._server = await websockets.serve(session, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/link/?ticket=t&app_id=A111"
        return self

    async def send_event(self, body: bytes, envelope_id: str, retry_attempt: int = 0) -> None:
        async with asyncio.timeout(10):
            await self._connected.wait()
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "",
            "payload": json.loads(body),
        }
        await self._connections[-1].send(json.dumps(envelope))

    async def stop(self) -> None:
        if self._server:
            self._server.close()
            await self._server.wait_closed()
