"""Help groups and the experts' loop, in Telegram (docs/help-channels.md).

- In a help group (`telegram:<chat id>` in THREADSAGE_HELP_CHANNELS) every message that asks
  something (`questions.asking`) is answered as a reply to it, without a mention; the bot must see
  the group's messages (privacy mode off in @BotFather, or the bot an administrator).
- With experts (a `telegram:<chat id>` place in THREADSAGE_EXPERTS), a help group's question the
  documents do not cover gets no "not covered": it goes to the experts' group — who asked where,
  the question, a link to it — and the group is told that it did. In a `draft` group every answer
  goes there instead, as a draft the experts post as is or discard (`reviewing`).
- The first reply to that message in the experts' group is relayed to the asker, as a reply to the
  question, naming its author. Its author then gets "Save as verified answer" (a button only they
  may press): the question and the reply become a verified answer of the knowledge loop. Later
  replies stay with the experts; a reply to any other bot message there is a question as usual.
- A category's experts may be in a Slack channel (THREADSAGE_EXPERTS names one place per category,
  whatever its platform): the escalation then goes there through the Slack bot, and the first
  reply in its thread comes back as a reply to the question (`crossing`,
  `threadsage.chat.escalations`). Another platform's question escalated to a Telegram group looks
  like any escalation here, and the first reply to it goes back the same way.
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.constants import ChatType, ParseMode

from threadsage.adapters.questions.asking import asks_something
from threadsage.bots.replies import ATTEMPT_CHARS, QUESTION_CHARS, covered, place_categories
from threadsage.bots.telegram import crossing
from threadsage.bots.telegram.chains import ReplyChains, chain_key
from threadsage.bots.telegram.escalations import answer_html, escalated_key, escalation_html, relay_key
from threadsage.bots.telegram.reviewing import TelegramReviewing
from threadsage.bots.telegram.sending import TelegramSender, answer_query, place_of
from threadsage.bots.tokens import Button, ButtonKind, Signer, session_digest
from threadsage.chat import ChatService, Reply, ReplyKind, turn_ref
from threadsage.chat.escalations import ESCALATION_KEPT, Elsewhere
from threadsage.chat.notify import Escalation, ExpertAnswer
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import Language, say
from threadsage.settings.help_channels import TELEGRAM, HelpSettings, platform_of, telegram_chat
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)


Instead = Callable[[Reply], Awaitable[bool]]


class TelegramHelp:
    def __init__(
        self,
        settings: HelpSettings,
        access: AccessSettings,
        chat: ChatService,
        send: TelegramSender,
        chains: ReplyChains,
        signer: Signer,
        coordinator: Coordinator,
    ) -> None:
        self.settings = settings
        self.access = access
        self.chat = chat
        self.send = send
        self.chains = chains
        self.signer = signer
        self.coordinator = coordinator
        self.reviewing = TelegramReviewing(settings, chat, send, chains, signer, coordinator)

    def asks_here(self, message: Message, text: str) -> bool:
        """A message in a help group that asks something."""
        return self.settings.help_mode(f"{TELEGRAM}{message.chat_id}") is not None and asks_something(text)

    def escalating(self, message: Message, text: str, language: Language) -> Instead | None:
        """What takes a help group's answer instead of sending it (True: taken) — in an `answer`
        group one the documents do not cover, escalated; in a `draft` group every answer, sent to
        the experts to review (one not covered, escalated). None without experts to ask."""
        experts = self.experts_of(message.chat_id)
        if experts is None:
            return None
        drafting = self.settings.help_mode(f"{TELEGRAM}{message.chat_id}") == "draft"

        async def escalated(reply: Reply) -> bool:
            if reply.kind is not ReplyKind.ANSWER or (covered(reply) and not drafting):
                return False
            draft = reply if covered(reply) else None
            if await self._escalate(message, text, experts, language, draft=draft):
                told = "tg_drafted" if draft is not None else "tg_escalated"
                await self.send.send_plain(place_of(message), say(told, language))
            return True

        return escalated

    def experts_of(self, group: int) -> str | None:
        """The experts' place for a group's questions (its category's, else `*`'s): a Telegram
        group, or a Slack channel when the Slack bot runs in this process."""
        experts = self.settings.experts_of_place(place_categories(self.access, str(group), False))
        if experts is None or platform_of(experts) == "telegram" or self.chat.knowledge.reaches(platform_of(experts)):
            return experts
        return None

    async def escalate_click(self, query: CallbackQuery, answer: Message, language: Language) -> None:
        """ "Still need help?" under a group's answer: the question it replies to goes to the
        experts, with the answer as the bot's attempt; the toast says so."""
        question = answer.reply_to_message
        experts = self.experts_of(answer.chat_id)
        if question is None or experts is None:
            await answer_query(query, say("escalation_nowhere", language))
            return
        sent = await self._escalate(question, self.chains.question_text(question), experts, language, answer.text or "")
        await answer_query(query, say("escalated_click" if sent else "escalated_already", language))

    async def _escalate(
        self,
        message: Message,
        text: str,
        experts: str,
        language: Language,
        attempt: str = "",
        draft: Reply | None = None,
    ) -> bool:
        """The question sent to the experts' place, with the bot's `attempt` ("": the documents
        do not cover it) or, in a draft group, its `draft` to post or discard (`reviewing`); once
        (False: it was already). Experts on another platform get it through its bot (`crossing`)."""
        if not await self.coordinator.claim(f"tg-escalation:{message.chat_id}:{message.message_id}", ESCALATION_KEPT):
            return False
        person = message.from_user
        ident = f"telegram:{message.chat_id}:{message.message_id}"
        where_asked = ("telegram", str(message.chat_id), str(person.id if person is not None else 0))
        chat = telegram_chat(experts)
        if chat is None:  # a draft group's experts are on Telegram (settings): this is an escalation
            answered = Reply(ReplyKind.ANSWER, attempt, language=language) if attempt else None
            await self._elsewhere.escalate(crossing.escalation(message, text, answered, language), experts)
            await self.chat.knowledge.escalated(ident, where_asked, text, experts)
            return True
        if draft is not None:
            tried = say("tg_draft_attempt", language, answer=answer_html(draft))
            how = say("tg_draft_how", language)
        else:
            tried = (
                say("tg_escalation_attempt", language, answer=html.escape(attempt[:ATTEMPT_CHARS])) if attempt else ""
            )
            how = say("escalation_how" if attempt else "tg_escalation_how", language)
        name = person.full_name if person is not None else ""
        where = message.chat.title or str(message.chat_id)
        body = escalation_html(name, where, text, tried, how, message.link or "", language)
        buttons = await self.reviewing.keep(message, draft) if draft is not None else None
        sent = await self.send.bot.send_message(chat, body, parse_mode=ParseMode.HTML, reply_markup=buttons)
        if draft is not None:
            await self.reviewing.sent(message, sent)
        kept = {
            "chat": message.chat_id,
            "message": message.message_id,
            "user": person.id if person is not None else 0,
            "question": text[:QUESTION_CHARS],
            "language": language,
        }
        await self.coordinator.remember(escalated_key(chat, sent.message_id), json.dumps(kept), ESCALATION_KEPT)
        await self.chat.knowledge.escalated(ident, where_asked, text, experts)
        return True

    async def relay(self, message: Message) -> bool:
        """A reply in an experts' group to one of the bot's escalations: the first is relayed to
        the asker (by the bot of the question's platform for a question of another: `crossing`)
        (True: handled, relayed or not); False for any other message."""
        replied = message.reply_to_message
        if replied is None or message.chat.type == ChatType.PRIVATE or not self.chains.replies_to_me(message):
            return False
        kept = await self.coordinator.recall(escalated_key(message.chat_id, replied.message_id))
        foreign = await self._from_elsewhere(message.chat_id, replied.message_id) if kept is None else None
        if kept is None and foreign is None:
            return False
        if foreign is not None and not self.chat.knowledge.reaches(foreign.platform):
            return True  # its platform's bot does not run here (logged): both must
        if not await self.coordinator.claim(relay_key(message.chat_id, replied.message_id), ESCALATION_KEPT):
            return True  # answered already: the rest is the experts' conversation
        expert, text = message.from_user, message.text or message.caption or ""
        name = expert.full_name if expert is not None else ""
        answer = ExpertAnswer(name, text, message.link or "", f"{TELEGRAM}{message.chat_id}:{replied.message_id}")
        if foreign is not None:
            asked: dict[str, Any] = {"question": foreign.question, "language": foreign.language}
            ident, relayed = foreign.ident, await self._elsewhere.relay(foreign, answer)
        else:
            asked = json.loads(kept or "{}")
            ident = f"telegram:{asked['chat']}:{asked['message']}"
            relayed = await crossing.relay(self.send, asked["chat"], asked["message"], answer, asked["language"])
        if not relayed:
            await self.send.send_plain(place_of(message), say("relay_gone", asked["language"]))
            return True
        await self.chat.knowledge.expert_replied(ident, str(expert.id if expert else ""))
        await self._offer(message, asked, text)
        return True

    async def _from_elsewhere(self, group: int, escalation: int) -> Escalation | None:
        """Another platform's question that the message `escalation` in the experts' group
        `group` escalates; None for any other message."""
        experts, elsewhere = f"{TELEGRAM}{group}", self.chat.knowledge.elsewhere
        if elsewhere is None or experts not in self.settings.expert_channels():
            return None
        return await elsewhere.escalation(experts, str(escalation))

    @property
    def _elsewhere(self) -> Elsewhere:
        elsewhere = self.chat.knowledge.elsewhere
        assert elsewhere is not None  # asked for only once it `reaches` the other platform's bot
        return elsewhere

    async def _offer(self, message: Message, asked: dict[str, object], answer: str) -> None:
        """The offer to save the reply as the verified answer, under it: a button only its author may press."""
        key = chain_key(message.chat_id, message.message_id)
        ref = turn_ref(key)
        expert = message.from_user.id if message.from_user is not None else 0
        kept = {"question": asked["question"], "answer": answer, "expert": expert}
        await self.coordinator.remember(f"tg-expert-answer:{ref}", json.dumps(kept), ESCALATION_KEPT)
        language = cast(Language, asked["language"])
        token = self.signer.sign(Button(ButtonKind.EXPERT, session_digest(key), ref, 1))
        keyboard = InlineKeyboardMarkup(
            [[InlineKeyboardButton(f"✅ {say('verify_button', language)}", callback_data=token)]]
        )
        sent = await self.send.bot.send_message(
            message.chat_id,
            say("relay_offer", language),
            reply_markup=keyboard,
            **place_of(message).send_kwargs(),
        )
        await self.chains.remember(key, [sent])

    async def save(self, query: CallbackQuery, button: Button, language: Language) -> None:
        """The expert's click: their relayed reply kept as the verified answer to the question."""
        kept = await self.coordinator.recall(f"tg-expert-answer:{button.ref}")
        if kept is None:
            await answer_query(query, say("tg_invalid_button", language))
            return
        reply = json.loads(kept)
        if query.from_user.id != reply["expert"]:
            await answer_query(query, say("expert_not_yours", language))
            return
        by = query.from_user.full_name or query.from_user.username or str(query.from_user.id)
        outcome = await self.chat.knowledge.keep_answer(reply["question"], reply["answer"], by)
        await answer_query(query, say("expert_saved" if outcome == "saved" else f"verify_{outcome}", language, who=by))
