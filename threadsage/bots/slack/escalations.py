"""What an escalation to the experts is (`help`, `reviewing`): the question it carries, how its
message is marked, and the key that lets only one answer go back to the asker."""

from __future__ import annotations

from dataclasses import dataclass

from threadsage.bots.replies import QUESTION_CHARS

ESCALATION_EVENT = "threadsage_escalation"  # the metadata event type of an escalation
RELAY_EVENT = "threadsage_relay"  # …and of an expert's reply relayed to the asker


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


def relay_key(channel: str, thread: str) -> str:
    """Claimed by whatever answers an escalation first (an expert's reply, a posted draft): one answer."""
    return f"slack-relay:{channel}:{thread}"
