"""A job's turn as Slack shows it, whatever started it (a message, /ask, the shortcut, a click):
a placeholder while a model-backed run works (see `progress`; in an assistant thread its status,
see `status`), the answer's words as the model writes them (see `streaming`), then the replies —
the first in the placeholder's (or the stream's) place — or, should anything fail, one apology
there. A private turn (`/ask`, the shortcut) shows only its replies, to its person (see
`private`). A question edited meanwhile is answered as edited (see `edits`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError

from threadsage.bots.slack.edits import MAX_EDITS, Question
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.private import Private, PrivateAnswers
from threadsage.bots.slack.progress import Placeholder
from threadsage.bots.slack.sending import NOT_HERE, SlackSender
from threadsage.bots.slack.status import Shown, Status
from threadsage.bots.slack.streaming import Streaming
from threadsage.chat import ChatService, Draft, Progress, Reply, ReplyKind, Turn, run_shown
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.i18n import say

log = logging.getLogger(__name__)

Action = Callable[[], Awaitable[None]]
Instead = Callable[[Reply], Awaitable[bool]]


class Answering:
    def __init__(
        self,
        chat: ChatService,
        send: SlackSender,
        answers: PrivateAnswers,
        progress: bool,
        step_seconds: float = 1.0,
    ) -> None:
        self.chat = chat
        self.send = send
        self.answers = answers
        self.progress = progress  # THREADSAGE_SLACK_PROGRESS
        self.step_seconds = step_seconds  # THREADSAGE_SLACK_STEP_SECONDS
        self.after_answer: Callable[[Place, Turn, Reply], Awaitable[None]] | None = None  # a curator's button

    async def answer(
        self,
        place: Place,
        turn: Turn,
        question: Question | None = None,
        on_accepted: Action | None = None,
        notices_to: str | None = None,
        unreachable: Action | None = None,
        in_panel: bool = False,
        respond_to: str = "",
        instead: Instead | None = None,
    ) -> None:
        """`on_accepted`: what to do once a clicked answer is accepted; `notices_to`: the person
        whom notices go to privately while nothing shows (a refused click); `unreachable`: what
        to do where the bot may not post; `in_panel`: an assistant thread, where the steps are its
        status; `respond_to`: the response_url of a private turn; `instead`: what takes a reply in
        place of posting it (True: taken) — a help channel's escalation, whose turn then shows no
        steps nor words on the way. A service outage propagates: the turn queue retries."""
        with self.send.answering(place):
            await self._answer(
                place, turn, question, on_accepted, notices_to, unreachable, in_panel, respond_to, instead
            )

    async def _answer(
        self,
        place: Place,
        turn: Turn,
        question: Question | None,
        on_accepted: Action | None,
        notices_to: str | None,
        unreachable: Action | None,
        in_panel: bool,
        respond_to: str,
        instead: Instead | None,
    ) -> None:
        apology = say("apology", turn.reply_language)
        quiet = instead is not None  # a reply that may not be posted shows nothing before it
        shown: Shown = (
            Placeholder(self.send, place, turn.message_id, enabled=False)
            if quiet
            else self._shown(place, turn, in_panel, respond_to)
        )
        try:
            await shown.find()
            if question is not None:
                turn = await question.latest(turn)  # edited before its turn began
            drafts = self.progress and not place.private_for and not quiet  # only where the words show as they come
            replies = await self._run(turn, shown, on_accepted, drafts)
            for _ in range(MAX_EDITS):
                edited = turn if question is None else await question.latest(turn)
                if edited is turn:
                    break
                turn, replies = edited, await self._run(edited, shown, on_accepted, drafts)
            for reply in replies:
                if instead is not None and await instead(reply):
                    continue
                if reply.kind is ReplyKind.NOTICE and notices_to is not None and shown.ts is None:
                    await self.send.ephemeral(place, notices_to, reply.text)
                else:
                    await shown.deliver(reply, turn)
                    if self.after_answer is not None:
                        await self.after_answer(place, turn, reply)
            if question is not None:
                await question.answered()
        except ServiceUnavailable:
            raise
        except SlackApiError as exc:
            if unreachable is not None and exc.response.get("error") in NOT_HERE:
                await unreachable()
            else:
                log.exception("answering %s failed", turn.message_id)
                await shown.apologise(apology)
        except Exception:
            log.exception("answering %s failed", turn.message_id)
            await shown.apologise(apology)
        finally:
            await shown.end()

    def _shown(self, place: Place, turn: Turn, in_panel: bool, respond_to: str) -> Shown:
        """How the turn shows itself while it works: privately nothing; in a thread (the panel's
        included) its steps, then its answer streamed; at the top of a DM a placeholder whose text
        follows the steps and then the answer's words."""
        if place.private_for:
            return Private(self.send, self.answers, place, respond_to, self.send.signer)
        if not self.progress:
            return Placeholder(self.send, place, turn.message_id, enabled=False)
        inner: Placeholder | Status = (
            Status(self.send, place)
            if in_panel
            else Placeholder(self.send, place, turn.message_id, True, self.step_seconds)
        )
        if not place.thread_ts:  # Slack streams only replies in a thread
            return inner
        hold = 0.0 if in_panel else self.step_seconds  # a status is no message: shown at once
        return Streaming(inner, self.send, place, turn, self.chat.coordinator, hold)

    async def _run(self, turn: Turn, shown: Shown, on_accepted: Action | None, drafts: bool) -> list[Reply]:
        """The turn's replies; its steps shown on the way, and its drafts when `drafts`."""
        return await run_shown(self.chat, turn, _Showing(shown, on_accepted), drafts)


@dataclass(frozen=True)
class _Showing:
    """How Slack shows a running turn (`chat.showing.Display`): its steps and drafts as `shown`
    shows them; a clicked option, once accepted, by `on_accepted`; a refused click's notice is
    delivered with the replies (privately where nothing shows: `Answering.answer`)."""

    shown: Shown
    on_accepted: Action | None

    async def accepted(self) -> None:
        if self.on_accepted is not None:
            await self.on_accepted()

    async def progress(self, progress: Progress) -> None:
        await self.shown.show(progress)

    async def draft(self, draft: Draft) -> None:
        await self.shown.draft(draft)

    async def refused(self, reply: Reply) -> bool:
        return False
