"""Everything the Telegram bot sends: replies as HTML pieces within Telegram's limit, inline
keyboards of signed buttons, "typing…" while a turn runs, the edited clarification and the
answers to callback queries."""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

from telegram import Bot, CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message, ReplyParameters
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import BadRequest, TelegramError

from threadsage.bots.pacing import NotNow, optional
from threadsage.bots.render import to_telegram_messages
from threadsage.bots.replies import handoff_markdown, source_markdown, verifiable
from threadsage.bots.telegram.chains import ReplyChains
from threadsage.bots.tokens import Button, ButtonKind, Signer, session_digest
from threadsage.chat import Choice, Reply, ReplyKind, turn_ref
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.current import current_delivery
from threadsage.i18n import Language, say

log = logging.getLogger(__name__)

TYPING_EVERY = 4.5  # seconds; Telegram shows "typing…" for about 5 s
SENT_FOR = 24 * 3600.0  # seconds a sent reply is remembered, against sending it twice


@dataclass(frozen=True)
class Place:
    """Where a reply goes: the chat, the forum topic, and (in groups) the message it quotes."""

    chat_id: int
    private: bool
    topic: int | None = None
    quote: int | None = None
    strict: bool = False  # only as a reply to `quote` (which then decides the forum topic), never without

    def send_kwargs(self) -> dict[str, Any]:
        reply = ReplyParameters(self.quote, allow_sending_without_reply=not self.strict) if self.quote else None
        return {"message_thread_id": self.topic, "reply_parameters": reply}


def place_of(message: Message) -> Place:
    """Replies to a person's message: quoted in groups, in the same forum topic."""
    private = message.chat.type == ChatType.PRIVATE
    topic = message.message_thread_id if message.is_topic_message else None
    return Place(message.chat_id, private, topic, None if private else message.message_id)


def place_after_click(clarification: Message) -> Place:
    """After a click the answer quotes the question the clarification asked about."""
    place = place_of(clarification)
    if place.private or clarification.reply_to_message is None:
        return place
    return Place(place.chat_id, False, place.topic, clarification.reply_to_message.message_id)


