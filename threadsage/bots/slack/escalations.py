"""What an escalation to the experts is (`help`, `reviewing`, `crossing`): the question it carries,
how its message is marked and shown, and the key that lets only one answer go back to the asker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from threadsage.bots.render import to_mrkdwn
from threadsage.bots.replies import ATTEMPT_CHARS, QUESTION_CHARS
from threadsage.bots.slack.blocks import context, section, sources
from threadsage.chat import Reply
from threadsage.i18n import Language, say

ESCALATION_EVENT = "threadsage_escalation"  # the metadata event type of an escalation
RELAY_EVENT = "threadsage_relay"  # …and of an expert's reply relayed to the asker
DRAFT_CHARS = 2900  # of a draft, shown whole where a section allows (3,000 characters)


@dataclass(frozen=True)
class Asked:
    """A question in a channel thread: where it is, who asked it, what it says."""

    channel: str
    ts: str
    user: str
    text: str

    @property
    def payload(self) -> dict[str, str]:
        return {"channel": self.channel, "ts": self.ts, "user": self.user, "question": self.text[:QUESTION_CHARS]}

    @classmethod
    def of(cls, payload: dict[str, str]) -> Asked:
        """The question an escalation's metadata names."""
        return cls(payload["channel"], payload["ts"], payload["user"], payload.get("question", ""))


def escalated_here(metadata: dict[str, Any]) -> Asked | None:
    """The Slack question a message's metadata says it escalates; None for any other message, and
    for an escalation of another platform's question (its payload names only that platform and the
    question: `crossing`)."""
    payload = metadata.get("event_payload") or {}
    if metadata.get("event_type") != ESCALATION_EVENT or payload.get("platform", "slack") != "slack":
        return None
    return Asked.of(payload) if {"channel", "ts", "user"} <= payload.keys() else None


def escalation_blocks(
    lead: str, attempt: Reply | None, language: Language, review: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """An escalation as the experts see it: `lead` (who asked where, the question), what the bot
    answered with its sources, or that the documents do not cover it, and how to answer. With
    `review` (a draft channel's buttons), the answer is a draft to post or discard."""
    blocks: list[dict[str, Any]] = [section(lead)]
    if attempt is not None:
        label = say("escalation_attempt" if review is None else "draft_attempt", language)
        shown = to_mrkdwn(attempt.text)[: ATTEMPT_CHARS if review is None else DRAFT_CHARS]
        blocks.append(section(f"{label}\n{shown}"))
        if attempt.citations:
            blocks.append(context(sources(attempt.citations, language)))
    else:
        blocks.append(context(say("escalation_uncovered", language)))
    if review is not None and attempt is not None:
        blocks.append(review)
    blocks.append(context(say("escalation_how" if review is None else "draft_how", language)))
    return blocks


def relay_key(channel: str, thread: str) -> str:
    """Claimed by whatever answers an escalation first (an expert's reply, a posted draft): one answer."""
    return f"slack-relay:{channel}:{thread}"
