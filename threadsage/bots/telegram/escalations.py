"""What the Telegram experts' loop keeps in the coordinator (`help`, `reviewing`): the question an
escalation's message carries, and the key that lets only one answer go back to the asker."""

from __future__ import annotations


def escalated_key(experts: int, escalation: int) -> str:
    """The question an escalation (a message in the experts' group) is about: where it was asked,
    by whom, what, in which language."""
    return f"tg-escalated:{experts}:{escalation}"


def relay_key(experts: int, escalation: int) -> str:
    """Claimed by whatever answers an escalation first (an expert's reply, a posted draft): one answer."""
    return f"tg-relay:{experts}:{escalation}"
