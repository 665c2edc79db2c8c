"""Resolved threads kept current from Slack's events, and the bot's "Resolved" button
(docs/help-channels.md, "Resolved threads").

The Slack source (`ingestion.connectors.slack`) lists its channels' history on its schedule; in
between, the bot marks each thread it sees change — a ✅ added or taken away, a message edited or
deleted, the "Resolved" button pressed — and each channel deleted, archived or left, and the source
reads just those within seconds. The marks are kept in the coordinator (Redis, with several
processes), so the process that syncs need not be the one Slack sends its events to.

"Resolved" sits under the answers in help channels. The person who asked, or an expert (a member of
the experts' channel of the place's category), may press it; the bot then records the press in the
thread as a message of its own carrying `RESOLVED_EVENT` metadata — who pressed it, which answer —
which is what the source reads: a record that stays with the thread, across restarts, and that no
other app can forge (the source takes the bot's own messages only).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from threadsage.bots.slack.blocks import RESOLVE_ACTION
from threadsage.bots.slack.jobs import ResolveClickJob, ThreadChangedJob, on_click
from threadsage.bots.slack.membership import Membership
from threadsage.bots.slack.places import Place, thread_of_click
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.tokens import ButtonKind, Signer, clicked
from threadsage.chat import ChatService
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.jobs import Job
from threadsage.i18n import DEFAULT, language_of, say
from threadsage.ingestion.connectors.slack import RESOLVED, RESOLVED_EVENT, WHOLE_CHANNEL, threads_key
from threadsage.settings.help_channels import HelpSettings, platform_of
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)

__all__ = ["RESOLVE_ACTION", "Resolving", "changed_thread", "register", "seen"]

MARKS_KEPT = 7 * 24 * 3600.0  # a mark no source takes (its channel is no source) is forgotten after this
PRESS_KEPT = 30 * 24 * 3600.0
CHANNEL_GONE = frozenset(
    {"channel_deleted", "channel_archive", "channel_left", "group_deleted", "group_archive", "group_left"}
)
THREAD_EVENTS = frozenset({"reaction_added", "reaction_removed", *CHANNEL_GONE})


def changed_thread(event: dict[str, Any]) -> tuple[str, str] | None:
    """The (channel, thread or message ts) an event changes for a Slack source: a ✅ on a message,
    a threaded message edited or deleted; (channel, `WHOLE_CHANNEL`) for a channel gone."""
    kind, subtype = event.get("type"), event.get("subtype")
    if kind in ("reaction_added", "reaction_removed"):
        item = event.get("item") or {}
        if event.get("reaction") in RESOLVED and item.get("type") == "message" and item.get("channel"):
            return str(item["channel"]), str(item.get("ts", ""))
        return None
    if kind in CHANNEL_GONE:
        channel = event.get("channel")
        return (str(channel.get("id") if isinstance(channel, dict) else channel), WHOLE_CHANNEL) if channel else None
    if kind == "message" and subtype in ("message_changed", "message_deleted"):
        message = event.get("message") if subtype == "message_changed" else event.get("previous_message")
        message = message or {}
        thread = message.get("thread_ts") or (message.get("ts") if message.get("reply_count") else None)
        return (str(event.get("channel", "")), str(thread)) if thread and event.get("channel") else None
    return None


def register(app: AsyncApp, dispatch: Callable[[Job], Awaitable[object]]) -> None:
    """The events that change resolved threads (a ✅, a channel gone: the message events come through
    the app's `message` listener, `seen`) and the "Resolved" button, as jobs."""

    async def on_event(event: dict[str, Any]) -> None:
        await seen(event, dispatch)

    for kind in sorted(THREAD_EVENTS):
        app.event(kind)(on_event)

    app.action(RESOLVE_ACTION)(on_click(ResolveClickJob, dispatch))


async def seen(event: dict[str, Any], dispatch: Callable[[Job], Awaitable[object]]) -> None:
    """An event that changes a thread a Slack source may hold, handed on to be marked."""
    changed = changed_thread(event)
    if changed is not None and changed[1]:
        channel, ts = changed
        await dispatch(ThreadChangedJob(channel=channel, ts=ts).job(f"slack-thread:{channel}:{ts}"))


class Resolving:
    def __init__(
        self,
        settings: HelpSettings,
        access: AccessSettings,
        chat: ChatService,
        send: SlackSender,
        signer: Signer,
        coordinator: Coordinator,
    ) -> None:
        self.settings = settings
        self.access = access
        self.send = send
        self.signer = signer
        self.coordinator = coordinator
        self.membership = Membership(chat, send, coordinator, frozenset)  # who the experts are

    async def mark(self, job: ThreadChangedJob) -> None:
        """Mark the thread an event changed, for the Slack source to read again."""
        await self.coordinator.mark(threads_key(job.channel), job.ts, MARKS_KEPT)

    async def click(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """ "Resolved" under an answer: recorded in the thread, once, if the clicker asked the
        question or is an expert."""
        place, user = thread_of_click(body), body.get("user", {}).get("id", "")
        answer_ts = str(body.get("message", {}).get("ts", "") or body.get("container", {}).get("message_ts", ""))
        if clicked(self.signer, action.get("value"), place.session, ButtonKind.RESOLVE) is None or not answer_ts:
            await self.send.ephemeral(place, user, say("slack_invalid_button", DEFAULT))
            return
        root = await self.send.first_of_thread(place.channel, place.thread_ts)
        language = language_of(str((root or {}).get("text", "")))
        if root is None or not (user == root.get("user") or await self._expert(place, user)):
            await self.send.ephemeral(place, user, say("resolve_not_yours", language))
            return
        pressed = f"slack-resolved:{place.channel}:{place.thread_ts}"
        if await self.coordinator.recall(pressed) is not None:  # two presses at once: two records, the newest counts
            await self.send.ephemeral(place, user, say("resolved_already", language))
            return
        try:
            await self.send.client.chat_postMessage(
                channel=place.channel,
                thread_ts=place.thread_ts,
                text=say("resolved_by", language, who=f"<@{user}>"),
                metadata={"event_type": RESOLVED_EVENT, "event_payload": {"by": user, "answer_ts": answer_ts}},
            )
        except SlackApiError as exc:
            log.warning("a resolved thread could not be recorded: %s", exc.response.get("error"))
            await self.send.ephemeral(place, user, say("slack_invalid_button", language))
            return
        await self.coordinator.remember(pressed, user, PRESS_KEPT)
        await self.coordinator.mark(threads_key(place.channel), place.thread_ts, MARKS_KEPT)

    async def _expert(self, place: Place, user: str) -> bool:
        """A member of the experts' channel of the place's category, when that is a Slack channel."""
        experts = self.settings.experts_of_place(place.categories(self.access))
        if experts is None or platform_of(experts) != "slack":
            return False  # experts in a Telegram group, or none: no member of a Slack channel is one
        return user in await self.membership.members(experts)