class TelegramSender:
    def __init__(
        self, bot: Bot, signer: Signer, coordinator: Coordinator, chains: ReplyChains, escalate: bool = False
    ) -> None:
        self.bot = bot
        self.signer = signer
        self.coordinator = coordinator
        self.escalate = escalate  # experts to reach: group answers carry "Still need help?" (`help`)
        self.chains = chains

    async def deliver(
        self,
        replies: list[Reply],
        place: Place,
        key: str,
        turn_id: str,
        curator: bool = False,
        replacing: Message | None = None,
    ) -> None:
        """A turn's replies, each remembered as part of the session `key` (for reply chains); the
        first answer in place of `replacing` (the words its drafts showed in a group), if any.
        `curator`: the answer also offers "Save as verified answer" (only where no one else sees it)."""
        for n, reply in enumerate(replies):
            if not await self.first_sending(turn_id, n):
                continue
            if reply.kind is ReplyKind.ANSWER:
                await self.answer(reply, place, key, turn_id, curator, replacing)
                replacing = None
                continue
            if reply.kind is ReplyKind.CLARIFICATION:
                hint = say("tg_hint_private" if place.private else "tg_hint_group", reply.language)
                markdown = f"{reply.text}\n\n_{hint}_"
                sent = await self.send_markdown(place, markdown, self._choices_keyboard(key, reply))
            else:
                sent = [await self.send_plain(place, reply.text)]
            await self.chains.remember(key, sent)

    async def answer(
        self,
        reply: Reply,
        place: Place,
        key: str,
        turn_id: str,
        curator: bool = False,
        replacing: Message | None = None,
    ) -> list[Message]:
        """One answer of the turn `turn_id` as every answer goes out — its sources, 👍/👎, in a group
        "Still need help?" — remembered as part of the session `key` (`deliver`, and a draft an
        expert posts as is, `reviewing`)."""
        verify = reply.language if curator and verifiable(reply) else None
        escalate = reply.language if self.escalate and not place.private else None
        keyboard = self._feedback_keyboard(key, turn_id, verify, escalate)
        sent = await self.send_markdown(place, answer_markdown(reply), keyboard, replacing)
        await self.chains.remember(key, sent)
        return sent

    async def first_sending(self, turn_id: str, n: int) -> bool:
        """Record reply `n` of a turn as sent before sending it: a turn redelivered after its
        worker died (possibly between sending and acknowledging) never sends it twice. Telegram
        cannot be asked what was sent, so a worker dying between this record and the send loses
        that reply — a window of one HTTP request. Outside the queue nothing is redelivered."""
        if current_delivery.get() is None:
            return True
        key = f"telegram-sent:{turn_id}:{n}"
        if await self.coordinator.recall(key) is not None:
            log.info("reply %d of %s was already sent", n, turn_id)
            return False
        await self.coordinator.remember(key, "1", SENT_FOR)
        return True

    async def send_markdown(
        self, place: Place, markdown: str, keyboard: InlineKeyboardMarkup | None, replacing: Message | None = None
    ) -> list[Message]:
        """As HTML, split to Telegram's limit; the keyboard goes under the last piece. The first
        piece edits `replacing` into itself, when given."""
        pieces = to_telegram_messages(markdown)
        sent = []
        for i, piece in enumerate(pieces):
            markup = keyboard if i == len(pieces) - 1 else None
            editing = replacing if i == 0 else None
            try:
                message = await self._put(place, piece.html, markup, editing, ParseMode.HTML)
            except BadRequest as exc:
                if "can't parse entities" not in exc.message.lower():
                    raise
                log.warning("Telegram rejected the formatting (%s); sending plain text", exc.message)
                message = await self._put(place, piece.text, markup, editing, None)
            sent.append(message)
        return sent

    async def _put(
        self,
        place: Place,
        text: str,
        markup: InlineKeyboardMarkup | None,
        editing: Message | None,
        parse_mode: str | None,
    ) -> Message:
        """A message sent, or `editing` edited into it (a text edit keeps the message's place)."""
        if editing is None:
            return await self.bot.send_message(
                place.chat_id, text, parse_mode=parse_mode, reply_markup=markup, **place.send_kwargs()
            )
        edited = await editing.edit_text(text, parse_mode=parse_mode, reply_markup=markup)
        return edited if isinstance(edited, Message) else editing

    async def send_plain(self, place: Place, text: str) -> Message:
        return await self.bot.send_message(place.chat_id, text, **place.send_kwargs())

    async def show_choice(self, query: CallbackQuery, message: Message) -> None:
        """Edit the clarification: the hint gives way to the choice, and the keyboard goes."""
        rows = message.reply_markup.inline_keyboard if message.reply_markup else ()
        label = next((b.text for row in rows for b in row if b.callback_data == query.data), "")
        prompt = message.text_html.rpartition("\n\n")[0] or message.text_html
        try:
            await query.edit_message_text(f"{prompt}\n\n✅ <b>{html.escape(label)}</b>", parse_mode=ParseMode.HTML)
        except BadRequest as exc:  # e.g. too old to edit: the answer matters more
            log.warning("could not edit the clarification message: %s", exc.message)

    @asynccontextmanager
    async def typing(self, place: Place) -> AsyncIterator[None]:
        """Show "typing…" while the body runs, renewed before Telegram hides it; failures don't matter."""

        async def keep_typing() -> None:
            while True:
                with suppress(TelegramError, NotNow), optional():  # a courtesy: never before a reply
                    await self.bot.send_chat_action(place.chat_id, ChatAction.TYPING, message_thread_id=place.topic)
                await asyncio.sleep(TYPING_EVERY)

        task = asyncio.create_task(keep_typing(), name=f"typing:{place.chat_id}")
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    def _choices_keyboard(self, key: str, reply: Reply) -> InlineKeyboardMarkup:
        """One option per row; each button's data names the session, the interrupt and the option."""
        assert reply.interrupt_id is not None
        ref = reply.interrupt_id

        def row(choice: Choice) -> list[InlineKeyboardButton]:
            data = self._token(ButtonKind.CLARIFY, key, ref, int(choice.id))
            return [InlineKeyboardButton(choice.label, callback_data=data)]

        return InlineKeyboardMarkup([row(c) for c in reply.choices])

    def _feedback_keyboard(
        self, key: str, turn_id: str, verify: Language | None = None, escalate: Language | None = None
    ) -> InlineKeyboardMarkup:
        """👍/👎; with `verify` (the answer's language) a curator's "Save as verified answer"; with
        `escalate`, "Still need help?" (the question to the experts, `help`)."""
        ref = turn_ref(turn_id)
        up = InlineKeyboardButton("👍", callback_data=self._token(ButtonKind.FEEDBACK, key, ref, 1))
        down = InlineKeyboardButton("👎", callback_data=self._token(ButtonKind.FEEDBACK, key, ref, 0))
        rows = [[up, down]]
        if verify is not None:
            token = self._token(ButtonKind.VERIFY, key, ref, 1)
            rows.append([InlineKeyboardButton(f"✅ {say('verify_button', verify)}", callback_data=token)])
        if escalate is not None:
            token = self._token(ButtonKind.ESCALATE, key, ref, 0)
            rows.append([InlineKeyboardButton(say("escalate_button", escalate), callback_data=token)])
        return InlineKeyboardMarkup(rows)

    def _token(self, kind: ButtonKind, key: str, ref: str, value: int) -> str:
        return self.signer.sign(Button(kind, session_digest(key), ref, value))


async def answer_query(query: CallbackQuery, text: str | None) -> None:
    """A query too old to answer (the bot was down) must not stop the click from working."""
    try:
        await query.answer(text)
    except BadRequest as exc:
        log.warning("could not answer callback query %s: %s", query.id, exc.message)


def answer_markdown(reply: Reply) -> str:
    """The answer, whom to ask when the documents don't know, the low-confidence note when due,
    and the sources."""
    parts = [reply.text, handoff_markdown(reply)] if reply.handoff else [reply.text]
    if reply.low_confidence:
        parts.append(f"_{say('low_confidence', reply.language)}_")
    if reply.citations:
        label = f"**{say('sources', reply.language)}**"
        parts.append("\n".join([label, *(source_markdown(c) for c in reply.citations)]))
    return "\n\n".join(parts)
