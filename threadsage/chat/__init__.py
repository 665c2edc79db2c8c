"""The seam every front-end uses: a neutral `Turn` in, the events of its handling out, through
`ChatService` (see `service.py`); the types live in `turns.py`."""

from threadsage.chat.replies import answers_from_documents
from threadsage.chat.service import ChatService, session_config
from threadsage.chat.showing import Collecting, Display, run_shown
from threadsage.chat.turns import (
    ACCEPTED,
    APOLOGY,
    BUSY,
    EMPTY,
    NO_DOCUMENTS,
    NOT_YOURS,
    RATE_LIMITED,
    STALE,
    Accepted,
    Choice,
    ClarificationAnswer,
    Draft,
    Progress,
    Reply,
    ReplyKind,
    Turn,
    TurnEvent,
    notice,
    turn_ref,
)
from threadsage.graph.drafts import readable  # a reply's text as its drafts showed it
from threadsage.graph.state import Citation  # re-exported: front-ends take it from the seam
from threadsage.graph.steps import Found, Step

__all__ = [
    "ACCEPTED",
    "APOLOGY",
    "BUSY",
    "EMPTY",
    "NOT_YOURS",
    "NO_DOCUMENTS",
    "RATE_LIMITED",
    "STALE",
    "Accepted",
    "ChatService",
    "Choice",
    "Citation",
    "ClarificationAnswer",
    "Collecting",
    "Display",
    "Draft",
    "Found",
    "Progress",
    "Reply",
    "ReplyKind",
    "Step",
    "Turn",
    "TurnEvent",
    "answers_from_documents",
    "notice",
    "readable",
    "run_shown",
    "session_config",
    "turn_ref",
]
