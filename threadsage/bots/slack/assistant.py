"""Slack's AI panel (Agents & AI Apps): bolt's `Assistant` middleware for the panel's own events,
and what a thread of the panel changes about answering in it.

An assistant thread is a thread of the person's DM with the bot, so its messages arrive as DM
thread messages and are answered by the same path as any DM (clarification buttons, clicks,
redelivery, edits, exactly one answer). Three things differ there:
- scope: the channel the person is viewing (`assistant_thread_started`'s context, then each
  `assistant_thread_context_changed`) decides what the thread may read, exactly as a question asked
  in that channel would — a channel the map does not name, or one of another organisation (Slack
  Connect), reads only the defaults, and no context reads what a DM reads;
- progress: `assistant.threads.setStatus` with the step rather than a placeholder message (`status`);
- the thread is greeted, offered suggested prompts, and titled from its first question.

Under Slack's agent messaging experience (`features.agent_view`, `SlackBot`'s `agent_view`), the DM is
the panel: each top-level message there is a question of its own, answered in its thread, and the
channel the person views arrives on its own (`app_context_changed`, the context `app_home_opened`
may carry) rather than with a thread; a new question's thread takes the channel viewed when it was
asked as its context (`adopt`), and from then on is a panel thread like any other. Opening the
Messages tab (`app_home_opened`, tab "messages") greets, at most once a week, with suggested prompts.
Greetings are in the person's Slack locale (English or Chinese).

The context is kept in the coordinator (Redis when deployed), behind bolt's
`AsyncAssistantThreadContextStore` interface: bolt's default keeps it in the metadata of the bot's
first reply, which costs a `conversations.replies` read per question, and memory alone would lose it
on a restart or to another worker. Knowing a thread's context is also how the bot tells a panel
thread from an ordinary thread of the DM.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Collection
from contextlib import suppress
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import AsyncAssistantThreadContextStore
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.payload_utils import is_other_message_sub_event_in_assistant_thread
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError

from threadsage.bots.replies import place_categories
from threadsage.bots.slack.home import RecentQuestions
from threadsage.bots.slack.jobs import AgentJob, AssistantJob
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import question_text
from threadsage.chat import ChatService
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.jobs import Job
from threadsage.i18n import Language, language_of, say
from threadsage.settings.sections import AccessSettings

log = logging.getLogger(__name__)

CONTEXT_TTL = 90 * 24 * 3600.0  # a panel thread can be reopened from its History long after
VIEWING_TTL = 24 * 3600.0  # the channel a person views, until the next app_context_changed
GREET_EVERY = 7 * 24 * 3600.0  # the Messages tab is opened often: its greeting comes once a week at most
FILE_WAITS = 600.0  # a file sent alone at the top of the agent DM waits this long for its question
ARRIVAL_WAIT = 2.0  # seconds a question waits for a file delivered before it to be noted
CHANNEL_ENTITY = "slack#/types/channel_id"
MAX_PROMPTS = 4  # assistant.threads.setSuggestedPrompts accepts at most four
TITLE_CHARS = 80


class ThreadContexts(AsyncAssistantThreadContextStore):
    """The context of each assistant thread (the channel the person views), in the coordinator. A
    thread started with no channel in view is kept with an empty context: it is still a panel thread."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator

    async def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        await self.coordinator.remember(_key(channel_id, thread_ts), json.dumps(dict(context)), CONTEXT_TTL)

    async def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        """bolt's contract: the context, None when it names no channel."""
        known = await self.known(channel_id, thread_ts)
        return AssistantThreadContext(known) if known and known.get("channel_id") else None

    async def known(self, channel_id: str, thread_ts: str) -> dict[str, Any] | None:
        """The stored context, `{}` for a panel thread with no channel in view, None for a thread
        that is no panel thread."""
        value = await self.coordinator.recall(_key(channel_id, thread_ts))
        return dict(json.loads(value)) if value is not None else None

    async def save_viewing(self, team: str, user: str, context: dict[str, str]) -> None:
        """The channel a person views now (agent messaging): the context of their next question."""
        await self.coordinator.remember(f"slack-viewing:{team}:{user}", json.dumps(context), VIEWING_TTL)

    async def viewing(self, team: str, user: str) -> dict[str, str]:
        value = await self.coordinator.recall(f"slack-viewing:{team}:{user}")
        return dict(json.loads(value)) if value is not None else {}


def _key(channel: str, thread_ts: str) -> str:
    return f"slack-assistant:{channel}:{thread_ts}"


def viewed_channel(context: dict[str, Any] | None) -> dict[str, str]:
    """The channel an agent event's `context` names (its entities, most relevant first), in the
    shape of an assistant thread's context; `{}` when it names none (a canvas, a list, nothing)."""
    for entity in (context or {}).get("entities") or []:
        if isinstance(entity, dict) and entity.get("type") == CHANNEL_ENTITY and entity.get("value"):
            return {"channel_id": str(entity["value"]), "team_id": str(entity.get("team_id") or "")}
    return {}


