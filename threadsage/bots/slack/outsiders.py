"""People of another organisation stop here, once for every kind of delivery: one bolt middleware
before any listener (see `access` for who is external and what they are told).

What each kind of delivery gets when its person is external: a mention, or a message in a DM, an
ephemeral notice where it was written; a button or the message shortcut, its acknowledgement and
then the notice; `/ask`, the notice as its acknowledgement (to them alone); anything else (their
messages in a thread, their edits, the panel's and App Home's events) nothing. With
`THREADSAGE_SLACK_ALLOW_EXTERNAL` everyone goes on to the listeners.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.response import BoltResponse

from threadsage.bots.slack.access import command_is_external, is_external, person_team
from threadsage.bots.slack.apologies import message_language
from threadsage.bots.slack.asking import parse_ask
from threadsage.bots.slack.buttons import click_language
from threadsage.bots.slack.intake import from_a_person
from threadsage.bots.slack.places import Place, place_of_click, place_of_mention, place_of_message
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import unescaped
from threadsage.i18n import Language, language_of, say
from threadsage.support.background import BackgroundTasks

log = logging.getLogger(__name__)

Middleware = Callable[..., Awaitable[BoltResponse | None]]


def stopping_outsiders(
    own_teams: Callable[[], Collection[str]], send: SlackSender, tasks: BackgroundTasks
) -> Middleware:
    """The middleware (for `AsyncApp.use`); `own_teams`: the bot's workspace and organisation,
    known once the bot has started."""

    def tell(place: Place, user: str, language: Language) -> None:
        """An ephemeral notice, sent after the acknowledgement, in the language they wrote in."""
        tasks.spawn(send.ephemeral(place, user, say("slack_external", language)), name="slack-external")

    async def middleware(
        body: dict[str, Any], context: Any, ack: AsyncAck, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        own = own_teams()
        if "command" in body:  # a slash command's payload names no user team (see `access`)
            if not command_is_external(body, own):
                await next()
                return None
            log.info("not answering /ask of team %s: another organisation", body.get("team_id") or "unknown")
            return await ack(say("slack_external", language_of(parse_ask(unescaped(body.get("text", ""))).question)))
        event = body.get("event") if body.get("type") == "event_callback" else None
        if not is_external(body, event, own):
            await next()
            return None
        log.info("not answering a person of team %s: another organisation", person_team(body, event) or "unknown")
        if event is not None:
            if from_a_person(event, context):
                place = place_of_mention(event, body) if event.get("type") == "app_mention" else None
                if event.get("type") == "message":
                    place = place_of_message(event, body)
                    place = place if place is not None and place.is_dm else None  # a thread's are for the people there
                if place is not None:
                    tell(place, event["user"], message_language(event))
            return BoltResponse(status=200, body="")
        response = await ack()
        if body.get("type") == "block_actions":
            tell(place_of_click(body), body["user"]["id"], click_language(body))
        elif body.get("type") == "message_action":
            tell(Place("", body["channel"]["id"], "", False), body["user"]["id"], message_language(body["message"]))
        return response

    return middleware
