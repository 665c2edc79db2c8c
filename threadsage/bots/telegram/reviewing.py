"""A draft help group's answers, reviewed by the experts before anyone else sees them (Telegram).

In a `draft` help group the bot's answer is not sent: it goes to the experts' group as the
question's escalation — the draft whole with its sources — under "Post as is" and "Discard".
Anyone in the experts' group may press them (its membership is the list); a click anywhere else is
refused. Posted, the draft arrives as a reply to the question as any answer does (sources, 👍/👎),
once; discarded, nothing is sent and the escalation waits for an expert's reply, relayed as for any
(`help.relay`) — which is also how an expert edits a draft. Either way the escalation loses its
buttons and says who decided. Only one answer goes back: a posted draft and a relayed reply claim
the same key (`escalations.relay_key`).

The buttons are signed for the question's reply chain (the escalation is remembered as part of
it, so `clicking` checks them as any other); the draft and the decision are kept by the
coordinator, for `chat.escalations.ESCALATION_KEPT`, so whichever process takes the click knows them.
"""

from __future__ import annotations

import html
import json
import logging
from typing import Any

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden

from threadsage.bots.telegram.chains import ReplyChains, chain_key
from threadsage.bots.telegram.escalations import escalated_key, relay_key
from threadsage.bots.telegram.sending import Place, TelegramSender, answer_query
from threadsage.bots.tokens import Button, ButtonKind, Signer, session_digest
from threadsage.chat import ChatService, Reply, ReplyKind, turn_ref
from threadsage.chat.escalations import ESCALATION_KEPT
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import Language, say
from threadsage.settings.help_channels import TELEGRAM, HelpSettings

log = logging.getLogger(__name__)

POSTED, DISCARDED, ANSWERED, GONE = "posted", "discarded", "answered", "gone"  # what became of a draft
AGAIN = {DISCARDED: "tg_draft_discarded_already", GONE: "tg_draft_gone"}  # a later click is told (else: answered)


class TelegramReviewing:
    def __init__(
        self,
        settings: HelpSettings,
        chat: ChatService,
        send: TelegramSender,
        chains: ReplyChains,
        signer: Signer,
        coordinator: Coordinator,
    ) -> None:
        self.settings = settings  # which groups are the experts'
        self.chat = chat
        self.send = send
        self.chains = chains
        self.signer = signer
        self.coordinator = coordinator

    async def keep(self, question: Message, draft: Reply) -> InlineKeyboardMarkup:
        """The draft kept until an expert decides, and its two buttons (signed for the question's
        reply chain)."""
        kept = {"text": draft.text, "citations": list(draft.citations), "language": draft.language}
        await self.coordinator.remember(
            _draft_key(question.chat_id, question.message_id), json.dumps(kept), ESCALATION_KEPT
        )
        session = session_digest(chain_key(question.chat_id, question.message_id))
        ref = turn_ref(_turn_id(question.chat_id, question.message_id))

        def button(label: str, value: int) -> InlineKeyboardButton:
            return InlineKeyboardButton(
                label, callback_data=self.signer.sign(Button(ButtonKind.DRAFT, session, ref, value))
            )

        return InlineKeyboardMarkup(
            [[button(say("draft_post", draft.language), 1), button(say("draft_discard", draft.language), 0)]]
        )

    async def sent(self, question: Message, escalation: Message) -> None:
        """The escalation remembered as part of the question's reply chain: the session its buttons
        are checked against."""
        await self.chains.remember(chain_key(question.chat_id, question.message_id), [escalation])

    async def decide(self, query: CallbackQuery, escalation: Message, button: Button, language: Language) -> None:
        """An expert's click on a draft: posted as a reply to the question (once), or discarded.
        The callback query is answered once, whatever happens."""
        if f"{TELEGRAM}{escalation.chat_id}" not in self.settings.expert_channels():
            await answer_query(query, say("tg_draft_experts_only", language))
            return
        asked = await self._recalled(escalated_key(escalation.chat_id, escalation.message_id))
        draft = await self._recalled(_draft_key(asked["chat"], asked["message"])) if asked else None
        if asked is None or draft is None or button.ref != turn_ref(_turn_id(asked["chat"], asked["message"])):
            await answer_query(query, say("tg_invalid_button", language))
            return
        language = draft["language"]
        where = f"{escalation.chat_id}:{escalation.message_id}"
        if not await self.coordinator.claim(f"tg-draft-decided:{where}", ESCALATION_KEPT):
            outcome = await self.coordinator.recall(f"tg-draft-outcome:{where}")
            await answer_query(query, say(AGAIN.get(outcome or "", "draft_answered_already"), language))
            return
        if button.value:
            outcome, told = await self._post(asked, draft, escalation, query.from_user.id)
        else:
            outcome, told = DISCARDED, "tg_draft_discarded"
        await self.coordinator.remember(f"tg-draft-outcome:{where}", outcome, ESCALATION_KEPT)
        expert = query.from_user.full_name or query.from_user.username or str(query.from_user.id)
        shown = say(told, language, expert=expert)
        await answer_query(query, shown)
        await self._mark(escalation, shown)

    async def _post(
        self, asked: dict[str, Any], draft: dict[str, Any], escalation: Message, expert: int
    ) -> tuple[str, str]:
        """The draft as a reply to the question, as any answer — unless an expert's reply went
        first. What became of it, and the key of what to tell the expert."""
        if not await self.coordinator.claim(relay_key(escalation.chat_id, escalation.message_id), ESCALATION_KEPT):
            return ANSWERED, "draft_answered_already"
        reply = Reply(ReplyKind.ANSWER, draft["text"], tuple(draft["citations"]), language=draft["language"])
        place = Place(asked["chat"], False, None, asked["message"], strict=True)  # the question gone: not sent at all
        try:
            await self.send.answer(
                reply, place, chain_key(asked["chat"], asked["message"]), _turn_id(asked["chat"], asked["message"])
            )
        except (BadRequest, Forbidden) as exc:  # the question is gone (or the group, or the bot from it)
            log.warning("a draft could not be posted: %s", exc)
            return GONE, "tg_draft_gone"
        await self.chat.knowledge.expert_replied(f"telegram:{asked['chat']}:{asked['message']}", str(expert))
        return POSTED, "draft_posted"

    async def _recalled(self, key: str) -> dict[str, Any] | None:
        kept = await self.coordinator.recall(key)
        return json.loads(kept) if kept is not None else None

    async def _mark(self, escalation: Message, outcome: str) -> None:
        """The escalation without its buttons, saying what became of the draft (a courtesy: the
        decision stands if the edit fails)."""
        try:
            await escalation.edit_text(
                f"{escalation.text_html}\n\n<i>{html.escape(outcome)}</i>", parse_mode=ParseMode.HTML, reply_markup=None
            )
        except BadRequest as exc:
            log.warning("could not mark a draft's escalation: %s", exc.message)


def _turn_id(chat: int, message: int) -> str:
    """The id of the turn that answered a group's question (`bot._ask`): its buttons' reference."""
    return f"{chat}:{message}"


def _draft_key(chat: int, message: int) -> str:
    return f"tg-draft:{chat}:{message}"