class PanelAssistant(AsyncAssistant):
    """bolt's Assistant, except that an edit in a DM thread goes on to the app's own `message`
    listener: bolt cannot tell a panel thread from any other DM thread and acknowledges every
    `message_changed` there unseen, which would lose the edits `edits` answers."""

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse | None:
        if is_other_message_sub_event_in_assistant_thread(req.body):
            return await next()
        return await super().async_process(req=req, resp=resp, next=next)


def register(app: AsyncApp, dispatch: Callable[[Job], Awaitable[object]]) -> None:
    """The panel's events as jobs, ordered with the thread's messages (their session). Messages in
    the thread need no listener of the Assistant's: they fall through to the app's `message` one."""
    assistant = PanelAssistant(logger=logging.getLogger("slack_bolt"))  # its loggers follow the app's level

    async def on_thread_event(event: dict[str, Any], body: dict[str, Any]) -> None:
        thread = event["assistant_thread"]
        place = Place(body.get("team_id", ""), thread["channel_id"], thread["thread_ts"], True)
        await dispatch(AssistantJob(event=event, team=place.team).job(place.session))

    assistant.thread_started(on_thread_event)
    assistant.thread_context_changed(on_thread_event)
    app.assistant(assistant)

    async def on_context_changed(event: dict[str, Any], body: dict[str, Any]) -> None:
        user = event.get("user") or next((a.get("user_id") for a in body.get("authorizations") or []), None)
        if user:
            team = body.get("team_id", "")
            await dispatch(AgentJob(event=event, team=team, user=user).queued())

    app.event("app_context_changed")(on_context_changed)


