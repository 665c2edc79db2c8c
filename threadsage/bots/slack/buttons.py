"""Button clicks: a clarification option answers its question through the chat service, a 👍/👎
is recorded; a button whose signed value is forged, altered or from elsewhere is refused.

What the bot says about a click is in the language of the message the button belongs to (its
fallback text: the clarification's prompt or the answer, both in the question's language). A
click has no text of its own; a message with none to read (never one the bot posted) gets English.
"""

from __future__ import annotations

import logging
from typing import Any

from threadsage.bots.slack.answering import Answering
from threadsage.bots.slack.assistant import Panel
from threadsage.bots.slack.places import Place, place_of_click
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.sharing import Sharing
from threadsage.bots.tokens import Button, ButtonKind, InvalidToken, Signer
from threadsage.chat import ChatService, ClarificationAnswer, Turn
from threadsage.i18n import Language, language_of, say
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)


def click_language(body: dict[str, Any]) -> Language:
    """The language of the message holding the clicked button."""
    return language_of(body.get("message", {}).get("text"))


class Buttons:
    def __init__(
        self,
        settings: AccessSettings,
        chat: ChatService,
        send: SlackSender,
        signer: Signer,
        answering: Answering,
        panel: Panel,
        sharing: Sharing,
    ) -> None:
        self.sharing = sharing  # a vote on a shared answer counts for the private one
        self.settings = settings
        self.panel = panel  # a click in an assistant thread reads what the thread reads
        self.chat = chat
        self.send = send
        self.signer = signer
        self.answering = answering

    async def answer(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A clarification option: the choice is shown once accepted, then the answer follows."""
        pressed = await self._pressed(body, action, ButtonKind.CLARIFY)
        if pressed is None:
            return
        place, user, button = pressed
        message_id = f"action:{body.get('container', {}).get('message_ts')}:{action.get('action_ts')}"
        answer = ClarificationAnswer(button.ref, button.value)
        categories, language = await self.panel.categories(place), click_language(body)
        turn = Turn("slack", place.session, user, message_id, answer=answer, categories=categories, language=language)

        async def show_choice() -> None:
            await self.send.show_choice(body, action.get("text", {}).get("text", ""), user)

        async def replace_choice() -> None:  # a private clarification: its ephemeral message
            chose = say("slack_chose", language, user=user, label=action.get("text", {}).get("text", ""))
            await self.send.respond(body.get("response_url", ""), chose, replace=True)

        if place.private_for:
            response_url = body.get("response_url", "")
            await self.answering.answer(place, turn, on_accepted=replace_choice, respond_to=response_url)
            return
        in_panel = await self.panel.of(place) is not None
        await self.answering.answer(place, turn, on_accepted=show_choice, notices_to=user, in_panel=in_panel)

    async def vote(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A 👍 or 👎 under an answer, thanked privately."""
        pressed = await self._pressed(body, action, ButtonKind.FEEDBACK)
        if pressed is None:
            return
        place, user, button = pressed
        session = await self.sharing.session_of_votes(place, button.ref)
        await self.chat.record_feedback(session, button.ref, user, 1 if button.value else -1)
        thanks = "slack_thanks_up" if button.value else "slack_thanks_down"
        await self._tell(body, place, user, say(thanks, click_language(body)))
        if not button.value:
            await self._again_if_stale(place, user, button.ref, click_language(body))

    async def _again_if_stale(self, place: Place, user: str, ref: str, language: Language) -> None:
        """A 👎 on an answer whose document changed since: its question asked again in the
        thread, answered from the new version (once, however many 👎)."""
        question = await self.chat.knowledge.stale_question(place.session, ref)
        if question is None:
            return
        categories = await self.panel.categories(place)
        turn = Turn("slack", place.session, user, f"again-{ref}", question, categories=categories, language=language)
        await self.answering.answer(place, turn, in_panel=await self.panel.of(place) is not None)

    async def _pressed(
        self, body: dict[str, Any], action: dict[str, Any], kind: ButtonKind
    ) -> tuple[Place, str, Button] | None:
        """Where a button was pressed, by whom, and what its verified value names — or None,
        after telling the person, when the value is forged, altered or from elsewhere."""
        place, user = place_of_click(body), body["user"]["id"]
        try:
            button = self.signer.verify(action.get("value", ""), place.session)
        except InvalidToken as exc:
            log.warning("rejected a button in %s: %s", place.channel, exc)
            button = None
        if button is None or button.kind is not kind:
            await self._tell(body, place, user, say("slack_invalid_button", click_language(body)))
            return None
        return place, user, button

    async def _tell(self, body: dict[str, Any], place: Place, user: str, text: str) -> None:
        """A word to the person who clicked: through the click's response_url on a private
        answer (the bot may not be a member there), else an ephemeral message."""
        if place.private_for:
            await self.send.respond(body.get("response_url", ""), text)
        else:
            await self.send.ephemeral(place, user, text)
