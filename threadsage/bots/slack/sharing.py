"""The buttons under a private answer (see `private`).

- "Share in channel": the answer is posted where it was asked — under a line saying who shared it
  and what they asked (a bot cannot post as a person without that person's token), in a thread
  of its own for `/ask`, in the message's thread for the shortcut — as a normal answer: with its
  sources and feedback buttons, its thread continuing the conversation (the private
  conversation's memory is copied there), its votes counted for the answer.
- "Continue in a DM": the same, in the person's DM with the bot ("You asked in #channel: …", the
  answer in its thread), and the private conversation moves there (its memory is copied, then
  forgotten here).

A click posts once: a second click on the same answer links to the copy already posted; a click
the turn queue redelivers finds what the first try posted (by its metadata) and posts the rest.
A forged or altered button, or one older than the answer is kept, is told so.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from threadsage.bots.slack.places import Place, place_of_click
from threadsage.bots.slack.private import KEPT_FOR, Kept, PrivateAnswers
from threadsage.bots.slack.sending import NOT_HERE, QUESTION_EVENT, SHARED_EVENT, SlackSender
from threadsage.bots.slack.texts import escaped
from threadsage.bots.tokens import Button, ButtonKind, InvalidToken, Signer
from threadsage.chat import ChatService, Turn, turn_ref
from threadsage.delivery.current import redelivered
from threadsage.i18n import say

log = logging.getLogger(__name__)


class Sharing:
    def __init__(self, chat: ChatService, send: SlackSender, signer: Signer, answers: PrivateAnswers) -> None:
        self.chat = chat
        self.send = send
        self.signer = signer
        self.answers = answers

    async def click(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        place, user = place_of_click(body), body["user"]["id"]
        response_url = body.get("response_url", "")
        try:
            button: Button | None = self.signer.verify(action.get("value", ""), place.session)
        except InvalidToken as exc:
            log.warning("rejected a share button in %s: %s", place.channel, exc)
            button = None
        if button is None or button.kind not in (ButtonKind.SHARE, ButtonKind.MOVE) or not place.private_for:
            await self.send.respond(response_url, say("slack_invalid_button"))
            return
        kept = await self.answers.kept(place, button.ref)
        if kept is None:
            await self.send.respond(response_url, say("slack_share_stale"))
            return
        language = kept.reply.language
        key = f"{button.kind.name.lower()}:{place.session}:{button.ref}"
        if not await self.chat.coordinator.claim(f"slack-{key}", KEPT_FOR) and not redelivered():
            link = await self.chat.coordinator.recall(f"slack-link:{key}") or ""
            await self.send.respond(response_url, say("slack_already_shared", language, link=link))
            return
        try:
            if button.kind is ButtonKind.SHARE:
                top = Place(place.team, place.channel, kept.thread, place.is_dm)
                lead = say("slack_shared_by", language, user=user, question=escaped(kept.question))
                target, link = await self._post(place, top, lead, SHARED_EVENT, key, kept, user)
                done = say("slack_shared", language, channel=place.channel, link=link)
            else:
                dm = str((await self.send.client.conversations_open(users=user))["channel"]["id"])
                lead = say("slack_asked_privately", language, channel=place.channel, question=escaped(kept.question))
                top = Place(place.team, dm, "", True)
                target, link = await self._post(place, top, lead, QUESTION_EVENT, key, kept, user)
                await self.chat.reset(place.session, "slack")  # moved: the DM's thread goes on from here
                done = say("slack_moved", language, link=link)
        except SlackApiError as exc:
            if exc.response.get("error") not in NOT_HERE:
                raise
            await self.send.respond(response_url, say("slack_not_a_member", language))
            return
        await self.chat.coordinator.remember(f"slack-link:{key}", link, KEPT_FOR)
        await self.send.respond(response_url, done)
        log.info("a private answer went to %s (%s)", target.channel, button.kind.name.lower())

    async def _post(
        self, private: Place, top: Place, lead: str, event_type: str, key: str, kept: Kept, user: str
    ) -> tuple[Place, str]:
        """The lead line at `top`, the answer in its thread (or in `top`'s thread, when it is one),
        the private conversation's memory there; the place of the copy and a link to it."""
        found = await self.send.find(top, event_type, key)
        ts = found[0]["ts"] if found else await self.send.post_marked(top, lead, event_type, key)
        target = Place(top.team, top.channel, top.thread_ts or ts, top.is_dm)
        await self.chat.copy_session(private.session, target.session)
        # Votes on the copy count for the answer's turn, recorded under the private conversation.
        await self.chat.coordinator.remember(_votes_key(target, turn_ref(kept.turn)), private.session, KEPT_FOR)
        turn = Turn("slack", target.session, user, kept.turn, text=kept.question)
        await self.send.post(target, kept.reply, turn)
        return target, await self.send.permalink(top.channel, ts) or ""

    async def session_of_votes(self, place: Place, ref: str) -> str:
        """The session a vote on the answer `ref` in `place` is recorded for: the private
        conversation of a shared copy, else the place's own."""
        return await self.chat.coordinator.recall(_votes_key(place, ref)) or place.session


def _votes_key(place: Place, ref: str) -> str:
    return f"slack-shared-votes:{place.session}:{ref}"
