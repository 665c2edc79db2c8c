"""The Slack bot: bolt listeners turn events into `Turn`s and `Reply`s into Block Kit.

Listeners acknowledge first and hand the work on as a `Job`: to a background task in one process,
or to the turn queue on a `threadsage serve` front-end (then `threadsage worker` calls `perform`).
A thread is a session: a mention in a channel is answered in a thread under it, later messages in
that thread continue it without a mention; a DM is a session, and a thread inside a DM is a
session of its own.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from typing import Any

import aiohttp
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.routing import Route

from threadsage.bots.background import BackgroundTasks
from threadsage.bots.render import split_markdown, to_mrkdwn, to_plain
from threadsage.bots.tokens import Button, ButtonKind, InvalidToken, Signer, session_digest, turn_ref
from threadsage.chat import ACCEPTED, APOLOGY, ChatService, Citation, ClarificationAnswer, Reply, ReplyKind, Turn
from threadsage.config import Settings
from threadsage.memory.coordination import Coordinator, current_delivery
from threadsage.memory.outages import ServiceUnavailable
from threadsage.memory.sessions import session_key
from threadsage.memory.turn_queue import Job

log = logging.getLogger(__name__)

SECTION_CHARS = 2800  # under Block Kit's 3,000 per section, leaving room for escaping
MAX_BLOCKS = 50
TEXT_FALLBACK_CHARS = 3000
EYES = "eyes"
INVALID_BUTTON = "This button is not valid here."
THANKS = {1: "Thanks — your 👍 is recorded.", 0: "Thanks — your 👎 is recorded. Rephrasing the question may help."}
_MENTION = re.compile(r"<@[A-Z0-9]+>")


@dataclass(frozen=True)
class Place:
    """Where a message was written: enough to answer there and to name its session."""

    team: str
    channel: str
    thread_ts: str  # the thread to answer in
    is_dm: bool

    @property
    def session(self) -> str:
        return session_key("slack", self.team, self.channel, self.thread_ts if self.thread_ts else "-")


class SlackBot:
    """Listeners and the work behind them. A front-end of the turn queue passes `dispatch` (and
    no chat service: it holds no conversation state); its listeners then finish queueing before
    Slack gets its acknowledgement."""

    def __init__(
        self,
        settings: Settings,
        chat: ChatService | None,
        signer: Signer,
        coordinator: Coordinator | None = None,
        client: AsyncWebClient | None = None,
        dispatch: Callable[[Job], Awaitable[None]] | None = None,
    ) -> None:
        if settings.slack_bot_token is None:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        token = settings.slack_bot_token.get_secret_value()
        self.settings = settings
        self._chat = chat
        self._coordinator = coordinator
        if chat is not None and coordinator is None:
            raise ValueError("a Slack bot that answers needs the coordinator its chat service uses")
        self.signer = signer
        self.tasks = BackgroundTasks()
        self.dispatch = dispatch or self._work_here
        # One HTTP session for every Web API call: slack_sdk otherwise opens a session (and builds
        # a TLS context, ~10 ms of CPU on the event loop) per call, which shows in ack latency.
        self._session = aiohttp.ClientSession()
        self.client = client or AsyncWebClient(
            token=token,
            base_url=settings.slack_api_url or AsyncWebClient.BASE_URL,
            session=self._session,
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
        )
        self._identity: AuthorizeResult | None = None
        signing_secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
        if signing_secret is None and settings.slack_app_token is None:
            raise ValueError("SLACK_SIGNING_SECRET is required for the HTTP Events API (or set SLACK_APP_TOKEN for Socket Mode)")
        async def authorize(team_id: str | None = None) -> AuthorizeResult:
            return await self._authorize()

        self.app = AsyncApp(
            client=self.client,
            authorize=authorize,
            signing_secret=signing_secret or "socket-mode",
            request_verification_enabled=signing_secret is not None,
            process_before_response=dispatch is not None,
        )
        self.app.event("app_mention")(self._on_mention)
        self.app.event("message")(self._on_message)
        self.app.action(re.compile(r"^clarify:\d+$"))(self._on_clarify)
        self.app.action(re.compile(r"^feedback:(up|down)$"))(self._on_feedback)
        self._http = AsyncSlackRequestHandler(self.app)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[SlackBot]:
        """Check the token once at start-up (a bad one fails here, clearly), and on the way out
        finish the turns in flight and close the HTTP session."""
        try:
            await self._authorize()
            yield self
        finally:
            await self.tasks.drain(30)
            await self._session.close()

    async def _authorize(self) -> AuthorizeResult:
        """Who the bot is, from one auth.test for the process rather than one per first event."""
        if self._identity is None:
            response = await self.client.auth_test()
            self._identity = AuthorizeResult.from_auth_test_response(
                bot_token=self.client.token, auth_test_response=response
            )
        return self._identity

    def route(self) -> Route:
        async def events(request: Request):
            return await self._http.handle(request)

        return Route("/slack/events", events, methods=["POST"])

    # --- listeners: acknowledge, then work in the background ---------------------------------

    async def _on_mention(self, event: dict, body: dict, context: Any) -> None:
        place = Place(body.get("team_id", ""), event["channel"], event.get("thread_ts") or event["ts"], False)
        await self.dispatch(Job("slack", "message", {"event": event, "place": asdict(place)}, place.session))

    async def _on_message(self, event: dict, body: dict, context: Any) -> None:
        if event.get("subtype") or event.get("bot_id") or event.get("user") in (None, context.get("bot_user_id")):
            return  # edits, joins, bots (ourselves included), other non-user messages
        team = body.get("team_id", "")
        if event.get("channel_type") == "im":
            place = Place(team, event["channel"], event.get("thread_ts", ""), True)
        elif event.get("thread_ts"):
            place = Place(team, event["channel"], event["thread_ts"], False)
        else:
            return  # top-level channel chatter: only mentions are for the bot
        await self.dispatch(Job("slack", "message", {"event": event, "place": asdict(place)}, place.session))

    async def _on_clarify(self, ack: Any, body: dict, action: dict) -> None:
        await ack()
        await self.dispatch(Job("slack", "click", {"body": body, "action": action}, _place_of_click(body).session))

    async def _on_feedback(self, ack: Any, body: dict, action: dict) -> None:
        await ack()
        await self.dispatch(Job("slack", "vote", {"body": body, "action": action}, _place_of_click(body).session))

    async def _work_here(self, job: Job) -> None:
        self.tasks.spawn(self.perform(job), name=f"slack-{job.kind}")

    async def perform(self, job: Job) -> None:
        """Do the work behind one listener (here, or on a worker of the turn queue)."""
        if job.kind == "message":
            await self._answer_message(job.payload["event"], Place(**job.payload["place"]))
        elif job.kind == "click":
            await self._answer_click(job.payload["body"], job.payload["action"])
        elif job.kind == "vote":
            await self._record_vote(job.payload["body"], job.payload["action"])
        else:
            log.error("unknown Slack job %r dropped", job.kind)

    async def give_up(self, job: Job) -> None:
        """The apology for a turn no worker could finish (each that tried died)."""
        if job.kind == "message":
            await self._post_quietly(Place(**job.payload["place"]), APOLOGY)
        elif job.kind == "click":
            await self._ephemeral(_place_of_click(job.payload["body"]), job.payload["body"]["user"]["id"], APOLOGY)

    @property
    def chat(self) -> ChatService:
        if self._chat is None:
            raise RuntimeError("this Slack bot only queues work; a worker answers")
        return self._chat

    # --- work ------------------------------------------------------------------------------

    async def _answer_message(self, event: dict, place: Place) -> None:
        is_thread_reply = event.get("type") == "message" and not place.is_dm
        if is_thread_reply and not await self.chat.has_conversation(place.session):
            return  # a thread the bot is not part of: there it speaks only when mentioned
        # app_mention and message arrive both for a mention; Slack retries re-deliver: once only.
        assert self._coordinator is not None
        if not await self._coordinator.claim(f"slack-event:{event['channel']}:{event['ts']}", 24 * 3600):
            return
        text = _MENTION.sub("", event.get("text") or "").strip()
        turn = Turn(
            "slack",
            place.session,
            event["user"],
            f"{event['channel']}:{event['ts']}",
            text=text,
            categories=self.settings.categories_for("" if place.is_dm else place.channel),
        )
        await self._react(place.channel, event["ts"], add=True)
        try:
            replies = await self.chat.handle(turn)
            for reply in replies:
                await self.post(place, reply, turn)
        except ServiceUnavailable:
            raise  # the turn queue retries it
        except Exception:
            log.exception("answering %s failed", turn.message_id)
            await self._post_quietly(place, APOLOGY)
        finally:
            await self._react(place.channel, event["ts"], add=False)

    async def _answer_click(self, body: dict, action: dict) -> None:
        pressed = await self._pressed(body, action, ButtonKind.CLARIFY)
        if pressed is None:
            return
        place, user, button = pressed
        turn = Turn(
            "slack",
            place.session,
            user,
            f"action:{body.get('container', {}).get('message_ts')}:{action.get('action_ts')}",
            answer=ClarificationAnswer(button.ref, button.value),
            categories=self.settings.categories_for("" if place.is_dm else place.channel),
        )
        label = action.get("text", {}).get("text", "")
        try:
            async for event in self.chat.stream(turn):
                if event is ACCEPTED:
                    await self._show_choice(body, label, user)
                elif isinstance(event, Reply) and event.kind is ReplyKind.NOTICE:
                    await self._ephemeral(place, user, event.text)
                elif isinstance(event, Reply):
                    await self.post(place, event, turn)
        except ServiceUnavailable:
            raise
        except Exception:
            log.exception("resuming %s failed", turn.message_id)
            await self._post_quietly(place, APOLOGY)

    async def _record_vote(self, body: dict, action: dict) -> None:
        pressed = await self._pressed(body, action, ButtonKind.FEEDBACK)
        if pressed is None:
            return
        place, user, button = pressed
        await self.chat.record_feedback(place.session, button.ref, user, 1 if button.value else -1)
        await self._ephemeral(place, user, THANKS[1 if button.value else 0])

    async def _pressed(self, body: dict, action: dict, kind: ButtonKind) -> tuple[Place, str, Button] | None:
        """Where a button was pressed, by whom, and what its verified value names — or None,
        after telling the person, when the value is forged, altered or from elsewhere."""
        place, user = _place_of_click(body), body["user"]["id"]
        try:
            button = self.signer.verify(action.get("value", ""), place.session)
        except InvalidToken as exc:
            log.warning("rejected a button in %s: %s", place.channel, exc)
            button = None
        if button is None or button.kind is not kind:
            await self._ephemeral(place, user, INVALID_BUTTON)
            return None
        return place, user, button

    # --- Slack output --------------------------------------------------------------------------

    async def post(self, place: Place, reply: Reply, turn: Turn) -> None:
        """A reply in the place's thread (or the DM itself); long answers take several messages.

        Each message carries its turn and part in its metadata. A turn redelivered by the queue
        (its worker died, perhaps after posting) first reads back what was posted and skips it."""
        delivery = current_delivery.get()
        posted = await self._posted_parts(place, turn) if delivery is not None and delivery.attempt > 1 else set()
        for part, (blocks, fallback) in enumerate(self.render(reply, place, turn)):
            if part in posted:
                log.info("part %d of the reply to %s was already posted", part, turn.message_id)
                continue
            await self.client.chat_postMessage(
                channel=place.channel,
                thread_ts=place.thread_ts or None,
                text=fallback,
                blocks=blocks,
                unfurl_links=False,
                metadata={"event_type": "threadsage_reply", "event_payload": {"turn": turn.message_id, "part": part}},
            )

    async def _posted_parts(self, place: Place, turn: Turn) -> set[int]:
        """The parts of this turn's reply already in the thread (or the DM's latest messages);
        none if Slack cannot tell (then posting twice is the lesser harm than not at all)."""
        try:
            if place.thread_ts:
                response = await self.client.conversations_replies(
                    channel=place.channel, ts=place.thread_ts, include_all_metadata=True, limit=200
                )
            else:
                response = await self.client.conversations_history(channel=place.channel, include_all_metadata=True, limit=50)
        except SlackApiError as exc:
            log.warning("could not read back the replies to %s: %s", turn.message_id, exc.response.get("error"))
            return set()
        parts = set()
        for message in response.get("messages", []):
            payload = (message.get("metadata") or {}).get("event_payload") or {}
            if payload.get("turn") == turn.message_id:
                parts.add(int(payload.get("part", 0)))
        return parts

    def render(self, reply: Reply, place: Place, turn: Turn) -> list[tuple[list[dict], str]]:
        if reply.kind is ReplyKind.CLARIFICATION:
            return [(self._clarification_blocks(reply, place), _fallback(reply.text))]
        sections = [_section(to_mrkdwn(piece)) for piece in split_markdown(reply.text, SECTION_CHARS)]
        tail: list[dict] = []
        if reply.kind is ReplyKind.ANSWER:
            if reply.low_confidence:
                tail.append(_context("_Low confidence: the documents may not fully answer this._"))
            if reply.citations:
                tail.append(_context(_sources(reply.citations)))
            tail.append(self._feedback_block(place, turn))
        messages = []
        room = MAX_BLOCKS - len(tail)
        for start in range(0, len(sections), room):
            chunk = sections[start : start + room]
            last = start + room >= len(sections)
            messages.append((chunk + (tail if last else []), _fallback(reply.text)))
        return messages

    def _clarification_blocks(self, reply: Reply, place: Place) -> list[dict]:
        buttons = [
            {
                "type": "button",
                "action_id": f"clarify:{choice.id}",
                "text": {"type": "plain_text", "text": choice.label[:75], "emoji": True},
                "value": self.signer.sign(
                    Button(ButtonKind.CLARIFY, session_digest(place.session), reply.interrupt_id or "", int(choice.id))
                ),
            }
            for choice in reply.choices
        ]
        blocks = [_section(to_mrkdwn(reply.text))]
        if buttons:
            blocks.append({"type": "actions", "block_id": f"clarify-{(reply.interrupt_id or '')[:8]}", "elements": buttons})
        hint = "…or reply in this thread in your own words." if buttons else "Reply in this thread in your own words."
        blocks.append(_context(hint))
        return blocks

    def _feedback_block(self, place: Place, turn: Turn) -> dict:
        def button(action: str, emoji: str, vote: int) -> dict:
            token = self.signer.sign(Button(ButtonKind.FEEDBACK, session_digest(place.session), turn_ref(turn.message_id), vote))
            return {"type": "button", "action_id": f"feedback:{action}", "text": {"type": "plain_text", "text": emoji, "emoji": True}, "value": token}

        return {"type": "actions", "block_id": f"feedback-{turn_ref(turn.message_id)}", "elements": [button("up", "👍", 1), button("down", "👎", 0)]}

    async def _show_choice(self, body: dict, label: str, user: str) -> None:
        """The clarification message keeps its question, loses its buttons, shows the choice."""
        container = body.get("container", {})
        question = next(
            (b["text"]["text"] for b in body.get("message", {}).get("blocks", []) if b.get("type") == "section"),
            body.get("message", {}).get("text", ""),
        )
        choice = f"<@{user}> chose: *{to_mrkdwn(label)}*"
        try:
            await self.client.chat_update(
                channel=container.get("channel_id") or body["channel"]["id"],
                ts=container["message_ts"],
                text=f"{question} — {label}",
                blocks=[_section(question), _context(choice)],
            )
        except SlackApiError as exc:
            log.warning("could not update the clarification message: %s", exc.response.get("error"))

    async def _ephemeral(self, place: Place, user: str, text: str) -> None:
        try:
            await self.client.chat_postEphemeral(channel=place.channel, user=user, text=text, thread_ts=place.thread_ts or None)
        except SlackApiError as exc:
            log.warning("could not send an ephemeral notice: %s", exc.response.get("error"))

    async def _post_quietly(self, place: Place, text: str) -> None:
        try:
            await self.client.chat_postMessage(channel=place.channel, thread_ts=place.thread_ts or None, text=text)
        except SlackApiError as exc:
            log.error("could not post to %s: %s", place.channel, exc.response.get("error"))

    async def _react(self, channel: str, ts: str, add: bool) -> None:
        try:
            if add:
                await self.client.reactions_add(channel=channel, timestamp=ts, name=EYES)
            else:
                await self.client.reactions_remove(channel=channel, timestamp=ts, name=EYES)
        except SlackApiError as exc:
            log.debug("reaction %s failed: %s", "add" if add else "remove", exc.response.get("error"))


def _place_of_click(body: dict) -> Place:
    container = body.get("container", {})
    message = body.get("message", {})
    channel = container.get("channel_id") or body.get("channel", {}).get("id", "")
    thread = container.get("thread_ts") or message.get("thread_ts") or ""
    is_dm = channel.startswith("D")
    if not thread and not is_dm:
        thread = container.get("message_ts") or message.get("ts", "")
    team = body.get("team", {}).get("id", "") if isinstance(body.get("team"), dict) else ""
    return Place(team, channel, thread, is_dm)


def _section(mrkdwn: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn[:3000]}}


def _context(mrkdwn: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn[:3000]}]}


def _sources(citations: tuple[Citation, ...]) -> str:
    parts = []
    for c in citations:
        name = to_mrkdwn(" › ".join(p for p in (c["title"], c["heading"]) if p))
        if c["source"].startswith(("http://", "https://")):
            parts.append(f"[{c['number']}] <{c['source']}|{name}>")
        else:
            parts.append(f"[{c['number']}] {name} — `{to_mrkdwn(c['path'])}`")
    return "*Sources:* " + " · ".join(parts)


def _fallback(markdown: str) -> str:
    plain = to_plain(markdown)
    return plain if len(plain) <= TEXT_FALLBACK_CHARS else plain[: TEXT_FALLBACK_CHARS - 1] + "…"
