"""Private answers: `/ask` and the "Ask threadsage" shortcut answer only the person who asked.

Such a turn belongs to the person's private conversation in that channel (`Place.private_for`):
its replies go to the `response_url` Slack gave with the command, shortcut or click (an ephemeral
message, which Slack shows to that person alone, wherever the bot is a member or not). An answer
carries two buttons, "Share in channel" and "Continue in a DM" (see `sharing`), so the answer it
shows is kept (the coordinator, a day) for them to post. A response_url takes five messages in
half an hour, so no steps and no drafts are shown on the way; a redelivered turn sends none of its
replies twice.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from threadsage.bots.slack.blocks import reply_messages
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.tokens import Button, ButtonKind, Signer, session_digest
from threadsage.chat import Citation, Draft, Progress, Reply, ReplyKind, Turn, turn_ref
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import Language, say
from threadsage.support.handoff import Contact

log = logging.getLogger(__name__)

KEPT_FOR = 24 * 3600.0  # seconds a private answer can be shared or moved
SHARE_ACTION = "private:share"
MOVE_ACTION = "private:move"


@dataclass(frozen=True)
class Kept:
    """A private answer as its buttons post it: the question, where it was asked, the reply."""

    question: str
    thread: str  # the thread a share goes to ("" the channel itself: a thread is started under it)
    turn: str  # the turn's message id: its votes and console record
    reply: Reply


class PrivateAnswers:
    """Where a private conversation's question was asked, and its answers, for `sharing`."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator

    async def asked(self, place: Place, question: str, thread: str) -> None:
        """A private question (a click's answer is shared as the answer to it)."""
        await self.coordinator.remember(_asked_key(place), json.dumps([question, thread]), KEPT_FOR)

    async def keep(self, place: Place, turn: Turn, reply: Reply) -> None:
        question, thread = json.loads(await self.coordinator.recall(_asked_key(place)) or '["", ""]')
        kept = {"question": question, "thread": thread, "turn": turn.message_id, "reply": _reply_json(reply)}
        await self.coordinator.remember(_kept_key(place, turn_ref(turn.message_id)), json.dumps(kept), KEPT_FOR)

    async def kept(self, place: Place, ref: str) -> Kept | None:
        raw = await self.coordinator.recall(_kept_key(place, ref))
        if raw is None:
            return None
        kept = json.loads(raw)
        return Kept(kept["question"], kept["thread"], kept["turn"], _reply_of(kept["reply"]))


class Private:
    """The `Shown` of a private turn (see `status.Shown`): its replies through a response_url."""

    ts: str | None = None  # nothing it shows is a message the bot can edit

    def __init__(
        self, send: SlackSender, answers: PrivateAnswers, place: Place, response_url: str, signer: Signer
    ) -> None:
        self.send = send
        self.answers = answers
        self.place = place
        self.response_url = response_url
        self.signer = signer
        self._sent = 0  # replies of this turn sent so far

    async def find(self) -> None:
        """Nothing to take over: an ephemeral message cannot be read back."""

    async def show(self, progress: Progress) -> None:
        """Not shown: a response_url takes five messages."""

    async def draft(self, draft: Draft) -> None:
        """Not shown, as steps are not."""

    async def deliver(self, reply: Reply, turn: Turn) -> None:
        number, self._sent = self._sent, self._sent + 1
        # Recorded before it is sent (an ephemeral message cannot be read back): a turn redelivered
        # after its worker died never sends it twice (a claim would be the same delivery's own).
        sent = f"slack-private-sent:{turn.message_id}:{number}"
        if await self.answers.coordinator.recall(sent) is not None:
            log.info("reply %d of %s was already sent privately", number, turn.message_id)
            return
        await self.answers.coordinator.remember(sent, "1", KEPT_FOR)
        extra: list[dict[str, Any]] = []
        if reply.kind is ReplyKind.ANSWER:
            await self.answers.keep(self.place, turn, reply)
            extra = [self.buttons(turn, reply.language)]
        for blocks, fallback in reply_messages(reply, self.place, turn, self.signer):
            await self.send.respond(self.response_url, fallback, blocks + extra)

    def buttons(self, turn: Turn, language: Language) -> dict[str, Any]:
        """ "Share in channel" and "Continue in a DM", signed for this private conversation."""
        ref, digest = turn_ref(turn.message_id), session_digest(self.place.session)

        def button(action: str, label: str, kind: ButtonKind) -> dict[str, Any]:
            value = self.signer.sign(Button(kind, digest, ref, 0))
            text = {"type": "plain_text", "text": say(label, language)}
            return {"type": "button", "action_id": action, "text": text, "value": value}

        elements = [
            button(SHARE_ACTION, "slack_share", ButtonKind.SHARE) | {"style": "primary"},
            button(MOVE_ACTION, "slack_continue_dm", ButtonKind.MOVE),
        ]
        return {"type": "actions", "block_id": f"private-{ref}", "elements": elements}

    async def apologise(self, text: str) -> None:
        await self.send.respond(self.response_url, text)

    def stop(self) -> None:
        """Nothing runs between steps."""

    async def end(self) -> None:
        """Nothing to clear."""


def _asked_key(place: Place) -> str:
    return f"slack-private-asked:{place.session}"


def _kept_key(place: Place, ref: str) -> str:
    return f"slack-private-answer:{place.session}:{ref}"


def _reply_json(reply: Reply) -> dict[str, Any]:
    handoff = reply.handoff
    return {
        "text": reply.text,
        "citations": list(reply.citations),
        "low_confidence": reply.low_confidence,
        "language": reply.language,
        "handoff": None if handoff is None else [handoff.sigil, handoff.name, handoff.slack_id],
    }


def _reply_of(kept: dict[str, Any]) -> Reply:
    citations: tuple[Citation, ...] = tuple(kept["citations"])
    handoff = None if kept["handoff"] is None else Contact(*kept["handoff"])
    return Reply(
        ReplyKind.ANSWER,
        kept["text"],
        citations=citations,
        low_confidence=kept["low_confidence"],
        language=kept["language"],
        handoff=handoff,
    )
