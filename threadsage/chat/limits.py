"""The per-person rate limit of questions (clicks never count)."""

from __future__ import annotations

from threadsage.chat.turns import IDEMPOTENCY_TTL, Turn
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.current import current_delivery


async def allowed(coordinator: Coordinator, turn: Turn, per_minute: int) -> bool:
    """Whether the person may ask now. Under the turn queue it decides once per turn: a turn
    redelivered after its worker died neither counts twice nor changes its answer."""
    key = f"rate:{turn.platform}:{turn.user_id}"
    if current_delivery.get() is None:
        return await coordinator.allow(key, per_minute, 60.0)
    decision = f"{turn.session_key}:{turn.message_id}"
    return await coordinator.allow(key, per_minute, 60.0, decision=decision, decision_ttl=IDEMPOTENCY_TTL)
