"""The seam through which the core speaks first: a message nobody asked for just now (a gap that
closed, `threadsage.chat.knowledge_loop`; a question escalated to the experts of another platform
and their answer, `threadsage.chat.escalations`). The core knows no platform: each bot registers a
`Notifier` for its platform with the chat service (`chat.knowledge.register`), which knows how to
reach a place of its session keys and what that place may read today, how to show its experts a
question, and how to give the person who asked an expert's answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from threadsage.chat.turns import Reply
from threadsage.i18n import Language


@dataclass(frozen=True)
class Notice:
    """A message for the person who asked `message_id` in the session `session_key`."""

    session_key: str
    message_id: str  # the platform message that asked: the thread (or message) to answer under
    user_id: str
    reply: Reply
    direct: bool = False  # to the person in private instead of in the original thread


@dataclass(frozen=True)
class Escalation:
    """A question sent to experts on another platform than its own: what they are shown, and
    which question the answer goes back to."""

    ident: str  # "<platform>:<place>:<message>": the question (its bot answers it from this; the console's record)
    asker: str  # the person who asked, by name as the experts read it
    where: str  # the place it was asked in, by name
    question: str
    link: str  # to the question ("": it has none)
    language: Language
    attempt: Reply | None = None  # what the bot answered, with its sources (None: the documents do not cover it)

    @property
    def platform(self) -> str:
        return self.ident.partition(":")[0]


@dataclass(frozen=True)
class ExpertAnswer:
    """An expert's first reply to an escalation, for the person who asked."""

    expert: str  # by name, as the person who asked reads it
    text: str
    link: str  # to the reply ("": it has none)
    escalation: str  # the escalation it replies to: "<experts' place>:<message>"


class Notifier(Protocol):
    def categories(self, session_key: str) -> tuple[str, ...] | None:
        """The categories the place of `session_key` may read now (None: every one), as for a
        new question there."""

    async def notify(self, notice: Notice) -> None:
        """Post `notice`; raises when the platform refused it."""

    async def escalate(self, escalation: Escalation, experts: str) -> str:
        """Post `escalation` in the experts' place `experts` (one of this platform's), as this
        platform's escalations look; the posted message's id there (what a reply to it names).
        Raises when the platform refused it."""

    async def relay(self, escalation: Escalation, answer: ExpertAnswer) -> bool:
        """An expert's answer to the person who asked `escalation` (a question of this platform),
        in reply to it; False when the question (or its place) is gone."""
