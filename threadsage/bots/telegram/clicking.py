"""The bot's buttons in Telegram (`Clicks`): a clarification option, 👍/👎 (a 👎 on an answer whose
document changed asks its question again), a curator's "Save as verified answer", and the experts'
loop's ("Still need help?", an expert's "Save as verified answer", a draft's "Post as is" and
"Discard": `help`, `reviewing`). The callback query is answered exactly once. A clicked option's
turn (`ClickShown`): the query answered with the refusal as a toast, or silently as soon as the
click is accepted, when the choice is shown in place of the options and "typing…" starts — then
the answer's drafts and its replies."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack

from telegram import CallbackQuery, Message, Update
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from threadsage.bots.replies import place_categories
from threadsage.bots.telegram.chains import ReplyChains
from threadsage.bots.telegram.drafting import Drafts
from threadsage.bots.telegram.help import TelegramHelp
from threadsage.bots.telegram.sending import Place, TelegramSender, answer_query, place_after_click
from threadsage.bots.telegram.texts import message_language
from threadsage.bots.tokens import Button, ButtonKind, InvalidToken, Signer
from threadsage.chat import ChatService, ClarificationAnswer, Reply, ReplyKind, Turn, run_shown
from threadsage.i18n import Language, say
from threadsage.settings.knowledge_loop import KnowledgeLoopSettings
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)
Context = ContextTypes.DEFAULT_TYPE


class ClickShown(Drafts):
    """The display of one click's turn (`chat.showing.Display`); `answered`: whether the query
    has been answered (a repeat delivery answers it silently at the end)."""

    def __init__(
        self,
        send: TelegramSender,
        query: CallbackQuery,
        message: Message,
        place: Place,
        turn_id: str,
        stack: AsyncExitStack,
    ) -> None:
        super().__init__(send.bot, place, turn_id)
        self.send = send
        self.query = query
        self.clicked_on = message
        self.stack = stack  # holds "typing…" until the turn's replies are sent
        self.answered = False

    async def accepted(self) -> None:
        self.answered = True
        await answer_query(self.query, None)
        await self.send.show_choice(self.query, self.clicked_on)
        await self.stack.enter_async_context(self.send.typing(self.place))

    async def refused(self, reply: Reply) -> bool:
        if self.answered or reply.kind is not ReplyKind.NOTICE:
            return False
        self.answered = True
        await answer_query(self.query, reply.text)
        return True


class Clicks:
    def __init__(
        self,
        access: AccessSettings,
        curators: KnowledgeLoopSettings,
        chat: ChatService,
        send: TelegramSender,
        chains: ReplyChains,
        signer: Signer,
        help: TelegramHelp,
    ) -> None:
        self.help = help  # an expert's "Save as verified answer"; "Still need help?"; a draft's review
        self.access = access
        self.curators = curators
        self.chat = chat
        self.send = send
        self.chains = chains
        self.signer = signer

    async def on_click(self, update: Update, _context: Context) -> None:
        """The callback query is answered exactly once, before any slow work; what the toast says
        is decided first (an invalid button, or a click the chat service would refuse)."""
        query = update.callback_query
        assert query is not None
        message = query.message
        language = message_language(message if isinstance(message, Message) else None, query.from_user)
        invalid = say("tg_invalid_button", language)
        if not isinstance(message, Message):  # gone (InaccessibleMessage) or an inline message
            await answer_query(query, invalid)
            return
        key = await self.chains.session_of_bot_message(message)
        try:
            button = self.signer.verify(query.data or "", key)
        except InvalidToken as exc:
            log.info("rejected callback data in chat %s: %s", message.chat_id, exc)
            await answer_query(query, invalid)
            return
        if button.kind is ButtonKind.FEEDBACK:
            await answer_query(query, say("tg_thanks_up" if button.value else "tg_thanks_down", language))
            await self.chat.record_feedback(key, button.ref, str(query.from_user.id), 1 if button.value else -1)
            if not button.value:
                await self._again_if_stale(query, message, key, button.ref)
        elif button.kind is ButtonKind.VERIFY:
            await self._save_verified(query, key, button.ref, language)
        elif button.kind is ButtonKind.EXPERT:
            await self.help.save(query, button, language)
        elif button.kind is ButtonKind.ESCALATE:
            await self.help.escalate_click(query, message, language)
        elif button.kind is ButtonKind.DRAFT:
            await self.help.reviewing.decide(query, message, button, language)
        else:
            await self._choose(query, message, key, button)

    async def _choose(self, query: CallbackQuery, message: Message, key: str, button: Button) -> None:
        """A clarification option (see `clicking`): the callback query answered once, then the
        choice shown and the answer."""
        answer = ClarificationAnswer(button.ref, button.value)
        language = message_language(message, query.from_user)
        turn = Turn("telegram", key, str(query.from_user.id), query.id, answer=answer, language=language)
        place = place_after_click(message)
        async with AsyncExitStack() as stack:
            shown = ClickShown(self.send, query, message, place, turn.message_id, stack)
            replies = await run_shown(self.chat, turn, shown)
        if not shown.answered:  # a repeat delivery: nothing to say, but the query must be answered
            await answer_query(query, None)
        await self.send.deliver(replies, place, key, turn.message_id, replacing=await shown.finish())

    async def _again_if_stale(self, query: CallbackQuery, message: Message, key: str, ref: str) -> None:
        """A 👎 on an answer whose document changed since: its question asked again in the
        thread, answered from the new version (once, however many 👎)."""
        question = await self.chat.knowledge.stale_question(key, ref)
        if question is None:
            return
        categories = place_categories(self.access, str(message.chat_id), message.chat.type == ChatType.PRIVATE)
        language = message_language(message, query.from_user)
        turn = Turn(
            "telegram", key, str(query.from_user.id), f"again-{ref}", question, categories=categories, language=language
        )
        place = place_after_click(message)
        async with self.send.typing(place):
            replies = await self.chat.handle(turn)
        await self.send.deliver(replies, place, key, turn.message_id)

    async def _save_verified(self, query: CallbackQuery, key: str, ref: str, language: Language) -> None:
        """A curator's "Save as verified answer"; anyone else's click (a forged one: the button
        shows only to curators) is refused. The toast says what became of it."""
        user = query.from_user
        if not self.curators.is_curator("telegram", str(user.id)):
            log.warning("telegram user %s is not a curator: verified answer refused", user.id)
            await answer_query(query, say("verify_not_curator", language))
            return
        by = user.full_name or user.username or str(user.id)
        outcome = await self.chat.knowledge.save_verified(key, ref, by)
        await answer_query(query, say(f"verify_{outcome}", language, who=by))
