"""The Telegram bot's side of the digest (`threadsage.chat.digest.Announcer`): messages to a chat
by its id (a group's is negative), as HTML within Telegram's limit, as answers are sent."""

from __future__ import annotations

from threadsage.bots.telegram.sending import Place, TelegramSender


class TelegramAnnouncer:
    def __init__(self, send: TelegramSender) -> None:
        self.send = send

    async def announce(self, target: str, markdown: str) -> None:
        await self.send.send_markdown(Place(int(target), private=False), markdown, None)
