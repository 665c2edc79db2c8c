"""The Slack bot: bolt listeners turn events, commands, shortcuts and clicks into `Job`s, and the
work behind them turns a job into a `Turn` for the chat service and its events into messages.

Listeners acknowledge first and hand the work on as a `Job`: to a background task in one process,
or to the turn queue on a `threadsage serve` front-end (then `threadsage worker` calls `perform`).
People from another organisation (Slack Connect) stop before the listeners (`outsiders`, one
middleware; who they are: `access`).
Entry points: mentions, DMs and thread follow-ups, their edits (`edits`), `/ask` and the "Ask
threadsage" message shortcut, answered privately (`asking`, `private`), the App Home tab (`home`),
and button clicks (`buttons`; sharing a private answer: `sharing`); a message's turn is `messages`,
a turn is shown by `answering`, an apology for a turn nobody could finish is `apologies`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import cached_property
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse
from starlette.routing import Route

from threadsage.adapters.documents.attachments import MB
from threadsage.bots.pacing import Windows
from threadsage.bots.slack import assistant, resolving
from threadsage.bots.slack.announcer import SlackAnnouncer
from threadsage.bots.slack.answering import Answering
from threadsage.bots.slack.apologies import Apologies
from threadsage.bots.slack.asking import Asking, parse_ask
from threadsage.bots.slack.blocks import Helping
from threadsage.bots.slack.bolt_internals import share_identity
from threadsage.bots.slack.buttons import Buttons
from threadsage.bots.slack.curation import ACTION as CURATOR_ACTION
from threadsage.bots.slack.curation import Curation
from threadsage.bots.slack.edits import Question, edit_of
from threadsage.bots.slack.files import SlackFiles
from threadsage.bots.slack.help import HELP_ACTIONS, HelpDesk, asks_here, replies_to_escalation
from threadsage.bots.slack.home import Home, RecentQuestions
from threadsage.bots.slack.intake import events_route, from_a_person, on_error, socket_mode
from threadsage.bots.slack.jobs import (
    AgentJob,
    AssistantJob,
    ClickJob,
    CommandJob,
    EditJob,
    ExpertReplyJob,
    HelpClickJob,
    HomeJob,
    MessageJob,
    ResolveClickJob,
    ShareJob,
    ShortcutJob,
    ThreadChangedJob,
    VoteJob,
    handler,
    on_click,
)
from threadsage.bots.slack.limits import PacedClient
from threadsage.bots.slack.messages import Messages
from threadsage.bots.slack.notifier import SlackNotifier
from threadsage.bots.slack.outsiders import stopping_outsiders
from threadsage.bots.slack.places import Place, place_of_mention, place_of_message
from threadsage.bots.slack.private import MOVE_ACTION, SHARE_ACTION, PrivateAnswers
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.sharing import Sharing
from threadsage.bots.slack.texts import unescaped
from threadsage.bots.tokens import Signer, load_secret
from threadsage.chat import ChatService
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.jobs import Handlers, Job
from threadsage.http.thread import MainLoopBridge
from threadsage.i18n import language_of, say
from threadsage.settings.environment import Settings
from threadsage.support.background import BackgroundTasks

log = logging.getLogger(__name__)

ASK_COMMAND = "/ask"
ASK_SHORTCUT = "ask_threadsage"  # the message shortcut's callback id (deploy/slack-app-manifest.yml)


class SlackBot:
    """Listeners and the work behind them. A front-end of the turn queue passes `dispatch` (and
    no chat service: it holds no conversation state); its listeners then finish queueing before
    Slack gets its acknowledgement. It takes the whole `Settings`: it hands their sections to the
    parts it puts together (asking, buttons, the panel, the home tab, curation)."""

    def __init__(
        self,
        settings: Settings,
        chat: ChatService | None,
        coordinator: Coordinator | None = None,
        signer: Signer | None = None,
        *,
        dispatch: Callable[[Job], Awaitable[object]] | None = None,
        receive: bool = True,
    ) -> None:
        if settings.slack_bot_token is None:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        signing_secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
        if signing_secret is None and settings.slack_app_token is None:
            raise ValueError(
                "SLACK_SIGNING_SECRET is required for the HTTP Events API (or set SLACK_APP_TOKEN for Socket Mode)"
            )
        if chat is not None and coordinator is None:
            raise ValueError("a Slack bot that answers needs the coordinator its chat service uses")
        self.settings = settings
        self._verifier = SignatureVerifier(signing_secret) if signing_secret else None
        self._chat = chat
        self._coordinator = coordinator
        self.signer = signer or Signer(load_secret(settings, settings.data_dir))
        self.receive = receive
        self.own_teams: frozenset[str] = frozenset()  # the bot's workspace and organisation, from auth.test
        self.bot_user = ""  # the bot's user id, from auth.test
        self.tasks = BackgroundTasks()
        self.arrivals = assistant.FileArrivals()  # files sent alone, until their question may follow
        self.loop: MainLoopBridge | None = None  # the loop it runs on, from `running`
        self.routes: list[Route] = []  # what the process serves for it, from `running()` when it receives
        self.dispatch = dispatch or self._work_here
        self._queueing = dispatch is not None
        # One HTTP session for every Web API call: slack_sdk otherwise opens a session (and builds
        # a TLS context, CPU on the event loop) per call, which shows in ack latency (docs/performance.md, "Slack").
        self._session = aiohttp.ClientSession()
        self.client = PacedClient(
            Windows(),  # Slack's limits, shared by the bot's turns (see `limits`)
            token=settings.slack_bot_token.get_secret_value(),
            base_url=settings.slack_api_url or AsyncWebClient.BASE_URL,
            session=self._session,
            # slack_sdk's default (one retry of a connection refused or reset) and Slack's 429s
            retry_handlers=[AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
        )
        helping = Helping(escalate=settings.escalates(), resolvable=frozenset(settings.help_channels))
        self.send = SlackSender(self.client, self.signer, settings.handoff_mention, helping)
        self.files = SlackFiles(
            self.client,
            self._session,
            settings.slack_bot_token.get_secret_value(),
            int(settings.max_attachment_mb * MB),
            settings.slack_api_url,
        )
        # The client carries the token, so bolt authorizes with its single-team authorization.
        self.app = AsyncApp(
            name="threadsage-slack",  # its loggers' name; unnamed, bolt reads the call stack's source (inspect.stack)
            client=self.client,
            signing_secret=signing_secret or "socket-mode",
            request_verification_enabled=False,  # `route` checks signatures, before bolt parses a body
            raise_error_for_unhandled_request=True,  # → `on_error`, instead of a 404 that Slack retries
            process_before_response=dispatch is not None,
            logger=logging.getLogger("slack_bolt"),  # its loggers follow this one's level (see observability)
        )
        self.app.event("app_mention")(self._on_mention)
        self.app.event("message")(self._on_message)
        self.app.event("app_home_opened")(self._on_home_opened)
        self.app.command(ASK_COMMAND)(self._on_ask)
        self.app.message_shortcut(ASK_SHORTCUT)(self._on_shortcut)
        self.app.action(re.compile(r"^clarify:\d+$"))(on_click(ClickJob, self.dispatch))
        self.app.action(re.compile(r"^feedback:(up|down|vote)$"))(on_click(VoteJob, self.dispatch))
        self.app.action(CURATOR_ACTION)(self._on_verify)
        self.app.action(re.compile(rf"^({'|'.join(HELP_ACTIONS)})$"))(on_click(HelpClickJob, self.dispatch))
        self.app.action(re.compile(rf"^({SHARE_ACTION}|{MOVE_ACTION})$"))(on_click(ShareJob, self.dispatch))
        assistant.register(self.app, self.dispatch)
        resolving.register(self.app, self.dispatch)
        if not settings.slack_allow_external:
            self.app.use(stopping_outsiders(lambda: self.own_teams, self.send, self.tasks))
        self.app.error(on_error)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[SlackBot]:
        """Check the token once at start-up (a refused one fails here, clearly), and on the way
        out finish the turns in flight and close the HTTP session. When it `receive`s, Slack's
        deliveries come in as the settings say: Socket Mode with SLACK_APP_TOKEN, else the
        Events API, whose route is then in `routes`."""
        self.loop = MainLoopBridge()
        try:
            identity = await self._identity()
            self.own_teams = frozenset(filter(None, (identity.get("team_id"), identity.get("enterprise_id"))))
            self.bot_user = str(identity.get("user_id", ""))
            share_identity(self.app, identity)
            if self._chat is not None:
                self._chat.knowledge.register("slack", SlackNotifier(self.settings, self.send))
            if self.receive and self.settings.slack_app_token is not None:
                async with socket_mode(self.app, self.client, self.settings.slack_app_token.get_secret_value()):
                    yield self
                return
            if self.receive:
                self.routes = [self.route()]
                log.info("Slack: Events API at POST /slack/events")
            yield self
        finally:
            self.loop.start_waiting()
            await self.tasks.drain(30)
            await self._session.close()

    def announcer(self) -> SlackAnnouncer:
        return SlackAnnouncer(self.client)

    @cached_property
    def resolving(self) -> resolving.Resolving:
        return resolving.Resolving(self.settings, self.settings, self.chat, self.send, self.signer, self.coordinator)

    async def _identity(self) -> AsyncSlackResponse:
        try:
            return await self.client.auth_test()
        except SlackApiError as exc:
            raise ValueError(f"Slack refused SLACK_BOT_TOKEN ({exc.response.get('error')})") from None

    def route(self) -> Route:
        """POST /slack/events, served from any loop. Answering here, an event is acknowledged
        before bolt sees it (its listeners then run on the bot's loop); queueing, the delivery is
        in the turn queue before the acknowledgement. Interactivity and commands, whose
        acknowledgement may carry a message, always wait for bolt."""
        if self._verifier is None:
            raise ValueError("the Events API needs SLACK_SIGNING_SECRET")
        if self.loop is None:
            raise RuntimeError("the Slack route is served while the bot is `running()`")
        return events_route(
            self.app, self._verifier, self.loop, None if self._queueing else self.tasks, self.arrivals.arriving
        )

    @property
    def chat(self) -> ChatService:
        if self._chat is None:
            raise RuntimeError("this Slack bot only queues work; a worker answers")
        return self._chat

    @property
    def coordinator(self) -> Coordinator:
        assert self._coordinator is not None  # given with the chat service
        return self._coordinator

    @cached_property
    def answering(self) -> Answering:
        progress, step_seconds = self.settings.slack_progress, self.settings.slack_step_seconds
        answering = Answering(self.chat, self.send, self.private_answers, progress, step_seconds)
        answering.after_answer = self.curation.offer
        return answering

    @cached_property
    def curation(self) -> Curation:
        return Curation(self.settings, self.chat, self.send, self.signer)

    @cached_property
    def private_answers(self) -> PrivateAnswers:
        return PrivateAnswers(self.coordinator)

    @cached_property
    def sharing(self) -> Sharing:
        return Sharing(self.chat, self.send, self.signer, self.private_answers)

    @cached_property
    def recent(self) -> RecentQuestions:
        return RecentQuestions(self.coordinator)

    @cached_property
    def asking(self) -> Asking:
        return Asking(self.settings, self.chat, self.send, self.recent, self.answering, self.private_answers)

    @cached_property
    def buttons(self) -> Buttons:
        return Buttons(self.settings, self.chat, self.send, self.signer, self.answering, self.panel, self.sharing)

    @cached_property
    def panel(self) -> assistant.Panel:
        contexts = assistant.ThreadContexts(self.coordinator)
        return assistant.Panel(
            self.settings,
            self.chat,
            self.send,
            contexts,
            self.recent,
            lambda: self.own_teams,
            self.settings.slack_agent_view,
        )

    @cached_property
    def home(self) -> Home:
        return Home(self.settings, self.chat, self.send, self.recent)

    # --- listeners: acknowledge, then work in the background ---------------------------------

    async def _on_mention(self, event: dict[str, Any], body: dict[str, Any], context: Any) -> None:
        if from_a_person(event, context):
            await self._message_job(event, place_of_mention(event, body))

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any], context: Any) -> None:
        await resolving.seen(event, self.dispatch)  # an edit or a deletion in a resolved thread
        if event.get("subtype") == "message_changed":
            await self._edit_job(event, body, context.get("bot_user_id"))
            return
        if not from_a_person(event, context):
            return  # joins, bots (ourselves included), other non-user messages
        if replies_to_escalation(self.settings, event):
            job = ExpertReplyJob(event=event, team=body.get("team_id", ""))
            await self.dispatch(job.job(f"slack-relay:{event['channel']}:{event['thread_ts']}"))
            return
        if asks_here(self.settings, event):
            asked = place_of_mention(event, body)
            await self.dispatch(MessageJob(event=event, place=asked, help=True).job(asked.session))
            return
        agent_view = self.settings.slack_agent_view
        place = place_of_message(event, body, dm_threads=agent_view)
        if place is not None and place.is_dm and agent_view and not event.get("thread_ts") and self._coordinator:
            place = await assistant.AgentQuestions(self._coordinator, self.arrivals).place(event, place)
        if place is not None:
            await self._message_job(event, place)

    async def _edit_job(self, event: dict[str, Any], body: dict[str, Any], bot_user: str | None) -> None:
        edit = edit_of(event, body, bot_user)
        if edit is not None:
            # Its own order key: queued behind the question's turn, the edit would always come too late.
            await self.dispatch(edit.job(f"slack-edit:{edit.channel}:{edit.ts}"))

    async def _on_home_opened(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        team, user = body.get("team_id", ""), event["user"]
        if event.get("tab") == "home":
            await self.dispatch(HomeJob(team=team, user=user).job(f"slack-home:{user}"))
        elif event.get("tab") == "messages" and self.settings.slack_agent_view:
            await self.dispatch(AgentJob(event=event, team=team, user=user).queued())

    async def _on_ask(self, ack: Any, command: dict[str, Any]) -> None:
        request = parse_ask(unescaped(command.get("text", "")))
        if request.kind == "usage":
            await ack(say("slack_ask_usage"))
            return
        await ack(say("slack_answering_privately", language_of(request.question)) if request.kind != "new" else "")
        await self.dispatch(CommandJob(command=command).job(f"slack-command:{command['trigger_id']}"))

    async def _on_shortcut(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await self.dispatch(ShortcutJob(body=body).job(f"slack-shortcut:{body['trigger_id']}"))

    async def _on_verify(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A curator's "Save as verified answer": one write, done here after the acknowledgement."""
        await ack()
        self.tasks.spawn(self.curation.save(body, action), name="slack-verify")

    async def _message_job(self, event: dict[str, Any], place: Place) -> None:
        await self.dispatch(MessageJob(event=event, place=place).job(place.session))

    async def _work_here(self, job: Job) -> None:
        self.tasks.spawn_in_order(job.order_key, self.perform(job), name=f"slack-{job.kind}")

    # --- work: one handler per kind of job (here, or on a worker of the turn queue) ----------

    @cached_property
    def messages(self) -> Messages:
        own = lambda: self.own_teams  # noqa: E731 - known once running
        return Messages(
            self.chat, self.coordinator, self.send, self.files, self.panel, self.recent, self.answering, self.help, own
        )

    @cached_property
    def help(self) -> HelpDesk:
        return HelpDesk(self.settings, self.settings, self.chat, self.send, self.signer, self.coordinator)

    @cached_property
    def apologies(self) -> Apologies:
        return Apologies(self.send)

    @cached_property
    def jobs(self) -> Handlers:
        """Each kind's work and, where someone waits for an answer, the apology for a turn no
        worker could finish (each that tried died), in the language of its question."""
        return Handlers(
            "slack",
            [
                handler(MessageJob, self.messages.answer, self.apologies.for_message),
                handler(EditJob, lambda edit: Question(self.coordinator, edit.channel, edit.ts).record(edit)),
                handler(CommandJob, lambda job: self.asking.command(job.command), self.apologies.for_command),
                handler(ShortcutJob, lambda job: self.asking.shortcut(job.body), self.apologies.for_shortcut),
                handler(HomeJob, lambda job: self.home.publish(job.team, job.user, self.bot_user)),
                handler(ClickJob, lambda job: self.buttons.answer(job.body, job.action), self.apologies.for_click),
                handler(VoteJob, lambda job: self.buttons.vote(job.body, job.action)),
                handler(ShareJob, lambda job: self.sharing.click(job.body, job.action), self.apologies.for_click),
                handler(AssistantJob, self.panel.handle),
                handler(AgentJob, self.panel.agent_event),
                handler(ExpertReplyJob, lambda job: self.help.relay(job.event, job.team)),
                handler(HelpClickJob, lambda job: self.help.click(job.body, job.action)),
                handler(ThreadChangedJob, self.resolving.mark),
                handler(ResolveClickJob, lambda job: self.resolving.click(job.body, job.action)),
            ],
        )

    async def perform(self, job: Job) -> None:
        await self.jobs.perform(job)

    async def give_up(self, job: Job) -> None:
        await self.jobs.give_up(job)
