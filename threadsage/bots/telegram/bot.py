"""Telegram front-end: python-telegram-bot updates in, `Turn`s to the chat service, `Reply`s out
as HTML messages with inline keyboards.

Where it answers: in a private chat every text message is a question and the chat is the session;
in groups it answers when mentioned, when someone replies to one of its messages, or on `/ask`,
and the session is the reply chain (a reply to one of the bot's messages continues the session
that message belongs to). It replies to the asker's message and stays in the forum topic.

Long polling by default; with `TELEGRAM_WEBHOOK_URL` set, Telegram posts updates to
`/telegram/webhook` on the project's ASGI app instead. In one process, updates are processed
concurrently on one asyncio loop (the chat service serialises each session). With a turn queue,
the webhook of `threadsage serve` only queues each update (`dispatch`) and `threadsage worker`
processes it (`perform`); the updates of one chat stay in order.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from telegram import (
    Bot,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    MessageEntity,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatAction, ChatType, MessageLimit, ParseMode
from telegram.error import BadRequest, TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    Defaults,
    MessageHandler,
    filters,
)

from threadsage.bots.render import split_markdown, to_plain, to_telegram_html
from threadsage.bots.tokens import Button, ButtonKind, InvalidToken, Signer, load_secret, session_digest, turn_ref
from threadsage.chat import ACCEPTED, APOLOGY, ChatService, ClarificationAnswer, Reply, ReplyKind, Turn
from threadsage.config import Settings
from threadsage.memory.coordination import Coordinator, current_delivery
from threadsage.memory.outages import ServiceUnavailable
from threadsage.memory.sessions import session_key
from threadsage.memory.turn_queue import Job

log = logging.getLogger(__name__)

WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
PIECE_CHARS = MessageLimit.MAX_TEXT_LENGTH - 96  # Markdown per message; rendering never lengthens it
TYPING_EVERY = 4.5  # seconds; Telegram shows "typing…" for about 5 s
REMEMBERED_FOR = 30 * 24 * 3600.0  # seconds a bot message's session is known (reply chains)
ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY]
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")

INVALID_BUTTON = "This button is not valid."
THANKS = {1: "Thanks for the feedback! 👍", 0: "Thanks — noted. 👎"}
HINT_PRIVATE = "Tap an option, or just type your answer."
HINT_GROUP = "Tap an option, or reply to this message with your answer."
NEW_STARTED = "Started a new conversation — ask away."
NEW_IN_GROUP = "In a group every new mention starts a fresh conversation; reply to one of my messages to continue one."
START = (
    "Hi! I answer questions from your organisation's documents, with sources. "
    "Just type a question. /help shows what else I can do."
)
HELP = """Ask me a question about the documents and I answer with sources.
• Here in a private chat, just type. /new starts a fresh conversation.
• In a group, mention me (@{username}), use /ask <question>, or reply to one of my messages to follow up.
• When a question is ambiguous I ask back: tap an option or answer in your own words.
• 👍/👎 under an answer tell the maintainers whether it helped."""


class TelegramConfigError(ValueError):
    """The Telegram settings cannot work; the message says which variable to fix."""


@dataclass(frozen=True)
class Place:
    """Where a reply goes: the chat, the forum topic, and (in groups) the message it quotes."""

    chat_id: int
    private: bool
    topic: int | None = None
    quote: int | None = None

    def send_kwargs(self) -> dict[str, Any]:
        reply = ReplyParameters(self.quote, allow_sending_without_reply=True) if self.quote else None
        return {"message_thread_id": self.topic, "reply_parameters": reply}


class _FromPerson(filters.MessageFilter):
    """Messages written by a person: other bots (and anonymous admins) are ignored."""

    def filter(self, message: Message) -> bool:
        return message.from_user is not None and not message.from_user.is_bot


class TelegramWebhook:
    """The receiving end of Telegram's webhook: checks the secret, parses the update, hands it to
    `dispatch` and answers at once. `threadsage serve` runs only this (dispatch = the turn
    queue); a bot in one process dispatches to its own application."""

    def __init__(self, settings: Settings, dispatch: Callable[[Job], Awaitable[None]]) -> None:
        secret = _webhook_secret(settings)
        if secret is None or settings.telegram_webhook_url is None:
            raise TelegramConfigError("the webhook needs TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET")
        self.url = settings.telegram_webhook_url
        self.dispatch = dispatch
        self._secret = secret

    async def register(self, bot: Bot) -> None:
        """Tell Telegram where to post updates (setWebhook), with the secret it must send."""
        await bot.set_webhook(self.url, secret_token=self._secret, allowed_updates=ALLOWED_UPDATES)

    def route(self) -> Route:
        return Route(WEBHOOK_PATH, self._receive, methods=["POST"])

    async def _receive(self, request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self._secret.encode()):
            return Response(status_code=403)
        try:
            data = await request.json()
            update = Update.de_json(data, None) if isinstance(data, dict) else None
        except (ValueError, KeyError, TypeError):
            update = None
        if update is None:
            return Response(status_code=400)
        chat = update.effective_chat.id if update.effective_chat else "-"
        await self.dispatch(Job("telegram", "update", data, order_key=f"telegram:{chat}"))
        return Response(status_code=200)


class TelegramBot:
    """One bot: a PTB `Application` wired to a `ChatService`. Start and stop it with
    `async with TelegramBot(...)` (or `start()` / `stop()`); the loop stays ours.

    A worker of the turn queue passes `receive=False` (no polling, no webhook) and feeds the
    queued updates to `perform`."""

    def __init__(
        self,
        settings: Settings,
        chat: ChatService,
        coordinator: Coordinator,
        signer: Signer | None = None,
        receive: bool = True,
    ) -> None:
        if settings.telegram_bot_token is None:
            raise TelegramConfigError("TELEGRAM_BOT_TOKEN is not set (get one from @BotFather)")
        self.settings = settings
        self.chat = chat
        self.coordinator = coordinator
        self.signer = signer or Signer(load_secret(settings))
        # A private conversation idle this long starts afresh.
        self.idle_after = timedelta(hours=settings.telegram_idle_hours)
        self.webhook_url = settings.telegram_webhook_url
        self.receive = receive
        self.app = build_application(settings, polling=receive and not self.webhook_url)
        self.webhook = TelegramWebhook(settings, self._process_here) if self.webhook_url else None
        self._outages: dict[int, ServiceUnavailable] = {}  # update id → outage, for `perform`
        self._add_handlers()

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """getMe, then the update loop; registers the webhook or starts long polling."""
        await self.app.initialize()
        await self.app.start()
        if not self.receive:
            log.info("telegram bot @%s started (updates from the turn queue)", self.app.bot.username)
            return
        if self.webhook is not None:
            await self.webhook.register(self.app.bot)
        else:
            assert self.app.updater is not None
            await self.app.updater.start_polling(allowed_updates=ALLOWED_UPDATES)
        log.info("telegram bot @%s started (%s)", self.app.bot.username, "webhook" if self.webhook_url else "polling")

    async def stop(self) -> None:
        """Stop fetching, finish the updates in flight, close the HTTP clients."""
        if self.app.updater is not None and self.app.updater.running:
            await self.app.updater.stop()
        if self.app.running:
            await self.app.stop()
        await self.app.shutdown()

    async def __aenter__(self) -> TelegramBot:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    async def ready(self) -> bool:
        return self.app.running

    # --- webhook ---------------------------------------------------------------------------

    def webhook_route(self) -> Route:
        if self.webhook is None:
            raise TelegramConfigError("the webhook route needs TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET")
        return self.webhook.route()

    async def _process_here(self, job: Job) -> None:
        await self.app.update_queue.put(Update.de_json(job.payload, self.app.bot))

    async def perform(self, job: Job) -> None:
        """Process one queued update; an outage propagates so that the queue retries it."""
        update = Update.de_json(job.payload, self.app.bot)
        await self.app.process_update(update)
        outage = self._outages.pop(update.update_id, None)
        if outage is not None:
            raise outage

    async def give_up(self, job: Job) -> None:
        """The apology for an update no worker could finish (each that tried died)."""
        update = Update.de_json(job.payload, self.app.bot)
        message = update.effective_message
        if not isinstance(message, Message):
            return
        place = _place_after_click(message) if update.callback_query is not None else _place_of(message)
        with suppress(TelegramError):
            await self._send_plain(place, APOLOGY)

    # --- handlers --------------------------------------------------------------------------

    def _add_handlers(self) -> None:
        people = filters.UpdateType.MESSAGE & _FromPerson()  # new messages only: edits are ignored
        private, groups = filters.ChatType.PRIVATE, filters.ChatType.GROUPS
        self.app.add_handlers(
            [
                CommandHandler("start", self._on_start, filters=people),
                CommandHandler("help", self._on_help, filters=people),
                CommandHandler("new", self._on_new, filters=people),
                CommandHandler("ask", self._on_ask, filters=people),
                MessageHandler(people & private & filters.TEXT & ~filters.COMMAND, self._on_private_text),
                MessageHandler(people & private & filters.COMMAND, self._on_help),  # unknown commands
                MessageHandler(people & groups & filters.TEXT & ~filters.COMMAND, self._on_group_text),
                CallbackQueryHandler(self._on_click),
            ]
        )
        self.app.add_error_handler(self._on_error)

    async def _on_start(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self._send_plain(_place_of(update.message), START)

    async def _on_help(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self._send_plain(_place_of(update.message), HELP.format(username=self.app.bot.username))

    async def _on_new(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None
        if message.chat.type != ChatType.PRIVATE:
            await self._send_plain(_place_of(message), NEW_IN_GROUP)
            return
        await self.chat.reset(_private_key(message.chat_id), "telegram")
        await self._send_plain(_place_of(message), NEW_STARTED)

    async def _on_ask(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None
        if message.chat.type == ChatType.PRIVATE:
            await self._ask_in_private(message, self._question_text(message))
        else:
            await self._ask(message, await self._group_session(message), self._question_text(message))

    async def _on_private_text(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self._ask_in_private(update.message, update.message.text or "")

    async def _on_group_text(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        """Only messages addressed to the bot: a mention or a reply to one of its messages."""
        message = update.message
        assert message is not None
        if self._replies_to_me(message) or self._mentions_me(message):
            await self._ask(message, await self._group_session(message), self._question_text(message))

    async def _on_click(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        """The callback query is answered exactly once, before any slow work; what the toast says
        is decided first (an invalid button, or a click the chat service would refuse)."""
        query = update.callback_query
        assert query is not None
        message = query.message
        if not isinstance(message, Message):  # gone (InaccessibleMessage) or an inline message
            await _answer_query(query, INVALID_BUTTON)
            return
        key = await self._session_of_bot_message(message)
        try:
            button = self.signer.verify(query.data or "", key)
        except InvalidToken as exc:
            log.info("rejected callback data in chat %s: %s", message.chat_id, exc)
            await _answer_query(query, INVALID_BUTTON)
            return
        if button.kind is ButtonKind.FEEDBACK:
            await _answer_query(query, THANKS[1 if button.value else 0])
            await self.chat.record_feedback(key, button.ref, str(query.from_user.id), 1 if button.value else -1)
        else:
            await self._choose(query, message, key, button)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Never silent: whatever failed, the person gets a short apology (best effort) — unless a
        service is briefly away and the queue will retry the update (see `perform`)."""
        if isinstance(context.error, ServiceUnavailable) and isinstance(update, Update):
            self._outages[update.update_id] = context.error
            return
        log.error("telegram update failed", exc_info=context.error)
        if not isinstance(update, Update) or not isinstance(update.effective_message, Message):
            return
        if update.callback_query is not None:
            await _answer_query(update.callback_query, None)
            place = _place_after_click(update.effective_message)
        else:
            place = _place_of(update.effective_message)
        with suppress(TelegramError):
            await self._send_plain(place, APOLOGY)

    # --- questions -------------------------------------------------------------------------

    async def _ask_in_private(self, message: Message, text: str) -> None:
        key = _private_key(message.chat_id)
        if await self._idle_too_long(key):
            await self.chat.reset(key, "telegram")
        await self._ask(message, key, text)

    async def _ask(self, message: Message, key: str, text: str) -> None:
        assert message.from_user is not None
        channel = "" if message.chat.type == ChatType.PRIVATE else str(message.chat_id)
        turn = Turn(
            "telegram",
            key,
            str(message.from_user.id),
            f"{message.chat_id}:{message.message_id}",
            text=text,
            categories=self.settings.categories_for(channel),
        )
        log.info("question in %s chat %s", message.chat.type, message.chat_id)  # ids for THREADSAGE_CHANNEL_CATEGORIES
        place = _place_of(message)
        async with self._typing(place):
            replies = await self.chat.handle(turn)
        await self._deliver(replies, place, key, turn.message_id)

    async def _choose(self, query: CallbackQuery, message: Message, key: str, button: Button) -> None:
        """A clarification option. The callback query is answered once: with the refusal as a
        toast, or, as soon as the click is accepted, silently — then the choice is shown and the
        answer follows."""
        turn = Turn("telegram", key, str(query.from_user.id), query.id, answer=ClarificationAnswer(button.ref, button.value))
        place = _place_after_click(message)
        replies: list[Reply] = []
        answered = False
        async with AsyncExitStack() as stack:
            async for event in self.chat.stream(turn):
                if event is ACCEPTED:
                    answered = True
                    await _answer_query(query, None)
                    await self._show_choice(query, message)
                    await stack.enter_async_context(self._typing(place))
                elif isinstance(event, Reply) and not answered and event.kind is ReplyKind.NOTICE:
                    answered = True
                    await _answer_query(query, event.text)
                elif isinstance(event, Reply):
                    replies.append(event)
        if not answered:  # a repeat delivery: nothing to say, but the query must be answered
            await _answer_query(query, None)
        await self._deliver(replies, place, key, turn.message_id)

    async def _show_choice(self, query: CallbackQuery, message: Message) -> None:
        """Edit the clarification: the hint gives way to the choice, and the keyboard goes."""
        rows = message.reply_markup.inline_keyboard if message.reply_markup else ()
        label = next((b.text for row in rows for b in row if b.callback_data == query.data), "")
        prompt = message.text_html.rpartition("\n\n")[0] or message.text_html
        try:
            await query.edit_message_text(f"{prompt}\n\n✅ <b>{html.escape(label)}</b>", parse_mode=ParseMode.HTML)
        except BadRequest as exc:  # e.g. too old to edit: the answer matters more
            log.warning("could not edit the clarification message: %s", exc.message)

    async def _idle_too_long(self, key: str) -> bool:
        """Whether the session's last activity (its latest checkpoint, so this survives restarts)
        is older than `idle_after`."""
        last = await self.chat.last_activity(key)
        return last is not None and datetime.now(UTC) - last > self.idle_after

    # --- sessions --------------------------------------------------------------------------

    async def _group_session(self, message: Message) -> str:
        """A reply to the bot continues that message's session; anything else starts a chain."""
        replied = message.reply_to_message
        if replied is not None and self._replies_to_me(message):
            return await self._session_of_bot_message(replied)
        return _chain_key(message.chat_id, message.message_id)

    async def _session_of_bot_message(self, message: Message) -> str:
        """The session a bot message belongs to, as recorded when it was sent (shared by every
        process through the coordinator). Unknown — forgotten, or sent without a coordinator
        that outlives the process — the chain is taken to start at the question the message
        quotes (true for a first question)."""
        if message.chat.type == ChatType.PRIVATE:
            return _private_key(message.chat_id)
        known = await self.coordinator.recall(f"telegram-message:{message.chat_id}:{message.message_id}")
        if known is not None:
            return known
        root = message.reply_to_message.message_id if message.reply_to_message else message.message_id
        return _chain_key(message.chat_id, root)

    async def _remember(self, key: str, sent: Sequence[Message]) -> None:
        for message in sent:
            if message.chat.type != ChatType.PRIVATE:
                await self.coordinator.remember(f"telegram-message:{message.chat_id}:{message.message_id}", key, REMEMBERED_FOR)

    def _replies_to_me(self, message: Message) -> bool:
        replied = message.reply_to_message
        return replied is not None and replied.from_user is not None and replied.from_user.id == self.app.bot.id

    def _mentions_me(self, message: Message) -> bool:
        me = f"@{self.app.bot.username}".lower()
        for entity, text in message.parse_entities([MessageEntity.MENTION, MessageEntity.TEXT_MENTION]).items():
            if text.lower() == me or (entity.user is not None and entity.user.id == self.app.bot.id):
                return True
        return False

    def _question_text(self, message: Message) -> str:
        """The message without the bot's @mention or the leading /ask command."""
        me = f"@{self.app.bot.username}".lower()
        entities = message.parse_entities([MessageEntity.MENTION, MessageEntity.BOT_COMMAND])
        drop = [
            entity
            for entity, value in entities.items()
            if value.lower() == me or (entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0)
        ]
        text = (message.text or "").encode("utf-16-le")  # entity offsets count UTF-16 code units
        for entity in sorted(drop, key=lambda e: -e.offset):
            text = text[: entity.offset * 2] + b" \x00" + text[(entity.offset + entity.length) * 2 :]
        return " ".join(text.decode("utf-16-le").split())

    # --- replies ---------------------------------------------------------------------------

    async def _deliver(self, replies: list[Reply], place: Place, key: str, turn_id: str) -> None:
        for n, reply in enumerate(replies):
            if not await self._first_sending(turn_id, n):
                continue
            if reply.kind is ReplyKind.ANSWER:
                keyboard = self._feedback_keyboard(key, turn_id)
                sent = await self._send_markdown(place, answer_markdown(reply), keyboard)
            elif reply.kind is ReplyKind.CLARIFICATION:
                markdown = f"{reply.text}\n\n_{HINT_PRIVATE if place.private else HINT_GROUP}_"
                sent = await self._send_markdown(place, markdown, self._choices_keyboard(key, reply))
            else:
                sent = [await self._send_plain(place, reply.text)]
            await self._remember(key, sent)

    async def _first_sending(self, turn_id: str, n: int) -> bool:
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
        await self.coordinator.remember(key, "1", 24 * 3600.0)
        return True

    async def _send_markdown(self, place: Place, markdown: str, keyboard: InlineKeyboardMarkup) -> list[Message]:
        """As HTML, split to Telegram's limit; the keyboard goes under the last piece."""
        pieces = split_markdown(markdown, PIECE_CHARS)
        sent = []
        for i, piece in enumerate(pieces):
            markup = keyboard if i == len(pieces) - 1 else None
            kwargs = {"reply_markup": markup, **place.send_kwargs()}
            try:
                message = await self.app.bot.send_message(
                    place.chat_id, to_telegram_html(piece), parse_mode=ParseMode.HTML, **kwargs
                )
            except BadRequest as exc:
                if "can't parse entities" not in exc.message.lower():
                    raise
                log.warning("Telegram rejected the formatting (%s); sending plain text", exc.message)
                message = await self.app.bot.send_message(place.chat_id, to_plain(piece), **kwargs)
            sent.append(message)
        return sent

    async def _send_plain(self, place: Place, text: str) -> Message:
        return await self.app.bot.send_message(place.chat_id, text, **place.send_kwargs())

    def _choices_keyboard(self, key: str, reply: Reply) -> InlineKeyboardMarkup:
        """One option per row; each button's data names the session, the interrupt and the option."""
        assert reply.interrupt_id is not None
        return InlineKeyboardMarkup(
            [
                [InlineKeyboardButton(c.label, callback_data=self._token(ButtonKind.CLARIFY, key, reply.interrupt_id, int(c.id)))]
                for c in reply.choices
            ]
        )

    def _feedback_keyboard(self, key: str, turn_id: str) -> InlineKeyboardMarkup:
        ref = turn_ref(turn_id)
        return InlineKeyboardMarkup(
            [
                [
                    InlineKeyboardButton("👍", callback_data=self._token(ButtonKind.FEEDBACK, key, ref, 1)),
                    InlineKeyboardButton("👎", callback_data=self._token(ButtonKind.FEEDBACK, key, ref, 0)),
                ]
            ]
        )

    def _token(self, kind: ButtonKind, key: str, ref: str, value: int) -> str:
        return self.signer.sign(Button(kind, session_digest(key), ref, value))

    @asynccontextmanager
    async def _typing(self, place: Place) -> AsyncIterator[None]:
        """Show "typing…" while the body runs, renewed before Telegram hides it; failures don't matter."""

        async def keep_typing() -> None:
            while True:
                with suppress(TelegramError):
                    await self.app.bot.send_chat_action(place.chat_id, ChatAction.TYPING, message_thread_id=place.topic)
                await asyncio.sleep(TYPING_EVERY)

        task = asyncio.create_task(keep_typing(), name=f"typing:{place.chat_id}")
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task


