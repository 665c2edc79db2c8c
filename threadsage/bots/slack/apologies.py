"""The apology for a turn no worker could finish (each that tried died), to the person waiting for
it, where they asked and in the language of their question: in the thread, through a command's or
a private answer's response_url, or privately beside a clicked message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from threadsage.bots.slack.buttons import click_language
from threadsage.bots.slack.jobs import ClickJob, CommandJob, MessageJob, ShortcutJob
from threadsage.bots.slack.places import place_of_click
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import question_text
from threadsage.i18n import Language, language_of, say


def message_language(message: dict[str, Any]) -> Language:
    """The language of a message's (or a command's) text, mentions aside."""
    return language_of(question_text(message.get("text")))


@dataclass(frozen=True)
class Apologies:
    send: SlackSender

    async def for_message(self, job: MessageJob) -> None:
        await self.send.post_quietly(job.place, say("apology", message_language(job.event)))

    async def for_click(self, job: ClickJob) -> None:
        """To the person who clicked: through the click's response_url on a private answer."""
        body, apology = job.body, say("apology", click_language(job.body))
        place = place_of_click(body)
        if place.private_for:
            await self.send.respond(body.get("response_url", ""), apology)
        else:
            await self.send.ephemeral(place, body["user"]["id"], apology)

    async def for_command(self, job: CommandJob) -> None:
        await self.send.respond(job.command.get("response_url", ""), say("apology", message_language(job.command)))

    async def for_shortcut(self, job: ShortcutJob) -> None:
        language = message_language(job.body["message"])  # the language of the message it was used on
        await self.send.respond(job.body.get("response_url", ""), say("apology", language))
