"""What a Slack listener hands on as a `Job`: one payload type per kind of delivery.

A payload becomes the job's `payload` dict with `job()` and is read back with `model_validate`,
which refuses one that lacks what its handler reads. That dict is the turn queue's wire format,
kept as it was before these types: jobs queued by the previous version are still performed.
Slack's own objects (an event, an interaction's body, a command) travel whole, as Slack sent them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict

from threadsage.bots.slack.places import Place, place_of_click
from threadsage.delivery.jobs import Handler, Job


def _holding(*keys: str) -> AfterValidator:
    """A Slack object (a dict) that has at least `keys`: the ones its handler reads."""

    def check(value: dict[str, Any]) -> dict[str, Any]:
        if missing := [key for key in keys if key not in value]:
            raise ValueError(f"lacks {', '.join(missing)}")
        return value

    return AfterValidator(check)


SlackObject = dict[str, Any]
Listener = Callable[[Callable[[], Awaitable[None]], SlackObject, SlackObject], Awaitable[None]]


class SlackJob(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: ClassVar[str]

    def job(self, order_key: str) -> Job:
        # Defaults left out: a field added since (a place's `private_for`) writes what the previous version wrote.
        return Job("slack", self.kind, self.model_dump(exclude_defaults=True), order_key)


J = TypeVar("J", bound=SlackJob)


class MessageJob(SlackJob):
    """A mention, a DM, or a follow-up in a thread the bot is part of."""

    kind = "message"
    event: Annotated[SlackObject, _holding("channel", "ts", "user")]
    place: Place
    help: bool = False  # a question in a help channel, asked without a mention (`help`)


class ExpertReplyJob(SlackJob):
    """A reply in a thread of the experts' channel: an escalation's answer, perhaps (`help`)."""

    kind = "expert_reply"
    event: Annotated[SlackObject, _holding("channel", "ts", "user", "thread_ts")]
    team: str


class HelpClickJob(SlackJob):
    """ "Still need help?" under an answer, or an expert's "Save as verified answer" (`help`)."""

    kind = "help_click"
    body: Annotated[SlackObject, _holding("user")]
    action: SlackObject


class ThreadChangedJob(SlackJob):
    """A thread a Slack source may have to read again: a ✅, an edit, a deletion; a channel gone
    (`ts` "*") (`resolving`)."""

    kind = "thread_changed"
    channel: str
    ts: str


class ResolveClickJob(HelpClickJob):
    """ "Resolved" under an answer in a help channel (`resolving`)."""

    kind = "resolve_click"


class EditJob(SlackJob):
    """A person edited a message that may be a question (see `edits`)."""

    kind = "edit"
    channel: str
    ts: str
    text: str
    edited_ts: str


class CommandJob(SlackJob):
    """`/ask`, as Slack posted the command."""

    kind = "command"
    command: Annotated[SlackObject, _holding("channel_id", "user_id", "trigger_id")]


class ShortcutJob(SlackJob):
    """The "Ask threadsage" message shortcut."""

    kind = "shortcut"
    body: Annotated[SlackObject, _holding("message", "channel", "user", "trigger_id")]


class HomeJob(SlackJob):
    """The App Home tab opened: publish it."""

    kind = "home"
    team: str
    user: str


class ClickJob(SlackJob):
    """A clarification option chosen."""

    kind = "click"
    body: Annotated[SlackObject, _holding("user")]
    action: SlackObject


class VoteJob(ClickJob):
    """👍 or 👎 under an answer."""

    kind = "vote"


class ShareJob(ClickJob):
    """ "Share in channel" or "Continue in a DM" under a private answer."""

    kind = "share"


class AssistantJob(SlackJob):
    """An assistant thread opened in Slack's AI panel, or the channel its person views changed."""

    kind = "assistant"
    event: Annotated[SlackObject, _holding("type", "assistant_thread")]
    team: str


class AgentJob(SlackJob):
    """Agent messaging: the Messages tab opened (`app_home_opened`), or the channel the person
    views changed (`app_context_changed`)."""

    kind = "agent"
    event: Annotated[SlackObject, _holding("type")]
    team: str
    user: str

    def queued(self) -> Job:
        """The job, in order with the person's other agent events."""
        return self.job(f"slack-agent:{self.team}:{self.user}")


def on_click(kind: type[ClickJob | HelpClickJob], dispatch: Callable[[Job], Awaitable[object]]) -> Listener:
    """A button's listener: acknowledged, then handed on as a job in order with its session."""

    async def listener(ack: Callable[[], Awaitable[None]], body: SlackObject, action: SlackObject) -> None:
        await ack()
        await dispatch(kind(body=body, action=action).job(place_of_click(body).session))

    return listener


def handler(
    kind: type[J], perform: Callable[[J], Awaitable[None]], give_up: Callable[[J], Awaitable[None]] | None = None
) -> Handler[J]:
    """The table's row for the jobs of `kind`."""
    return Handler(kind.kind, kind.model_validate, perform, give_up)