def answer_markdown(reply: Reply) -> str:
    """The answer, a low-confidence note when due, and the sources (a link for web sources)."""
    parts = [reply.text]
    if reply.low_confidence:
        parts.append("_(low confidence: the documents may not fully answer this)_")
    if reply.citations:
        lines = ["**Sources**"]
        for c in reply.citations:
            name = " › ".join(p for p in (c["title"], c["heading"]) if p) or c["path"]
            if c["source"].startswith(("http://", "https://")):
                lines.append(f"[{c['number']}] [{name}]({c['source']})")
            else:
                lines.append(f"[{c['number']}] {name} — `{c['path']}`")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _private_key(chat_id: int) -> str:
    return session_key("telegram", "-", str(chat_id))


def _chain_key(chat_id: int, root_message_id: int) -> str:
    return session_key("telegram", "-", str(chat_id), str(root_message_id))


def _place_of(message: Message) -> Place:
    """Replies to a person's message: quoted in groups, in the same forum topic."""
    private = message.chat.type == ChatType.PRIVATE
    topic = message.message_thread_id if message.is_topic_message else None
    return Place(message.chat_id, private, topic, None if private else message.message_id)


def _place_after_click(clarification: Message) -> Place:
    """After a click the answer quotes the question the clarification asked about."""
    place = _place_of(clarification)
    if place.private or clarification.reply_to_message is None:
        return place
    return Place(place.chat_id, False, place.topic, clarification.reply_to_message.message_id)


