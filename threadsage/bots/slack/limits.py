"""Slack's documented rate limits, kept by the bot's one Web API client.

Limits are per method and workspace (a tier: Tier 3 "50+ per minute", Tier 4 "100+"; the Web API
docs' "Rate limits") and, for posting, per channel ("one message per second per channel", short
bursts allowed). The client admits each call through `pacing.Windows` before sending it: a call a
turn needs waits for room; one made `optional()` (a placeholder's step, a stream's start and its
appends, the 👀) takes room only beyond what the turns in flight keep for their replies, else
raises `NotNow` and shows later or never. So 50 answers streaming at once in a workspace meet no
429: they coalesce their appends instead. Slack's own 429 (another process of the app sharing the
workspace's limits) is still retried after its Retry-After (`app`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from threadsage.bots.pacing import Limit, Rule, Windows
from threadsage.bots.slack.places import Place

# Each window a little longer than Slack's minute: a call is counted when it leaves, Slack counts it
# when it arrives, and a slow connection between must not make 51 of 50.
TIER_2 = Limit(20, 62.0)
TIER_3 = Limit(50, 62.0)
TIER_4 = Limit(100, 62.0)
POSTING = Limit(10, 10.5)  # a message a second in a channel, ten at most at once

PER_WORKSPACE = {
    "chat.update": TIER_3,
    "chat.delete": TIER_3,
    "reactions.add": TIER_3,
    "reactions.remove": TIER_3,
    "chat.appendStream": TIER_4,
    "chat.startStream": TIER_2,  # the streams' start and stop: Tier 2 as slack-morphism keeps them (the
    "chat.stopStream": TIER_2,  # reference names no tier); the stricter reading, since a start is optional
}
POSTS = frozenset({"chat.postMessage", "chat.startStream", "chat.stopStream"})  # each a message event in its channel


def rules_of(method: str, params: dict[str, Any]) -> list[Rule]:
    rules: list[Rule] = []
    if (limit := PER_WORKSPACE.get(method)) is not None:
        rules.append((method, limit))
    if method in POSTS and (channel := params.get("channel")):
        rules.append((("channel", channel), POSTING))
    return rules


def reply_keys(place: Place) -> list[Hashable]:
    """What a turn's reply will need room in: its placeholder's (or stream's) update, a post."""
    return ["chat.update", ("channel", place.channel)]


class PacedClient(AsyncWebClient):
    """An `AsyncWebClient` whose every call keeps within `windows` (see the module)."""

    def __init__(self, windows: Windows, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.windows = windows

    async def api_call(  # type: ignore[override]  # the same signature, narrowed types
        self,
        api_method: str,
        *,
        http_verb: str = "POST",
        files: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        json: dict[str, Any] | None = None,
        headers: dict[str, Any] | None = None,
        auth: dict[str, Any] | None = None,
    ) -> AsyncSlackResponse:
        given = {**(params or {}), **(data or {}), **(json or {})}
        await self.windows.admit(rules_of(api_method, given))
        return await super().api_call(
            api_method,
            http_verb=http_verb,
            files=files,
            data=data,
            params=params,
            json=json,
            headers=headers,
            auth=auth,
        )
