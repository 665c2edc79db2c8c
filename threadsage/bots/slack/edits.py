"""Questions being answered, and the edits people make to them meanwhile.

An edit (`message_changed`) of a question before its answer was given is answered instead of the
original: the job answering the question looks for the newest edit before its turn and again
after it, and runs an edited text as a turn of its own — one placeholder, one answer (the last).
After the answer was given, an edit is ignored: the thread has moved on from it. The facts live in
the coordinator, so an edit received by one process reaches the job running in another.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any

from threadsage.bots.slack.jobs import EditJob
from threadsage.bots.slack.places import place_of_message
from threadsage.bots.slack.texts import question_text
from threadsage.chat import Turn
from threadsage.delivery.coordination import Coordinator

log = logging.getLogger(__name__)

TTL = 24 * 3600.0
MAX_EDITS = 3  # edited texts answered in one job, beyond the first: a bound, not a limit people meet


@dataclass(frozen=True)
class Question:
    """A person's message (channel, ts) that the bot takes as a question."""

    coordinator: Coordinator
    channel: str
    ts: str

    @property
    def _key(self) -> str:
        return f"slack-question:{self.channel}:{self.ts}"

    async def answered(self) -> None:
        await self.coordinator.remember(f"{self._key}:state", "answered", TTL)

    async def record(self, edit: EditJob) -> None:
        """Keep the newest edited text (see `edit_of`) for the job answering the question, which
        may not have started yet; an edit after the answer was given is ignored."""
        if await self.coordinator.recall(f"{self._key}:state") == "answered":
            log.info("an edit after the answer was given is ignored")
            return
        known = await self.coordinator.recall(f"{self._key}:edit")
        if known is None or float(json.loads(known)["edited_ts"]) < float(edit.edited_ts):
            newest = json.dumps({"text": edit.text, "edited_ts": edit.edited_ts})
            await self.coordinator.remember(f"{self._key}:edit", newest, TTL)

    async def latest(self, turn: Turn) -> Turn:
        """The turn asking the newest edited text: `turn` itself when it already does (or there
        was no edit), else a turn of its own (its id names the edit, so a redelivered job runs
        the same turn again rather than a new one)."""
        known = await self.coordinator.recall(f"{self._key}:edit")
        if known is None:
            return turn
        edit = json.loads(known)
        message_id = f"{self.channel}:{self.ts}:edited:{edit['edited_ts']}"
        return turn if message_id == turn.message_id else replace(turn, text=edit["text"], message_id=message_id)


def edit_of(event: dict[str, Any], body: dict[str, Any], bot_user: str | None) -> EditJob | None:
    """What a `message_changed` event says of an edit that may change a question: one of a person's
    message in a DM or a thread, or of one mentioning the bot. None for the rest (the bot's own
    placeholders and answers being updated among them)."""
    edited = event.get("message") or {}
    if edited.get("bot_id") or edited.get("user") in (None, bot_user) or "ts" not in edited:
        return None
    where = {**edited, "channel": event["channel"], "channel_type": event.get("channel_type")}
    if place_of_message(where, body) is None and f"<@{bot_user}>" not in edited.get("text", ""):
        return None
    edited_ts = (edited.get("edited") or {}).get("ts") or event["ts"]
    text = question_text(edited.get("text"))
    return EditJob(channel=event["channel"], ts=edited["ts"], text=text, edited_ts=edited_ts)
