"""`/ask` and the "Ask threadsage" message shortcut: private first, shared if useful.

- `/ask <question>` (or `/ask -p <question>`, as before): answered to the person alone, in the
  conversation where they typed it (an ephemeral message through the command's `response_url`,
  which works whether the bot is a member there or not); the answer's buttons share it in the
  channel or continue in the person's DM (see `private`, `sharing`). Clarification buttons work
  there too. The person's private questions in a channel are one conversation.
- `/ask new`: the person's DM conversation starts over (as "new" typed in the DM does).
- `/ask` alone: how to use it.
- The shortcut: the message's text is the question, answered privately the same way; shared, the
  answer goes to the message's thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from threadsage.bots.slack.answering import Answering
from threadsage.bots.slack.home import Asked, RecentQuestions
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.private import PrivateAnswers
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import question_text, unescaped
from threadsage.chat import ChatService, Turn
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.i18n import language_of, say
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AskRequest:
    kind: Literal["usage", "new", "private", "public"]
    question: str = ""


def parse_ask(text: str) -> AskRequest:
    text = text.strip()
    first, _, rest = text.partition(" ")
    if not text:
        return AskRequest("usage")
    if text.lower() == "new":
        return AskRequest("new")
    if first in ("-p", "--private"):
        return AskRequest("private", rest.strip()) if rest.strip() else AskRequest("usage")
    return AskRequest("public", text)


class Asking:
    def __init__(
        self,
        settings: AccessSettings,
        chat: ChatService,
        send: SlackSender,
        recent: RecentQuestions,
        answering: Answering,
        answers: PrivateAnswers,
    ) -> None:
        self.answers = answers
        self.settings = settings
        self.chat = chat
        self.send = send
        self.recent = recent
        self.answering = answering

    async def command(self, command: dict[str, Any]) -> None:
        """An /ask (its listener has explained an empty one)."""
        try:
            asked = await self._where(command)
        except ServiceUnavailable:
            raise
        except Exception:  # before any turn (posting the question, opening the DM): said privately
            log.exception("/ask failed")
            apology = say("apology", language_of(parse_ask(unescaped(command.get("text", ""))).question))
            await self.send.respond(command.get("response_url", ""), apology)
            return
        if asked is not None:
            place, turn = asked
            await self.answering.answer(place, turn, respond_to=command.get("response_url", ""))

    async def shortcut(self, body: dict[str, Any]) -> None:
        """ "Ask threadsage" on a message: its text is the question, answered in its thread."""
        message, channel, user = body["message"], body["channel"]["id"], body["user"]["id"]
        team = (body.get("team") or {}).get("id", "")
        response_url = body.get("response_url", "")
        question = question_text(message.get("text"))
        if not question:
            await self.send.respond(response_url, say("slack_no_text"))
            return
        place = Place(team, channel, "", channel.startswith("D"), private_for=user)
        await self.answers.asked(place, unescaped(question), message.get("thread_ts") or message["ts"])
        await self.recent.add(team, user, Asked(unescaped(question), channel, message["ts"]))
        turn = self._turn(place, user, f"shortcut:{body['trigger_id']}", question)
        await self.answering.answer(place, turn, respond_to=response_url)

    async def _where(self, command: dict[str, Any]) -> tuple[Place, Turn] | None:
        """Where an /ask is answered and the turn to answer there; None when it needs no turn."""
        request = parse_ask(unescaped(command.get("text", "")))
        assert request.kind != "usage"  # its listener explained it
        team, channel, user = command.get("team_id", ""), command["channel_id"], command["user_id"]
        if request.kind == "new":
            await self.chat.reset(Place(team, await self._dm(user), "", True).session, "slack")
            await self.send.respond(command.get("response_url", ""), say("new_started"))
            return None
        place = Place(team, channel, "", channel.startswith("D"), private_for=user)
        await self.answers.asked(place, request.question, "")
        return place, self._turn(place, user, f"command:{command['trigger_id']}", request.question)

    async def _dm(self, user: str) -> str:
        response = await self.send.client.conversations_open(users=user)
        return str(response["channel"]["id"])

    def _turn(self, place: Place, user: str, key: str, question: str) -> Turn:
        return Turn("slack", place.session, user, key, text=question, categories=place.categories(self.settings))
