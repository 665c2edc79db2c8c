"""A draft help channel's answers, reviewed by the experts before anyone else sees them (Slack).

In a `draft` help channel the bot's answer is not posted: it goes to the experts' channel as a
draft under the question, with "Post as is" and "Discard". Posted, it arrives in the asker's thread
as any answer does (sources, votes), and the draft says who posted it; discarded, the draft says
so and the thread waits for an expert's own reply (`help.relay`), which is how an expert edits a
draft: they write their version in the thread. Only one answer goes back: a posted draft and an
expert's reply claim the same key (`escalations.relay_key`).

The buttons are signed for the question's thread; the draft (the answer's text and sources) is
kept by the coordinator until a decision, for `chat.escalations.ESCALATION_KEPT`.
"""

from __future__ import annotations

import json
from typing import Any

from threadsage.bots.slack.blocks import context
from threadsage.bots.slack.escalations import Asked, escalated_here, relay_key
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.tokens import Button, ButtonKind, Signer, clicked, session_digest
from threadsage.chat import ChatService, Reply, ReplyKind, Turn, turn_ref
from threadsage.chat.escalations import ESCALATION_KEPT
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import DEFAULT, Language, say

POST_ACTION = "draft_post"
DISCARD_ACTION = "draft_discard"
REVIEW_ACTIONS = frozenset({POST_ACTION, DISCARD_ACTION})


class Reviewing:
    def __init__(self, chat: ChatService, send: SlackSender, signer: Signer, coordinator: Coordinator) -> None:
        self.chat = chat
        self.send = send
        self.signer = signer
        self.coordinator = coordinator

    async def buttons(self, team: str, asked: Asked, draft: Reply) -> dict[str, Any]:
        """The draft kept, and its two buttons (signed for the question's thread)."""
        kept = {"text": draft.text, "citations": list(draft.citations), "language": draft.language}
        await self.coordinator.remember(_draft_key(asked), json.dumps(kept), ESCALATION_KEPT)
        session = session_digest(_asked_place(team, asked).session)

        def button(action: str, label: str, value: int, style: str | None) -> dict[str, Any]:
            token = self.signer.sign(Button(ButtonKind.DRAFT, session, turn_ref(_message_id(asked)), value))
            shown = {"type": "button", "action_id": action, "text": {"type": "plain_text", "text": label}}
            return shown | {"value": token} | ({"style": style} if style else {})

        language = draft.language
        return {
            "type": "actions",
            "elements": [
                button(POST_ACTION, say("draft_post", language), 1, "primary"),
                button(DISCARD_ACTION, say("draft_discard", language), 0, None),
            ],
        }

    async def decide(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """An expert's click on a draft: post it to the asker, or discard it."""
        container, user = body.get("container", {}), body.get("user", {}).get("id", "")
        channel, ts = container.get("channel_id", ""), container.get("message_ts", "")
        here = Place(_team(body), channel, ts, False)
        root = await self.send.first_of_thread(channel, ts) if channel and ts else None
        asked = escalated_here((root or {}).get("metadata") or {})
        button = self._button(action, asked, here.team) if asked is not None else None
        kept = await self.coordinator.recall(_draft_key(asked)) if asked is not None else None
        if asked is None or button is None or kept is None:
            await self.send.ephemeral(here, user, say("slack_invalid_button", DEFAULT))
            return
        draft = json.loads(kept)
        language: Language = draft["language"]
        if button.value == 0:
            await self._mark(body, channel, ts, say("draft_discarded", language, expert=f"<@{user}>"))
            return
        if not await self.coordinator.claim(relay_key(channel, ts), ESCALATION_KEPT):
            await self.send.ephemeral(here, user, say("draft_answered_already", language))
            return
        reply = Reply(ReplyKind.ANSWER, draft["text"], tuple(draft["citations"]), language=language)
        place = _asked_place(here.team, asked)
        turn = Turn("slack", place.session, asked.user, _message_id(asked), asked.text, language=language)
        await self.send.post(place, reply, turn)
        await self.chat.knowledge.expert_replied(f"slack:{asked.channel}:{asked.ts}", user)
        await self._mark(body, channel, ts, say("draft_posted", language, expert=f"<@{user}>"))

    def _button(self, action: dict[str, Any], asked: Asked, team: str) -> Button | None:
        return clicked(self.signer, action.get("value"), _asked_place(team, asked).session, ButtonKind.DRAFT)

    async def _mark(self, body: dict[str, Any], channel: str, ts: str, outcome: str) -> None:
        """The draft's message without its buttons, saying what became of it."""
        message = body.get("message", {})
        blocks = [b for b in message.get("blocks", []) if b.get("type") != "actions"] + [context(outcome)]
        await self.send.client.chat_update(channel=channel, ts=ts, text=message.get("text") or outcome, blocks=blocks)


def _asked_place(team: str, asked: Asked) -> Place:
    return Place(team, asked.channel, asked.ts, False)


def _message_id(asked: Asked) -> str:
    return f"{asked.channel}:{asked.ts}"


def _draft_key(asked: Asked | None) -> str:
    assert asked is not None
    return f"slack-draft:{asked.channel}:{asked.ts}"


def _team(body: dict[str, Any]) -> str:
    team = body.get("team")
    return str(team.get("id", "")) if isinstance(team, dict) else ""
