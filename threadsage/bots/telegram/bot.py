"""The Telegram bot: python-telegram-bot handlers turn updates into `Turn`s for the chat service
and hand its `Reply`s to the sender.

Where it answers: in a private chat every text message is a question and the chat is the session;
in groups it answers when mentioned, when someone replies to one of its messages, or on `/ask`,
and the session is the reply chain (see `chains`). It replies to the asker's message and stays in
the forum topic. `/ask -p …` in a group is answered in the person's private chat instead. The
answer's words show as they are written (see `drafting`).

Whom it answers: only the chats `THREADSAGE_TELEGRAM_ALLOWED` lists (see `access`), checked before
any other handler.

Long polling by default; with `TELEGRAM_WEBHOOK_URL` set, Telegram posts updates to
`/telegram/webhook` on the project's ASGI app instead. In one process, updates are processed
concurrently on one asyncio loop, one chat's in the order they came (`application.ChatsInOrder`).
With a turn queue, the webhook of `threadsage serve` only queues each update and `threadsage worker`
processes it (`perform`); the updates of one chat stay in order there too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from starlette.routing import Route
from telegram import Message, Update
from telegram.constants import ChatType
from telegram.error import Forbidden, TelegramError
from telegram.ext import CallbackQueryHandler, CommandHandler, ContextTypes, MessageHandler, TypeHandler, filters

from threadsage.adapters.documents.attachments import MB
from threadsage.bots.coverage import coverage_lines
from threadsage.bots.replies import place_categories
from threadsage.bots.telegram.access import StopDisallowedChats, TelegramAccess
from threadsage.bots.telegram.announcer import TelegramAnnouncer
from threadsage.bots.telegram.application import ALLOWED_UPDATES, build_application
from threadsage.bots.telegram.chains import ReplyChains, chain_key, private_key, private_session, private_topic_key
from threadsage.bots.telegram.clicking import Clicks
from threadsage.bots.telegram.commands import register_commands
from threadsage.bots.telegram.drafting import Drafts
from threadsage.bots.telegram.files import TelegramFiles
from threadsage.bots.telegram.help import Instead, TelegramHelp
from threadsage.bots.telegram.limits import FloodLimits
from threadsage.bots.telegram.notifier import TelegramNotifier
from threadsage.bots.telegram.polling import poll_into
from threadsage.bots.telegram.sending import Place, TelegramSender, answer_query, place_after_click, place_of
from threadsage.bots.telegram.texts import message_language, person_language
from threadsage.bots.telegram.topics import PrivateTopics
from threadsage.bots.telegram.webhook import UPDATE, TelegramWebhook, UpdateShape
from threadsage.bots.tokens import Signer, load_secret
from threadsage.chat import ChatService, Turn, run_shown
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.jobs import Handler, Handlers, Job
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.i18n import say
from threadsage.settings.environment import Settings

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE
PRIVATELY = ("-p", "--private")  # `/ask -p …` in a group: answered in the person's private chat


class _FromPerson(filters.MessageFilter):
    """Messages written by a person: other bots (and anonymous admins) are ignored."""

    def filter(self, message: Message) -> bool:
        return message.from_user is not None and not message.from_user.is_bot


class TelegramBot:
    """One bot: a PTB `Application` wired to a `ChatService`. Run it with
    `async with TelegramBot(...).running()`; the loop stays ours.

    It receives updates by the webhook when `TELEGRAM_WEBHOOK_URL` is set (its route is then in
    `routes`), otherwise by long polling. With `dispatch` (the turn queue's `put`) each update is
    handed to it as a job instead of processed here, and polling confirms an update only once
    the queue holds it (`polling`). A worker of the turn queue passes `receive=False` (no
    polling, no webhook) and feeds the queued updates to `perform`. It takes the whole `Settings`:
    it hands their sections to the parts it puts together (access, files, clicks, the webhook)."""

    def __init__(
        self,
        settings: Settings,
        chat: ChatService,
        coordinator: Coordinator,
        signer: Signer | None = None,
        *,
        dispatch: Callable[[Job], Awaitable[object]] | None = None,
        receive: bool = True,
    ) -> None:
        self.access = TelegramAccess.from_settings(settings)
        ptb_polls = receive and dispatch is None and not settings.telegram_webhook_url
        self.limits = FloodLimits()  # Telegram's flood limits, shared by the bot's turns
        self.app = build_application(settings, polling=ptb_polls, limits=self.limits)
        self.settings = settings
        self.chat = chat
        self.signer = signer or Signer(load_secret(settings, settings.data_dir))
        # A private conversation idle this long starts afresh.
        self.idle_after = timedelta(hours=settings.telegram_idle_hours)
        self.webhook_url = settings.telegram_webhook_url
        self.receive = receive
        self.dispatch = dispatch
        self.webhook = TelegramWebhook(settings, dispatch or self._process_here) if self.webhook_url else None
        self._polling: asyncio.Task[None] | None = None  # into the turn queue
        self.chains = ReplyChains(self.app.bot, coordinator)
        self.send = TelegramSender(self.app.bot, self.signer, coordinator, self.chains, settings.escalates())
        self.stop_disallowed = StopDisallowedChats(self.access, coordinator, self.send, self.chains)
        self.files = TelegramFiles(int(settings.max_attachment_mb * MB))
        self.topics = PrivateTopics(self.app.bot, coordinator)
        self.help = TelegramHelp(settings, settings, chat, self.send, self.chains, self.signer, coordinator)
        self.clicks = Clicks(settings, settings, chat, self.send, self.chains, self.signer, self.help)
        self._outages: dict[int, ServiceUnavailable] = {}  # update id → outage, for `perform`
        self._add_handlers()
        chat.knowledge.register("telegram", TelegramNotifier(settings, self.access, self.send))  # gaps that closed

    # --- lifecycle -------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[TelegramBot]:
        """Started (getMe, then the update loop: the webhook registered or long polling) on entry;
        on exit, fetching stops and the updates in flight finish."""
        await self._start()
        try:
            yield self
        finally:
            await self._stop()

    def announcer(self) -> TelegramAnnouncer:
        return TelegramAnnouncer(self.send)

    async def _start(self) -> None:
        """getMe, then the update loop; registers the webhook or starts long polling."""
        await self.app.initialize()
        await self.app.start()
        if self.receive:  # the process that receives updates speaks for the bot
            await register_commands(self.app.bot)
        if not self.receive:
            mode = "updates from the turn queue"
        elif self.webhook is not None:
            await self.webhook.register(self.app.bot)
            mode = "webhook" if self.dispatch is None else "webhook into the turn queue"
        elif self.dispatch is not None:
            self._polling = asyncio.create_task(poll_into(self.app.bot, self.dispatch))
            mode = "polling into the turn queue"
        else:
            assert self.app.updater is not None
            await self.app.updater.start_polling(allowed_updates=ALLOWED_UPDATES)
            mode = "polling"
        level = logging.INFO if self.access.answers_someone else logging.WARNING
        log.log(level, "telegram bot @%s started (%s); answers %s", self.app.bot.username, mode, self.access.describe())

    async def _stop(self) -> None:
        """Stop fetching, finish the updates in flight, close the HTTP clients."""
        if self._polling is not None:
            self._polling.cancel()
            await asyncio.gather(self._polling, return_exceptions=True)
        if self.app.updater is not None and self.app.updater.running:
            await self.app.updater.stop()
        if self.app.running:
            await self.app.stop()
        await self.app.shutdown()

    async def ready(self) -> bool:
        return self.app.running

    @property
    def routes(self) -> list[Route]:
        """What the process serves for the bot: the webhook, when it receives by one."""
        return [self.webhook.route()] if self.receive and self.webhook is not None else []

    async def _process_here(self, job: Job) -> None:
        await self.app.update_queue.put(self._update(job.payload))

    # --- work: the one kind of job, an update (as the webhook or polling received it) -------

    @cached_property
    def jobs(self) -> Handlers:
        return Handlers("telegram", [Handler(UPDATE, self._update, self._process, self._apologise)])

    async def perform(self, job: Job) -> None:
        await self.jobs.perform(job)

    async def give_up(self, job: Job) -> None:
        await self.jobs.give_up(job)

    def _update(self, payload: Any) -> Update:
        """An update's JSON read back; one without its id (not an update) is refused."""
        UpdateShape.model_validate(payload)
        return Update.de_json(payload, self.app.bot)

    async def _process(self, update: Update) -> None:
        """Process one queued update; an outage propagates so that the queue retries it."""
        await self.app.process_update(update)
        outage = self._outages.pop(update.update_id, None)
        if outage is not None:
            raise outage

    async def _apologise(self, update: Update) -> None:
        """The apology for an update no worker could finish (each that tried died)."""
        message = update.effective_message
        if not isinstance(message, Message):
            return
        place = place_after_click(message) if update.callback_query is not None else place_of(message)
        with suppress(TelegramError):
            await self.send.send_plain(place, _apology(update, message))

    # --- handlers --------------------------------------------------------------------------

    def _add_handlers(self) -> None:
        self.app.add_handler(TypeHandler(Update, self.stop_disallowed), group=-1)  # refused updates stop there
        people = filters.UpdateType.MESSAGE & _FromPerson()  # new messages only: edits are ignored
        private, groups = filters.ChatType.PRIVATE, filters.ChatType.GROUPS
        questions = (filters.TEXT & ~filters.COMMAND) | filters.Document.ALL | filters.PHOTO  # files: the caption asks
        self.app.add_handlers(
            [
                CommandHandler("start", self._on_start, filters=people),
                CommandHandler("help", self._on_help, filters=people),
                CommandHandler("new", self._on_new, filters=people),
                CommandHandler("ask", self._on_ask, filters=people),
                MessageHandler(people & private & questions, self._on_private_text),
                MessageHandler(people & private & filters.COMMAND, self._on_help),  # unknown commands
                MessageHandler(people & groups & questions, self._on_group_text),
                CallbackQueryHandler(self.clicks.on_click),
            ]
        )
        self.app.add_error_handler(self._on_error)

    async def _on_start(self, update: Update, _context: Context) -> None:
        """The greeting, and what the bot can answer here: categories with their document counts."""
        message = update.message
        assert message is not None
        allowed = place_categories(self.settings, str(message.chat_id), message.chat.type == ChatType.PRIVATE)
        language = person_language(update.effective_user)
        lines = coverage_lines(await self.chat.documents_by_category(allowed), language=language)
        covers = say("tg_covers", language)
        covered = (
            "\n".join([covers, *(f"• {line}" for line in lines)]) if lines else say("tg_nothing_covered", language)
        )
        await self.send.send_plain(place_of(message), f"{say('tg_start', language)}\n\n{covered}")

    async def _on_help(self, update: Update, _context: Context) -> None:
        assert update.message is not None
        help_text = say("tg_help", person_language(update.effective_user), username=self.app.bot.username)
        await self.send.send_plain(place_of(update.message), help_text)

    async def _on_new(self, update: Update, _context: Context) -> None:
        message = update.message
        assert message is not None
        if message.chat.type != ChatType.PRIVATE:
            await self.send.send_plain(
                place_of(message), say("tg_new_in_group", person_language(update.effective_user))
            )
            return
        await self.chat.reset(private_session(message), "telegram")
        await self.send.send_plain(place_of(message), say("new_started", person_language(update.effective_user)))

    async def _on_ask(self, update: Update, _context: Context) -> None:
        message = update.message
        assert message is not None
        text = self.chains.question_text(message)
        first, _, rest = text.partition(" ")
        if message.chat.type == ChatType.PRIVATE:
            await self._ask_in_private(message, rest if first in PRIVATELY else text)
        elif first in PRIVATELY and rest.strip():
            await self._ask_privately(message, rest.strip())
        else:
            await self._ask(message, await self.chains.group_session(message), text)

    async def _on_private_text(self, update: Update, _context: Context) -> None:
        assert update.message is not None
        await self._ask_in_private(update.message, update.message.text or update.message.caption or "")

    async def _on_group_text(self, update: Update, _context: Context) -> None:
        """Messages addressed to the bot (a mention or a reply to one of its messages), an expert's
        reply to an escalation, and in a help group every question, with a mention or not (`help`)."""
        message = update.message
        assert message is not None
        if await self.help.relay(message):
            return
        text, follows_up = self.chains.question_text(message), self.chains.replies_to_me(message)
        if not follows_up and self.help.asks_here(message, text):
            instead = self.help.escalating(message, text, person_language(message.from_user))
            await self._ask(message, chain_key(message.chat_id, message.message_id), text, instead=instead)
        elif follows_up or self.chains.mentions_me(message):
            await self._ask(message, await self.chains.group_session(message), text)

    async def _on_error(self, update: object, context: Context) -> None:
        """Never silent: whatever failed, the person gets a short apology (best effort) — unless a
        service is briefly away and the queue will retry the update (see `perform`)."""
        if isinstance(context.error, ServiceUnavailable) and isinstance(update, Update):
            self._outages[update.update_id] = context.error
            return
        log.error("telegram update failed", exc_info=context.error)
        if not isinstance(update, Update) or not isinstance(update.effective_message, Message):
            return
        if update.callback_query is not None:
            await answer_query(update.callback_query, None)
            place = place_after_click(update.effective_message)
        else:
            place = place_of(update.effective_message)
        with suppress(TelegramError):
            await self.send.send_plain(place, _apology(update, update.effective_message))

    # --- questions -------------------------------------------------------------------------

    async def _ask_in_private(self, message: Message, text: str) -> None:
        """A private chat's question: in its topic's conversation; with topics in private chats on,
        a question outside any topic opens one (`topics`); else the chat is one conversation."""
        language = person_language(message.from_user)
        topic = (
            message.message_thread_id if message.is_topic_message else await self.topics.open(message, text, language)
        )
        if topic:
            place = Place(message.chat_id, True, topic)
            await self._ask(message, private_topic_key(message.chat_id, topic), text, place)
            return
        key = private_key(message.chat_id)
        if await self._idle_too_long(key):
            await self.chat.reset(key, "telegram")
        await self._ask(message, key, text)

    async def _ask_privately(self, message: Message, text: str) -> None:
        """`/ask@bot -p …` in a group: answered in the person's private chat with the bot (which
        a bot may write to only once the person has started it), the group told where — or, not
        started yet, how to. Each notice is sent once, whatever redelivers the update."""
        person = message.from_user
        assert person is not None
        language, turn_id = person_language(person), f"{message.chat_id}:{message.message_id}"
        private = Place(person.id, True)
        try:
            if await self.send.first_sending(turn_id, -1):
                asked = say("tg_asked_in", language, chat=message.chat.title or "", question=text)
                await self.chains.remember(private_key(person.id), [await self.send.send_plain(private, asked)])
        except Forbidden:  # "bot can't initiate conversation with a user"
            told = say("tg_start_me_first", language, name=person.first_name, username=self.app.bot.username)
            await self.send.send_plain(place_of(message), told)
            return
        if await self.send.first_sending(turn_id, -2):
            await self.send.send_plain(
                place_of(message), say("tg_answered_privately", language, name=person.first_name)
            )
        categories = place_categories(self.settings, str(person.id), True)
        turn = Turn(
            "telegram", private_key(person.id), str(person.id), turn_id, text, categories=categories, language=language
        )
        await self._answer(turn, private)

    async def _ask(
        self, message: Message, key: str, text: str, place: Place | None = None, instead: Instead | None = None
    ) -> None:
        assert message.from_user is not None
        private = message.chat.type == ChatType.PRIVATE
        categories = place_categories(self.settings, str(message.chat_id), private)
        message_id = f"{message.chat_id}:{message.message_id}"
        log.info("question in %s chat %s", message.chat.type, message.chat_id)  # ids for THREADSAGE_CHANNEL_CATEGORIES
        place = place or place_of(message)
        files = (lambda: self.files.fetch(message)) if self.files.file_of(message) else None  # in its turn
        asker, language = str(message.from_user.id), person_language(message.from_user)
        turn = Turn(
            "telegram", key, asker, message_id, text, categories=categories, fetch_files=files, language=language
        )
        await self._answer(turn, place, instead)

    async def _answer(self, turn: Turn, place: Place, instead: Instead | None = None) -> None:
        """The turn's drafts shown as they come (see `drafting`), then its replies — but those
        `instead` takes (a help group's escalation), for which no words are drafted either."""
        drafts = Drafts(self.app.bot, place, turn.message_id)
        with self.limits.answering(place.chat_id):
            async with self.send.typing(place):
                replies = await run_shown(self.chat, turn, drafts, drafts=instead is None)
            replies = [reply for reply in replies if instead is None or not await instead(reply)]
            curator = place.private and self.settings.is_curator("telegram", turn.user_id)  # a group would see it
            replacing = await drafts.finish()
            await self.send.deliver(replies, place, turn.session_key, turn.message_id, curator, replacing)

    async def _idle_too_long(self, key: str) -> bool:
        """Whether the session's last activity (its latest checkpoint, so this survives restarts)
        is older than `idle_after`."""
        last = await self.chat.last_activity(key)
        return last is not None and datetime.now(UTC) - last > self.idle_after


def _apology(update: Update, message: Message) -> str:
    """In the language of the question (or of the bot's message a clicked button is on)."""
    return say("apology", message_language(message, update.effective_user))
