"""The seam's neutral types: a `Turn` in, the events of its handling out (`ACCEPTED`,
`Progress`, `Reply`), and the fixed notices every front-end shows alike."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from threadsage.adapters.documents.attachments import Attachment
from threadsage.graph.state import Citation
from threadsage.graph.steps import Found, Step
from threadsage.i18n import DEFAULT, Language, language_of, say
from threadsage.support.handoff import Contact

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
    members_of: frozenset[str] = frozenset()  # private channels whose threads the person may read here (`members`)
    attachments: tuple[Attachment, ...] = ()  # files sent with the message: context for this session only
    # Files the front-end downloads when the turn's time comes (under its conversation's lock), so
    # that a message sent right after waits for their download as for their reading.
    fetch_files: Callable[[], Awaitable[tuple[Attachment, ...]]] | None = None
    # The language a front-end knows for a turn whose text tells none (Telegram's language_code of
    # the person, the message a clicked button belongs to); None: English.
    language: Language | None = None

    @property
    def reply_language(self) -> Language:
        """What its notices are written in: its text's language, else the one the front-end knows."""
        return language_of(self.text, self.language or DEFAULT)


def turn_ref(message_id: str) -> str:
    """A short reference to the turn an answer belongs to: the feedback buttons carry it (8 hex
    characters, the 4 bytes a button token holds: `bots.tokens.REF_BYTES`) and the turn record
    keeps it as `answer_ref`, so that a vote finds its answer."""
    return hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]


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
    language: Language = DEFAULT  # the asker's: the platforms' own words around the reply follow it
    fixed: str = ""  # the catalogue key of a fixed notice ("busy", "apology"…)
    handoff: Contact | None = None  # whom to ask instead, when the documents don't cover the question


class Accepted(Enum):
    """The event a clarification answer yields once it has won: before the graph resumes."""

    ACCEPTED = "accepted"


ACCEPTED = Accepted.ACCEPTED


@dataclass(frozen=True)
class Progress:
    """The run of a turn entering a new step, for front-ends that show how far it has come."""

    step: Step
    detail: str = ""  # e.g. the sub-question a step of deep search looks up
    language: Language = DEFAULT
    found: Found | None = None  # what the search before this step found


@dataclass(frozen=True)
class Draft:
    """The answer's words so far, while the model is still writing them (the whole text, not a
    delta, so a front-end that skips some can show the newest). The final `Reply` replaces it;
    an empty draft withdraws what was shown (a draft the self-check rejected)."""

    text: str
    language: Language = DEFAULT


TurnEvent = Accepted | Progress | Draft | Reply


def notice(text: str, language: Language = DEFAULT) -> Reply:
    return Reply(ReplyKind.NOTICE, text, language=language)


def fixed_notice(key: str, language: Language) -> Reply:
    """A catalogue notice in the asker's language; its key also labels the turn's outcome."""
    return Reply(ReplyKind.NOTICE, say(key, language), language=language, fixed=key)


# The notices in English, for callers that compare texts (the catalogue holds every language).
EMPTY = say("empty")
APOLOGY = say("apology")
STALE = say("stale")
NOT_YOURS = say("not_yours")
RATE_LIMITED = say("rate_limited")
BUSY = say("busy")
NO_DOCUMENTS = say("no_documents")
