"""The seam's neutral types: a `Turn` in, the events of its handling out (`ACCEPTED`,
`Progress`, `Reply`), and the fixed notices every front-end shows alike."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from threadsage.adapters.attachments import Attachment
from threadsage.graph.state import Citation
from threadsage.graph.steps import Step

MAX_QUESTION_CHARS = 4000
IDEMPOTENCY_TTL = 24 * 3600.0


@dataclass(frozen=True)
class ClarificationAnswer:
    """A click on option `option` (0-based) of the clarification `interrupt_id` names. A typed
    answer is an ordinary `Turn.text`: the service takes it as the answer while one is pending."""

    interrupt_id: str
    option: int


@dataclass(frozen=True)
class Turn:
    platform: str  # "slack", "telegram", "terminal": for metrics and rate limits
    session_key: str
    user_id: str
    message_id: str
    text: str | None = None
    answer: ClarificationAnswer | None = None
    categories: tuple[str, ...] | None = None  # what this place may read: None = every category, () = none
    attachments: tuple[Attachment, ...] = ()  # files sent with the message: context for this session only


class ReplyKind(StrEnum):
    ANSWER = "answer"
    CLARIFICATION = "clarification"
    NOTICE = "notice"


@dataclass(frozen=True)
class Choice:
    id: str
    label: str


@dataclass(frozen=True)
class Reply:
    kind: ReplyKind
    text: str
    citations: tuple[Citation, ...] = ()
    choices: tuple[Choice, ...] = ()
    interrupt_id: str | None = None
    confidence: float | None = None
    low_confidence: bool = False
    route: str | None = None
    trace: tuple[dict[str, Any], ...] = ()


class Accepted(Enum):
    """The event a clarification answer yields once it has won: before the graph resumes."""

    ACCEPTED = "accepted"


ACCEPTED = Accepted.ACCEPTED


@dataclass(frozen=True)
class Progress:
    """The run of a turn entering a new step, for front-ends that show how far it has come."""

    step: Step
    detail: str = ""  # e.g. the sub-question a step of deep search looks up


TurnEvent = Accepted | Progress | Reply


def notice(text: str) -> Reply:
    return Reply(ReplyKind.NOTICE, text)


EMPTY = "Ask me a question about the documents — your message was empty."
APOLOGY = "Sorry — something went wrong while answering. Please try again in a moment."
STALE = "That question has already been answered or is no longer open."
NOT_YOURS = "Only the person who asked can answer this clarification."
RATE_LIMITED = "You're asking faster than I can keep up — please wait a minute and ask again."
BUSY = "I'm answering a lot of questions right now — please ask again in a minute."
NO_DOCUMENTS = (
    "There are no documents I may use here, so I can't answer in this conversation. An operator can allow "
    "categories for it (THREADSAGE_CHANNEL_CATEGORIES, THREADSAGE_DEFAULT_CATEGORIES)."
)
