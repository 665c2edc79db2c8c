"""The per-person rate limit of questions (clicks never count)."""

from __future__ import annotations

from threadsage.chat.turns import IDEMPOTENCY_TTL, Turn
from threadsage.delivery.current import current_delivery
from threadsage.memory.coordination import Coordinator


async def allowed(coordinator: Coordinator, turn: Turn, per_minute: int) -> bool:
    """Whether the person may ask now. Under the turn queue it decides once per turn: a turn
    redelivered after its worker died neither counts twice nor changes its answer."""

    async def allow() -> bool:
        return await coordinator.allow(f"rate:{turn.platform}:{turn.user_id}", per_minute, 60.0)

    if current_delivery.get() is None:
        return await allow()
    key = f"rate-decision:{turn.session_key}:{turn.message_id}"
    decided = await coordinator.recall(key)
    if decided is None:
        decided = "allowed" if await allow() else "limited"
        await coordinator.remember(key, decided, IDEMPOTENCY_TTL)
    return decided == "allowed"
