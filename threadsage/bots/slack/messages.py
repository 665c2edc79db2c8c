"""A message's turn: a mention, a DM, a reply in a thread the bot takes part in, or a question in a
help channel (whose reply the documents do not cover goes to the experts, see `help`), answered once
(Slack sends a mention as both `app_mention` and `message`, and retries deliveries) — with 👀 on
it while the bot works, its files read, and in an assistant thread its scope and title from the
panel; "new" in a DM starts a new conversation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from threadsage.bots.slack import assistant
from threadsage.bots.slack.answering import Answering
from threadsage.bots.slack.edits import Question
from threadsage.bots.slack.files import SlackFiles
from threadsage.bots.slack.help import HelpDesk
from threadsage.bots.slack.home import Asked, RecentQuestions
from threadsage.bots.slack.jobs import MessageJob
from threadsage.bots.slack.membership import Membership
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import question_text, unescaped
from threadsage.chat import ChatService, Turn
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import say


@dataclass(frozen=True)
class Messages:
    chat: ChatService
    coordinator: Coordinator
    send: SlackSender
    files: SlackFiles
    panel: assistant.Panel
    recent: RecentQuestions
    answering: Answering
    help: HelpDesk
    own_teams: Callable[[], frozenset[str]]  # the bot's workspace and organisation (Slack Connect's people are not)

    async def answer(self, job: MessageJob) -> None:
        event, place = job.event, job.place
        is_thread_reply = event.get("type") == "message" and not place.is_dm and not job.help
        if is_thread_reply and not await self.chat.has_conversation(place.session):
            return  # a thread the bot is not part of: there it speaks only when mentioned
        # app_mention and message arrive both for a mention; Slack retries re-deliver: once only.
        if not await self.coordinator.claim(f"slack-event:{event['channel']}:{event['ts']}", 24 * 3600):
            return
        text = question_text(event.get("text"))
        if place.is_dm and text.lower() == "new":  # as /new does in Telegram
            await self.chat.reset(place.session, "slack")
            await self.send.post_quietly(place, say("new_started"))
            return
        message_id = f"{event['channel']}:{event['ts']}"
        if self.panel.agent_view and place.is_dm and not event.get("thread_ts"):
            await self.panel.adopt(place, event["user"])  # a new question of the agent DM
        in_panel = await self.panel.of(place) is not None  # an assistant thread: its context decides the scope
        categories = await self.panel.categories(place)
        if text:
            await self.recent.add(place.team, event["user"], Asked(unescaped(text), event["channel"], event["ts"]))
            if in_panel:
                await self.panel.title(place, unescaped(text))
        async with self.send.eyes_on(place.channel, event["ts"]):
            files = (lambda: self.files.fetch(event)) if event.get("files") else None  # downloaded in its turn
            membership = Membership(self.chat, self.send, self.coordinator, self.own_teams)
            members_of = await membership.of(place, event["user"], event.get("user_team") or place.team)
            turn = Turn(
                "slack",
                place.session,
                event["user"],
                message_id,
                text=text,
                categories=categories,
                fetch_files=files,
                members_of=members_of,
            )
            question = Question(self.coordinator, event["channel"], event["ts"])
            instead = self.help.escalating(place, event["user"], unescaped(text)) if job.help else None
            await self.answering.answer(place, turn, question, in_panel=in_panel, instead=instead)
