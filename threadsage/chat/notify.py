"""The seam through which the core speaks first: a message nobody asked for just now (a gap that
closed, `threadsage.chat.knowledge_loop`). The core knows no platform: each bot registers a `Notifier` for
its platform with the chat service (`ChatService.notifiers`), which knows how to reach a place of
its session keys and what that place may read today."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from threadsage.chat.turns import Reply


@dataclass(frozen=True)
class Notice:
    """A message for the person who asked `message_id` in the session `session_key`."""

    session_key: str
    message_id: str  # the platform message that asked: the thread (or message) to answer under
    user_id: str
    reply: Reply
    direct: bool = False  # to the person in private instead of in the original thread


class Notifier(Protocol):
    def categories(self, session_key: str) -> tuple[str, ...] | None:
        """The categories the place of `session_key` may read now (None: every one), as for a
        new question there."""

    async def notify(self, notice: Notice) -> None:
        """Post `notice`; raises when the platform refused it."""
