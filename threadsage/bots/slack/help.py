"""Help channels and the experts' loop, in Slack (docs/help-channels.md).

- In a help channel (THREADSAGE_HELP_CHANNELS) every top-level message that asks something
  (`questions.asking`) is answered in its thread without a mention; statements, small talk, bots'
  messages, edits and joins get nothing.
- With experts (THREADSAGE_EXPERTS), a help channel's question the documents do not cover gets no
  "not covered" there: it is escalated, and its person is told so privately. "Still need help?"
  under any answer escalates its question too.
- An escalation is a message in the experts' channel: who asked where, the question and a link to
  it, what the bot answered and its sources. Its metadata says where the question is.
- The first reply a person writes in an escalation's thread is relayed into the asker's thread,
  named and linked (once: later replies stay with the experts; the bot's own messages are never
  replies). Its author then privately gets "Save as verified answer": the question and the reply
  become a verified answer of the knowledge loop, given to the same question when it comes again.
  Everyone in the experts' channel is an expert: its membership is the list.
- A category's experts may be in a Telegram group (THREADSAGE_EXPERTS names one place per
  category, whatever its platform): the escalation then goes there through the Telegram bot, and
  the first reply there comes back into the thread (`crossing`, `threadsage.chat.escalations`).
  Another platform's question escalated to a Slack channel looks like any escalation here, and
  the first reply in its thread goes back to it the same way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.errors import SlackApiError

from threadsage.adapters.questions.asking import asks_something
from threadsage.bots.replies import covered
from threadsage.bots.slack import crossing
from threadsage.bots.slack.blocks import ESCALATE_ACTION, section
from threadsage.bots.slack.escalations import (
    ESCALATION_EVENT,
    RELAY_EVENT,
    Asked,
    escalated_here,
    escalation_blocks,
    relay_key,
)
from threadsage.bots.slack.places import Place, thread_of_click
from threadsage.bots.slack.reviewing import REVIEW_ACTIONS, Reviewing
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import escaped, question_text, unescaped
from threadsage.bots.tokens import Button, ButtonKind, Signer, clicked, session_digest
from threadsage.chat import ChatService, Reply, ReplyKind, turn_ref
from threadsage.chat.escalations import ESCALATION_KEPT, Elsewhere
from threadsage.chat.notify import Escalation, ExpertAnswer
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import DEFAULT, Language, language_of, say
from threadsage.settings.help_channels import HelpSettings, platform_of
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)

EXPERT_ACTION = "expert_verify"


HELP_ACTIONS = (ESCALATE_ACTION, EXPERT_ACTION, *sorted(REVIEW_ACTIONS))  # the buttons this module answers


def asks_here(settings: HelpSettings, event: dict[str, Any]) -> bool:
    """A person's top-level message in a help channel that asks something."""
    return (
        not event.get("thread_ts")
        and settings.help_mode(str(event.get("channel", ""))) is not None
        and asks_something(unescaped(question_text(event.get("text"))))
    )


def replies_to_escalation(settings: HelpSettings, event: dict[str, Any]) -> bool:
    """A person's reply in a thread of an experts' channel (an escalation's, if its root says so)."""
    thread = event.get("thread_ts")
    return bool(thread) and thread != event.get("ts") and event.get("channel") in settings.expert_channels()


