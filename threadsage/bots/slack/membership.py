"""Which members-only knowledge a Slack turn may read (`chat.members`): the private channels whose
resolved threads the knowledge base holds and the person is a member of — in a DM any of them, in a
channel that channel only, for a person of another organisation (Slack Connect) none. Members are
read with `conversations.members` and kept a few minutes; a channel that cannot be read counts as
one the person is not in (fail-closed)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError

from threadsage.bots.slack.places import Place
from threadsage.bots.slack.sending import SlackSender
from threadsage.chat import ChatService
from threadsage.delivery.coordination import Coordinator

log = logging.getLogger(__name__)

MEMBERS_KEPT = 300.0  # seconds a channel's members are remembered
PAGE = 1000


@dataclass(frozen=True)
class Membership:
    chat: ChatService
    send: SlackSender
    coordinator: Coordinator
    own_teams: Callable[[], frozenset[str]]

    async def of(self, place: Place, user: str, user_team: str) -> frozenset[str]:
        """The private channels whose threads `user` may read in `place`."""
        if place.private_for or (user_team and user_team not in self.own_teams()):
            return frozenset()
        channels = await self.chat.members_only.channels()
        wanted = channels if place.is_dm else [c for c in channels if c == place.channel]
        return frozenset([c for c in wanted if user in await self.members(c)])

    async def members(self, channel: str) -> frozenset[str]:
        """A channel's members (none when they cannot be read), kept `MEMBERS_KEPT`."""
        key = f"slack-members:{channel}"
        kept = await self.coordinator.recall(key)
        if kept is not None:
            return frozenset(json.loads(kept))
        members: list[str] = []
        cursor = ""
        try:
            while True:
                response = await self.send.client.conversations_members(
                    channel=channel, limit=PAGE, cursor=cursor or None
                )
                members += response.get("members", [])
                cursor = (response.get("response_metadata") or {}).get("next_cursor", "")
                if not cursor:
                    break
        except SlackApiError as exc:
            log.warning("the members of %s could not be read: %s", channel, exc.response.get("error"))
            return frozenset()
        await self.coordinator.remember(key, json.dumps(members), MEMBERS_KEPT)
        return frozenset(members)