async def _answer_query(query: CallbackQuery, text: str | None) -> None:
    """A query too old to answer (the bot was down) must not stop the click from working."""
    try:
        await query.answer(text)
    except BadRequest as exc:
        log.warning("could not answer callback query %s: %s", query.id, exc.message)


def _webhook_secret(settings: Settings) -> str | None:
    if not settings.telegram_webhook_url:
        return None
    if settings.telegram_webhook_secret is None:
        raise TelegramConfigError("TELEGRAM_WEBHOOK_URL is set but TELEGRAM_WEBHOOK_SECRET is not: set a random secret")
    secret = settings.telegram_webhook_secret.get_secret_value()
    if not _WEBHOOK_SECRET.fullmatch(secret):
        raise TelegramConfigError("TELEGRAM_WEBHOOK_SECRET must be 1–256 characters of A–Z, a–z, 0–9, _ and -")
    return secret


def build_application(settings: Settings, polling: bool) -> Application:
    assert settings.telegram_bot_token is not None
    builder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token.get_secret_value())
        .rate_limiter(AIORateLimiter(max_retries=3))
        .concurrent_updates(True)
        .defaults(Defaults(link_preview_options=LinkPreviewOptions(is_disabled=True)))
    )
    if settings.telegram_api_url:
        api = settings.telegram_api_url.rstrip("/")
        builder = builder.base_url(f"{api}/bot").base_file_url(f"{api}/file/bot")
    if not polling:
        builder = builder.updater(None)
    return builder.build()