class HelpDesk:
    def __init__(
        self,
        settings: HelpSettings,
        access: AccessSettings,
        chat: ChatService,
        send: SlackSender,
        signer: Signer,
        coordinator: Coordinator,
    ) -> None:
        self.settings = settings
        self.access = access  # a place's categories: whose experts
        self.chat = chat
        self.send = send
        self.signer = signer
        self.coordinator = coordinator
        self.reviewing = Reviewing(chat, send, signer, coordinator)

    # --- escalating -------------------------------------------------------------------------

    def escalating(self, place: Place, asker: str, question: str) -> Callable[[Reply], Awaitable[bool]] | None:
        """For a help channel's question: what takes an answer instead of posting it (True: taken)
        — in an `answer` channel one the documents do not cover, escalated; in a `draft` channel
        every answer, sent to the experts to review (one not covered, escalated). None without
        experts to ask."""
        experts = self._experts(place)
        if experts is None:
            return None
        drafting = self.settings.help_mode(place.channel) == "draft"

        async def escalated(reply: Reply) -> bool:
            if reply.kind is not ReplyKind.ANSWER or (covered(reply) and not drafting):
                return False
            asked = Asked(place.channel, place.thread_ts, asker, question)
            draft = reply if covered(reply) else None
            await self.escalate(asked, draft, experts, reply.language, place.team if draft is not None else None)
            told = "drafted_privately" if draft is not None else "escalated_privately"
            await self.send.ephemeral(place, asker, say(told, reply.language))
            return True

        return escalated

    async def escalate(
        self, asked: Asked, attempt: Reply | None, experts: str, language: Language, review: str | None = None
    ) -> bool:
        """The question posted in the experts' place with the bot's answer (`attempt`; None:
        the documents do not cover it), once (False: it was already). With `review` (a draft
        channel's: the question's team), the answer is a draft the experts post as it is or
        discard (`reviewing`). Experts on another platform get it through its bot (`crossing`)."""
        if not await self.coordinator.claim(f"slack-escalation:{asked.channel}:{asked.ts}", ESCALATION_KEPT):
            return False
        where = ("slack", asked.channel, asked.user)
        await self.chat.knowledge.escalated(f"slack:{asked.channel}:{asked.ts}", where, asked.text, experts)
        if platform_of(experts) != "slack":
            await self._elsewhere.escalate(await crossing.escalation(self.send, asked, attempt, language), experts)
            return True
        link = await self.send.permalink(asked.channel, asked.ts) or ""
        quoted = escaped(asked.text).replace("\n", "\n>")
        lead = say(
            "escalation", language, asker=f"<@{asked.user}>", channel=f"<#{asked.channel}>", link=link, question=quoted
        )
        buttons = await self.reviewing.buttons(review, asked, attempt) if review and attempt else None
        await self.send.client.chat_postMessage(
            channel=experts,
            text=f"{asked.user}: {asked.text}"[:3000],
            blocks=escalation_blocks(lead, attempt, language, buttons),
            unfurl_links=False,
            metadata={"event_type": ESCALATION_EVENT, "event_payload": asked.payload},
        )
        return True

    async def click(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        kind = action.get("action_id")
        if kind in REVIEW_ACTIONS:
            await self.reviewing.decide(body, action)
            return
        await (self.save if kind == EXPERT_ACTION else self.escalate_click)(body, action)

    async def escalate_click(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """ "Still need help?" under an answer: its question (the thread's first message) goes to
        the experts, with the answer as the bot's attempt."""
        place, user = thread_of_click(body), body.get("user", {}).get("id", "")
        if clicked(self.signer, action.get("value"), place.session, ButtonKind.ESCALATE) is None:
            await self.send.ephemeral(place, user, say("slack_invalid_button", DEFAULT))
            return
        root = await self.send.first_of_thread(place.channel, place.thread_ts)
        experts = self._experts(place)
        language = language_of(str(root.get("text", ""))) if root else DEFAULT
        if root is None or experts is None:
            await self.send.ephemeral(place, user, say("escalation_nowhere", language))
            return
        answer = str(body.get("message", {}).get("text", ""))
        if platform_of(experts) != "slack":  # what Slack's experts see under the escalation, in the text
            answer = "\n\n".join(filter(None, (answer, crossing.sources_of(body.get("message", {}), language))))
        attempt = Reply(ReplyKind.ANSWER, answer, language=language)
        asked = Asked(place.channel, place.thread_ts, str(root.get("user", user)), question_text(root.get("text")))
        sent = await self.escalate(asked, attempt, experts, language)
        await self.send.ephemeral(place, user, say("escalated_click" if sent else "escalated_already", language))

    # --- the expert's reply -----------------------------------------------------------------

    async def relay(self, event: dict[str, Any], team: str) -> None:
        """The first reply in an escalation's thread, into the asker's thread (by the bot of the
        question's platform for a question of another: `crossing`); then its author is offered to
        save it as the verified answer."""
        channel, thread, expert = event["channel"], event["thread_ts"], event["user"]
        start = await self.send.thread_start(channel, thread)
        metadata = (start.root or {}).get("metadata") or {}
        if metadata.get("event_type") != ESCALATION_EVENT:
            return  # a thread of the experts' own
        asked = escalated_here(metadata) or await self._from_elsewhere(channel, thread)
        if asked is None:
            return  # kept no longer, or its platform's bot does not run here (logged): both must
        if start.first_reply is not None and start.first_reply != event["ts"]:
            return  # an earlier reply is the one relayed (two written at once: each job sees both)
        if not await self.coordinator.claim(relay_key(channel, thread), ESCALATION_KEPT):
            return  # the first reply was relayed; the rest is the experts' conversation
        answer = unescaped(question_text(event.get("text")))
        question = asked.text if isinstance(asked, Asked) else asked.question
        language = language_of(question)
        link = await self.send.permalink(channel, event["ts"]) or ""
        here = Place(team, channel, thread, False)
        if isinstance(asked, Asked):
            ident = f"slack:{asked.channel}:{asked.ts}"
            relayed = await self._relay(asked, expert, answer, link, f"{channel}:{thread}")
        else:
            ident = asked.ident
            name = await crossing.person_name(self.send, expert)
            relayed = await self._elsewhere.relay(asked, ExpertAnswer(name, answer, link, f"{channel}:{thread}"))
        if not relayed:
            await self.send.ephemeral(here, expert, say("relay_gone", language))
            return
        await self.chat.knowledge.expert_replied(ident, expert)
        ref = turn_ref(f"{channel}:{event['ts']}")
        kept = {"question": question, "answer": answer, "expert": expert}
        await self.coordinator.remember(f"slack-expert-answer:{ref}", json.dumps(kept), ESCALATION_KEPT)
        await self._offer(here, expert, ref, language)

    async def _relay(self, asked: Asked, expert: str, answer: str, link: str, escalation: str) -> bool:
        """A Slack expert's reply in the Slack asker's thread; False when the question is gone."""
        try:
            await self.send.client.chat_postMessage(
                channel=asked.channel,
                thread_ts=asked.ts,
                text=say("relayed", language_of(asked.text), expert=f"<@{expert}>", link=link, answer=escaped(answer)),
                unfurl_links=False,
                metadata={"event_type": RELAY_EVENT, "event_payload": {"escalation": escalation}},
            )
        except SlackApiError as exc:
            log.warning("an expert's reply could not be relayed: %s", exc)
            return False
        return True

    async def save(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        """The expert's click: their relayed reply kept as the verified answer to the question."""
        place, user = thread_of_click(body), body.get("user", {})
        button = clicked(self.signer, action.get("value"), place.session, ButtonKind.EXPERT)
        kept = await self.coordinator.recall(f"slack-expert-answer:{button.ref}") if button is not None else None
        if kept is None:
            await self.send.ephemeral(place, user.get("id", ""), say("slack_invalid_button", DEFAULT))
            return
        reply = json.loads(kept)
        language = language_of(reply["question"])
        if user.get("id") != reply["expert"]:
            await self.send.ephemeral(place, user.get("id", ""), say("expert_not_yours", language))
            return
        by = str(user.get("name") or user.get("username") or user["id"])
        outcome = await self.chat.knowledge.keep_answer(reply["question"], reply["answer"], by)
        key = "expert_saved" if outcome == "saved" else f"verify_{outcome}"
        await self.send.ephemeral(place, user["id"], say(key, language, who=by))

    # --- helpers ----------------------------------------------------------------------------

    @property
    def _elsewhere(self) -> Elsewhere:
        elsewhere = self.chat.knowledge.elsewhere
        assert elsewhere is not None  # asked for only once it `reaches` the other platform's bot
        return elsewhere

    async def _from_elsewhere(self, channel: str, thread: str) -> Escalation | None:
        """Another platform's question an escalation in this experts' channel carries, if this
        process runs that platform's bot."""
        elsewhere = self.chat.knowledge.elsewhere
        escalation = await elsewhere.escalation(channel, thread) if elsewhere is not None else None
        return escalation if escalation is not None and self.chat.knowledge.reaches(escalation.platform) else None

    def _experts(self, place: Place) -> str | None:
        """The experts' place of the place's category (else `*`'s), on either platform: one on
        another platform only when its bot runs in this process."""
        experts = self.settings.experts_of_place(place.categories(self.access))
        if experts is None or platform_of(experts) == "slack" or self.chat.knowledge.reaches(platform_of(experts)):
            return experts
        return None

    async def _offer(self, place: Place, expert: str, ref: str, language: Language) -> None:
        token = self.signer.sign(Button(ButtonKind.EXPERT, session_digest(place.session), ref, 1))
        blocks: list[dict[str, Any]] = [
            section(say("relay_offer", language)),
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": EXPERT_ACTION,
                        "text": {"type": "plain_text", "text": say("verify_button", language)},
                        "value": token,
                        "style": "primary",
                    }
                ],
            },
        ]
        await self.send.ephemeral(place, expert, say("relay_offer", language), blocks)