class FileArrivals:
    """Files sent alone at the top of a DM, from the moment their event reaches the bot (in the
    order Slack's deliveries arrived) until `AgentQuestions` has noted them: a question sent right
    after a file may be handled first (each event runs as a task of its own, and bolt's middleware
    does not keep their order), so it waits for the files sent before it — and only for those."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str], dict[str, asyncio.Event]] = {}

    def arriving(self, body: bytes) -> None:
        """An event's delivery, before bolt reads it (on the bot's loop, in arrival order)."""
        try:
            event = json.loads(body).get("event") or {}
        except (ValueError, AttributeError):
            return
        if _sent_alone(event) and event.get("channel_type") == "im" and not event.get("thread_ts"):
            self._pending.setdefault((event["channel"], event.get("user", "")), {})[event["ts"]] = asyncio.Event()

    def noted(self, channel: str, user: str, ts: str) -> None:
        pending = self._pending.get((channel, user), {})
        if (arrived := pending.pop(ts, None)) is not None:
            arrived.set()
        if not pending:
            self._pending.pop((channel, user), None)

    async def before(self, channel: str, user: str, ts: str) -> None:
        """Until the files this person sent here before `ts` are noted (at most `ARRIVAL_WAIT`)."""
        earlier = [e for t, e in self._pending.get((channel, user), {}).items() if float(t) < float(ts)]
        if earlier:
            with suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(e.wait() for e in earlier)), ARRIVAL_WAIT)


class AgentQuestions:
    """Where a top-level message of the agent DM is answered: its own thread, except the first
    question after a file sent alone (within `FILE_WAITS`), which continues the file's thread —
    people drop a file, then type what they want to know (and the question waits for its reading,
    as any message of one conversation waits for the one before)."""

    def __init__(self, coordinator: Coordinator, arrivals: FileArrivals) -> None:
        self.coordinator = coordinator
        self.arrivals = arrivals

    async def place(self, event: dict[str, Any], place: Place) -> Place:
        user = event.get("user", "")
        key = f"slack-agent-file:{place.channel}:{user}"
        if _sent_alone(event):
            await self.coordinator.remember(key, event["ts"], FILE_WAITS)
            self.arrivals.noted(place.channel, user, event["ts"])
            return place
        await self.arrivals.before(place.channel, user, event["ts"])
        waiting = await self.coordinator.recall(key)
        if waiting and await self.coordinator.claim(f"slack-agent-file-asked:{place.channel}:{waiting}", FILE_WAITS):
            return replace(place, thread_ts=waiting)
        return place


def _sent_alone(event: dict[str, Any]) -> bool:
    """A message that is files and no question."""
    return bool(event.get("files")) and not question_text(event.get("text"))


class Panel:
    """What answering does differently in a panel thread, and the panel's own events."""

    def __init__(
        self,
        settings: AccessSettings,
        chat: ChatService,
        send: SlackSender,
        contexts: ThreadContexts,
        recent: RecentQuestions,
        own_teams: Callable[[], Collection[str]],
        agent_view: bool = True,
    ) -> None:
        self.agent_view = agent_view
        self.settings = settings
        self.chat = chat
        self.send = send
        self.contexts = contexts
        self.recent = recent
        self.own_teams = own_teams

    async def handle(self, job: AssistantJob) -> None:
        """`assistant_thread_started` (greeted and offered prompts once) or a changed context."""
        event, team = job.event, job.team
        thread = event["assistant_thread"]
        channel, thread_ts = thread["channel_id"], thread["thread_ts"]
        await self.contexts.save(channel_id=channel, thread_ts=thread_ts, context=thread.get("context") or {})
        if event["type"] != "assistant_thread_started":
            return
        if not await self.chat.coordinator.claim(f"slack-assistant-greeted:{channel}:{thread_ts}", CONTEXT_TTL):
            return  # a redelivered start: greeted already
        await self._greet(Place(team, channel, thread_ts, True), thread["user_id"], "assistant_greeting")

    async def agent_event(self, job: AgentJob) -> None:
        """Agent messaging: the channel the person views, kept for their next question; the
        Messages tab opened, greeted (once a week) with suggested prompts."""
        event = job.event
        if event["type"] == "app_context_changed" or "context" in event:
            await self.contexts.save_viewing(job.team, job.user, viewed_channel(event.get("context")))
        if event["type"] != "app_home_opened":
            return
        if await self.chat.coordinator.claim(f"slack-agent-greeted:{job.team}:{job.user}", GREET_EVERY):
            await self._greet(Place(job.team, event["channel"], "", True), job.user, "agent_greeting")

    async def adopt(self, place: Place, user: str) -> None:
        """A new question at the top of the agent DM: its thread reads what a question in the
        channel the person views reads, kept with the thread for its follow-ups and clicks."""
        if await self.contexts.known(place.channel, place.thread_ts) is None:
            viewing = await self.contexts.viewing(place.team, user)
            await self.contexts.save(channel_id=place.channel, thread_ts=place.thread_ts, context=viewing)

    async def _greet(self, place: Place, user: str, greeting: str) -> None:
        """The greeting at `place` in the person's language, then up to four suggested prompts
        (for a panel thread, on that thread; in the agent DM, on its latest message: Slack drops
        prompts given a `thread_ts` there)."""
        asked = await self.recent.of(place.team, user)
        language = await self._language(user, [a.text for a in asked])
        await self.send.post_quietly(place, say(greeting, language))
        context = await self.of(place) if place.thread_ts else await self.contexts.viewing(place.team, user)
        prompts = await self._prompts(context or {}, [a.text for a in asked], language)
        if not prompts:
            return
        thread = {"thread_ts": place.thread_ts} if place.thread_ts else {}
        try:
            await self.send.client.assistant_threads_setSuggestedPrompts(
                channel_id=place.channel, prompts=prompts, title=say("assistant_prompts", language), **thread
            )
        except SlackApiError as exc:
            log.warning("could not offer suggested prompts: %s", exc.response.get("error"))

    async def _language(self, user: str, asked: list[str]) -> Language:
        """The person's Slack locale (Chinese or English); without it (no `users:read`, Slack
        away), the language they last asked in."""
        try:
            info = await self.send.client.users_info(user=user, include_locale=True)
            locale = str((info.get("user") or {}).get("locale") or "")
        except SlackApiError as exc:
            log.warning("could not read a person's locale: %s", exc.response.get("error"))
            locale = ""
        if locale:
            return "zh" if locale.lower().startswith("zh") else "en"
        return language_of(asked[0]) if asked else "en"

    async def of(self, place: Place) -> dict[str, Any] | None:
        """The context of a panel thread, None for any other place."""
        if not (place.is_dm and place.thread_ts):
            return None
        return await self.contexts.known(place.channel, place.thread_ts)

    async def categories(self, place: Place) -> tuple[str, ...] | None:
        """What a question asked at `place` may read; in a panel thread, what a question in the
        channel in view would (the defaults for an unmapped channel or one of another organisation)."""
        context = await self.of(place)
        if context is None:
            return place.categories(self.settings)
        return self.categories_of(context)

    def categories_of(self, context: dict[str, Any]) -> tuple[str, ...] | None:
        channel = context.get("channel_id") or ""
        teams = {context.get("team_id"), context.get("enterprise_id")} - {None, ""}
        if channel and teams and not teams & set(self.own_teams()):
            channel = ""  # a channel of another organisation, shared with ours: the defaults
        return place_categories(self.settings, channel, not channel)

    async def title(self, place: Place, question: str) -> None:
        """The thread's title, from its first question."""
        if not await self.chat.coordinator.claim(f"slack-assistant-titled:{place.channel}:{place.thread_ts}", 3600):
            return
        title = " ".join(question.split())
        title = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
        try:
            await self.send.client.assistant_threads_setTitle(
                channel_id=place.channel, thread_ts=place.thread_ts, title=title
            )
        except SlackApiError as exc:
            log.warning("could not title an assistant thread: %s", exc.response.get("error"))

    async def _prompts(self, context: dict[str, Any], asked: list[str], language: Language) -> list[dict[str, str]]:
        """Up to four: the person's own recent questions, then one per category the thread may read
        (those with documents, largest first)."""
        counts = await self.chat.documents_by_category(self.categories_of(context))
        prompts = [{"title": _short(text), "message": text} for text in dict.fromkeys(asked)][: MAX_PROMPTS // 2]
        for category, _ in sorted(counts.items(), key=lambda item: -item[1]):
            if len(prompts) >= MAX_PROMPTS:
                break
            text = say("assistant_prompt_category", language, category=category)
            prompts.append({"title": _short(text), "message": text})
        return prompts


def _short(text: str) -> str:
    return text if len(text) <= 75 else text[:74] + "…"
