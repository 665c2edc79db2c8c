"""A clicked clarification option's turn as Telegram shows it: the callback query answered once —
with the refusal as a toast, or silently as soon as the click is accepted, when the choice is shown
in place of the options and "typing…" starts — then the answer's drafts and its replies."""

from __future__ import annotations

from contextlib import AsyncExitStack

from telegram import CallbackQuery, Message

from threadsage.bots.telegram.drafting import Drafts
from threadsage.bots.telegram.sending import Place, TelegramSender, answer_query
from threadsage.chat import Reply, ReplyKind


class ClickShown(Drafts):
    """The display of one click's turn (`chat.showing.Display`); `answered`: whether the query
    has been answered (a repeat delivery answers it silently at the end)."""

    def __init__(
        self,
        send: TelegramSender,
        query: CallbackQuery,
        message: Message,
        place: Place,
        turn_id: str,
        stack: AsyncExitStack,
    ) -> None:
        super().__init__(send.bot, place, turn_id)
        self.send = send
        self.query = query
        self.clicked_on = message
        self.stack = stack  # holds "typing…" until the turn's replies are sent
        self.answered = False

    async def accepted(self) -> None:
        self.answered = True
        await answer_query(self.query, None)
        await self.send.show_choice(self.query, self.clicked_on)
        await self.stack.enter_async_context(self.send.typing(self.place))

    async def refused(self, reply: Reply) -> bool:
        if self.answered or reply.kind is not ReplyKind.NOTICE:
            return False
        self.answered = True
        await answer_query(self.query, reply.text)
        return True
