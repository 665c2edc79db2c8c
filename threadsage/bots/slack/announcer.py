"""The Slack bot's side of the digest (`threadsage.chat.digest.Announcer`): a message in a channel,
by name (`#handbook-keepers`) or id, rendered as answers are, in Block Kit sections."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from threadsage.bots.render import to_mrkdwn_sections
from threadsage.bots.slack.blocks import fallback, section

DIGEST_EVENT = "threadsage_digest"  # the metadata event type that marks the digest


class SlackAnnouncer:
    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def announce(self, target: str, markdown: str) -> None:
        await self.client.chat_postMessage(
            channel=target,
            text=fallback(markdown),
            blocks=[section(piece) for piece in to_mrkdwn_sections(markdown)],
            unfurl_links=False,
            metadata={"event_type": DIGEST_EVENT, "event_payload": {}},
        )
