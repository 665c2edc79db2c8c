"""`/ask` and the "Ask threadsage" message shortcut: where their question is asked and answered.

- `/ask <question>`: the bot posts "<@user> asked: …" in the conversation and answers in that
  message's thread, which then goes on like a mention's (follow-ups without a mention,
  clarification buttons). Where the bot is no member (or in a DM between people) it answers in
  the person's DM instead, and says so.
- `/ask -p <question>`: answered privately in the person's DM with the bot — "You asked in
  #channel: …", the answer in its thread — rather than in an ephemeral message, which can hold no
  thread: follow-ups and clarification buttons work there as anywhere. It reads what a DM reads.
- `/ask new`: the person's DM conversation starts over (as "new" typed in the DM does).
- `/ask` alone: how to use it.
- The shortcut: the message's text is the question, answered in the message's thread.

A redelivered job finds the question it already posted (by its metadata) instead of posting it again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from slack_sdk.errors import SlackApiError

from threadsage.bots.slack.answering import Answering
from threadsage.bots.slack.home import Asked, RecentQuestions
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import NOT_HERE, QUESTION_EVENT, SlackSender
from threadsage.bots.slack.texts import escaped, question_text, unescaped
from threadsage.chat import ChatService, Turn
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.i18n import language_of, say
from threadsage.settings.environment import Settings

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
        self, settings: Settings, chat: ChatService, send: SlackSender, recent: RecentQuestions, answering: Answering
    ) -> None:
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
            await self.answering.answer(*asked)

    async def shortcut(self, body: dict[str, Any]) -> None:
        """ "Ask threadsage" on a message: its text is the question, answered in its thread."""
        message, channel, user = body["message"], body["channel"]["id"], body["user"]["id"]
        team = (body.get("team") or {}).get("id", "")
        response_url = body.get("response_url", "")
        question = question_text(message.get("text"))
        if not question:
            await self.send.respond(response_url, say("slack_no_text"))
            return
        place = Place(team, channel, message.get("thread_ts") or message["ts"], channel.startswith("D"))
        await self.recent.add(team, user, Asked(unescaped(question), channel, message["ts"]))
        turn = self._turn(place, user, f"shortcut:{body['trigger_id']}", question)
        not_a_member = say("slack_not_a_member", language_of(question))
        await self.answering.answer(place, turn, unreachable=lambda: self.send.respond(response_url, not_a_member))

    async def _where(self, command: dict[str, Any]) -> tuple[Place, Turn] | None:
        """Where an /ask is answered and the turn to answer there; None when it needs no turn."""
        request = parse_ask(unescaped(command.get("text", "")))
        assert request.kind != "usage"  # its listener explained it
        team, channel, user = command.get("team_id", ""), command["channel_id"], command["user_id"]
        response_url = command.get("response_url", "")
        if request.kind == "new":
            await self.chat.reset(Place(team, await self._dm(user), "", True).session, "slack")
            await self.send.respond(response_url, say("new_started"))
            return None
        key, language = f"command:{command['trigger_id']}", language_of(request.question)
        place = None
        if request.kind == "public":
            text = say("slack_asked", language, user=user, question=escaped(request.question))
            try:
                place = await self._thread(Place(team, channel, "", channel.startswith("D")), text, key)
            except SlackApiError as exc:
                if exc.response.get("error") not in NOT_HERE:
                    raise
                await self.send.respond(response_url, say("slack_not_a_member_ask", language))
        if place is None:  # privately, or where the bot may not post
            text = say("slack_asked_privately", language, channel=channel, question=escaped(request.question))
            place = await self._thread(Place(team, await self._dm(user), "", True), text, key)
        await self.recent.add(team, user, Asked(request.question, place.channel, place.thread_ts))
        return place, self._turn(place, user, key, request.question)

    async def _thread(self, top: Place, text: str, key: str) -> Place:
        """The thread under the question posted at the top of `top` (posted once per job)."""
        found = await self.send.find(top, QUESTION_EVENT, key)
        ts = found[0]["ts"] if found else await self.send.post_marked(top, text, QUESTION_EVENT, key)
        return Place(top.team, top.channel, ts, top.is_dm)

    async def _dm(self, user: str) -> str:
        response = await self.send.client.conversations_open(users=user)
        return str(response["channel"]["id"])

    def _turn(self, place: Place, user: str, key: str, question: str) -> Turn:
        return Turn("slack", place.session, user, key, text=question, categories=place.categories(self.settings))
