"""Where a Slack message lives, and so which session it continues.

A thread is a session: a mention in a channel is answered in a thread under it, later messages in
that thread continue it without a mention; a DM is a session, and a thread inside a DM is a
session of its own (under Slack's agent messaging, every top-level DM message starts one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from threadsage.bots.replies import place_categories
from threadsage.memory.sessions import session_key
from threadsage.settings.sections import AccessSettings


@dataclass(frozen=True)
class Place:
    """Where a message was written: enough to answer there and to name its session."""

    team: str
    channel: str
    thread_ts: str  # the thread to answer in ("" for the top level of a DM)
    is_dm: bool
    # A private conversation (`/ask`, the shortcut): what its person asks in this channel, answered
    # to them alone (see `private`); nothing is posted here for it.
    private_for: str = ""

    @property
    def session(self) -> str:
        thread = f"private-{self.private_for}" if self.private_for else self.thread_ts or "-"
        return session_key("slack", self.team, self.channel, thread)

    def categories(self, settings: AccessSettings) -> tuple[str, ...] | None:
        return place_categories(settings, self.channel, self.is_dm)


def place_of_mention(event: dict[str, Any], body: dict[str, Any]) -> Place:
    """A mention is answered in its thread, or in a new thread under it."""
    return Place(body.get("team_id", ""), event["channel"], event.get("thread_ts") or event["ts"], False)


def place_of_message(event: dict[str, Any], body: dict[str, Any], dm_threads: bool = False) -> Place | None:
    """A DM (or a thread in one), or a reply in a channel thread; None for top-level channel
    chatter, where only mentions are for the bot. `dm_threads` (Slack's agent messaging): a
    message at the top of the DM starts a thread of its own, as a mention does in a channel."""
    team = body.get("team_id", "")
    if event.get("channel_type") == "im":
        return Place(team, event["channel"], event.get("thread_ts") or (event["ts"] if dm_threads else ""), True)
    if event.get("thread_ts"):
        return Place(team, event["channel"], event["thread_ts"], False)
    return None


def place_of_click(body: dict[str, Any]) -> Place:
    """The place of the message holding a clicked button: a button on an ephemeral message (only
    the bot's private answers have them) belongs to its person's private conversation."""
    container = body.get("container", {})
    if container.get("is_ephemeral"):
        channel = container.get("channel_id") or body.get("channel", {}).get("id", "")
        team = body.get("team", {}).get("id", "") if isinstance(body.get("team"), dict) else ""
        return Place(team, channel, "", channel.startswith("D"), private_for=body.get("user", {}).get("id", ""))
    return thread_of_click(body)


def thread_of_click(body: dict[str, Any]) -> Place:
    """The conversation (channel thread or DM) the clicked message was shown in, even when only
    the clicker sees it: a curator's offer is an ephemeral message in the answer's thread."""
    container = body.get("container", {})
    message = body.get("message", {})
    channel = container.get("channel_id") or body.get("channel", {}).get("id", "")
    team = body.get("team", {}).get("id", "") if isinstance(body.get("team"), dict) else ""
    thread = container.get("thread_ts") or message.get("thread_ts") or ""
    is_dm = channel.startswith("D")
    if not thread and not is_dm:
        thread = container.get("message_ts") or message.get("ts", "")
    return Place(team, channel, thread, is_dm)
