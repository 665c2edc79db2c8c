"""The Slack bot's side of the notify seam (`threadsage.chat.notify`): a follow-up posted in the
thread a session key names (or to the person in private), rendered as any answer is; another
platform's question posted in a Slack experts' channel, and an expert's answer from another
platform posted in the asker's thread (`crossing`)."""

from __future__ import annotations

from threadsage.bots.slack import crossing
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import SlackSender
from threadsage.chat.notify import Escalation, ExpertAnswer, Notice
from threadsage.chat.turns import Turn
from threadsage.settings.sections import AccessSettings


class SlackNotifier:
    def __init__(self, settings: AccessSettings, send: SlackSender) -> None:
        self.settings = settings
        self.send = send

    def categories(self, session_key: str) -> tuple[str, ...] | None:
        return place_of_session(session_key).categories(self.settings)

    async def notify(self, notice: Notice) -> None:
        place = place_of_session(notice.session_key)
        if notice.direct:  # chat.postMessage to a user id posts in the bot's DM with them
            place = Place(place.team, notice.user_id, "", True)
        turn = Turn("slack", notice.session_key, notice.user_id, f"follow-up-{notice.message_id}")
        await self.send.post(place, notice.reply, turn)

    async def escalate(self, escalation: Escalation, experts: str) -> str:
        return await crossing.post_escalation(self.send, escalation, experts)

    async def relay(self, escalation: Escalation, answer: ExpertAnswer) -> bool:
        return await crossing.relay(self.send, escalation, answer)


def place_of_session(key: str) -> Place:
    """The place a session key names ("slack:team:channel:thread"); a DM's channel starts with D."""
    _, team, channel, thread = [*key.split(":"), "-", "-", "-"][:4]
    return Place("" if team == "-" else team, channel, "" if thread == "-" else thread, channel.startswith("D"))
