"""Curators on Slack (`THREADSAGE_CURATORS`): after an answer to a curator, an ephemeral message
— which only they see, wherever the answer is — offers "Save as verified answer", a button whose
value is signed for the thread and the answer. A click saves the answer as the verified answer
(`ChatService.save_verified`), by the person's Slack name; a click by anyone not listed (a forged
one: no one else is shown the button), a forged or altered value, or an answer whose document
changed since is refused, privately, saying why."""

from __future__ import annotations

import logging
from typing import Any

from threadsage.bots.replies import verifiable
from threadsage.bots.slack.places import Place, thread_of_click
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.tokens import Button, ButtonKind, Signer, clicked, session_digest
from threadsage.chat import ChatService, Reply, Turn, turn_ref
from threadsage.i18n import DEFAULT, say
from threadsage.settings.knowledge_loop import KnowledgeLoopSettings

log = logging.getLogger(__name__)

ACTION = "verify"


class Curation:
    def __init__(self, settings: KnowledgeLoopSettings, chat: ChatService, send: SlackSender, signer: Signer) -> None:
        self.settings = settings
        self.chat = chat
        self.send = send
        self.signer = signer

    async def offer(self, place: Place, turn: Turn, reply: Reply) -> None:
        """The button, to a curator, after an answer of their own turn."""
        if not verifiable(reply) or not self.settings.is_curator("slack", turn.user_id):
            return
        button = Button(ButtonKind.VERIFY, session_digest(place.session), turn_ref(turn.message_id), 1)
        label = say("verify_button", reply.language)
        blocks: list[dict[str, Any]] = [
            {"type": "section", "text": {"type": "mrkdwn", "text": say("verify_offer", reply.language)}},
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": ACTION,
                        "text": {"type": "plain_text", "text": label},
                        "value": self.signer.sign(button),
                        "style": "primary",
                    }
                ],
            },
        ]
        await self.send.ephemeral(place, turn.user_id, say("verify_offer", reply.language), blocks)

    async def save(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        place, user = thread_of_click(body), body["user"]
        language = DEFAULT  # an ephemeral message's click carries no text to read the language from
        button = clicked(self.signer, action.get("value"), place.session, ButtonKind.VERIFY)
        if button is None:
            await self.send.ephemeral(place, user["id"], say("slack_invalid_button", language))
            return
        if not self.settings.is_curator("slack", user["id"]):
            log.warning("slack user %s is not a curator: verified answer refused", user["id"])
            await self.send.ephemeral(place, user["id"], say("verify_not_curator", language))
            return
        by = str(user.get("name") or user.get("username") or user["id"])
        outcome = await self.chat.knowledge.save_verified(place.session, button.ref, by)
        await self.send.ephemeral(place, user["id"], say(f"verify_{outcome}", language, who=by))
