"""The answer's words shown as the model writes them, in Telegram.

- In a private chat: `sendMessageDraft` (Bot API 10.0; its `chat_id` is "the target private
  chat"), the whole text so far each time under one `draft_id` (Telegram animates the change),
  at most every `DRAFT_EVERY` seconds. Until the first words, the draft shows the step the turn is
  in ("Looking in the documents…", the deep search's sub-question), as Slack's status does. A
  draft is a 30-second preview: the reply itself is then sent as usual, with its keyboard. A
  withdrawn draft shows Telegram's "Thinking…" (an empty text).
- Elsewhere (groups, forum topics), where drafts are not offered: the first words are sent as a
  message (quoting the question, in the topic) and edited with the newest words, at most every
  `EDIT_EVERY` seconds — a group takes about 20 messages a minute, edits included — and the reply
  takes that message's place (`TelegramSender.deliver`).

Drafts are optional calls (`limits`): with many turns at once in a group, they are shown only
where the group's limit has room beyond the replies still to come, and the newest waits for it.
  A withdrawn draft leaves the words shown until the reply replaces them.

Drafts are plain text (a partial answer's Markdown may not be closed yet); what fails to show is
logged and the reply comes anyway.
"""

from __future__ import annotations

import hashlib
import logging

from telegram import Bot, Message
from telegram.constants import MessageLimit
from telegram.error import BadRequest, TelegramError

from threadsage.bots.pacing import NotNow, Pacer, optional
from threadsage.bots.replies import STEPS, found_text
from threadsage.bots.telegram.sending import Place
from threadsage.chat import Draft, Progress, Reply
from threadsage.i18n import say

log = logging.getLogger(__name__)

DRAFT_EVERY = 0.3  # seconds between two drafts in a private chat
EDIT_EVERY = 3.0  # seconds between two edits of the words shown in a group


def draft_id(turn_id: str) -> int:
    """A turn's draft identifier: non-zero, as Telegram requires, and the same on a redelivery."""
    return int.from_bytes(hashlib.sha256(turn_id.encode("utf-8", "surrogatepass")).digest()[:4]) % (2**31 - 1) + 1


class Drafts:
    """The drafts of one turn, shown in `place`; `message` is what a group turn showed."""

    def __init__(self, bot: Bot, place: Place, turn_id: str) -> None:
        self.bot = bot
        self.place = place
        self.draft_id = draft_id(turn_id)
        self.message: Message | None = None  # the words shown in a group, to be replaced by the reply
        self._latest: str | None = None  # the newest draft, not shown yet
        self._shown = ""
        self._words = False  # the answer's words have begun: steps no longer show
        self._pacer = Pacer(DRAFT_EVERY if place.private else EDIT_EVERY, self._show)

    async def accepted(self) -> None:
        """A clicked option's turn shows its choice elsewhere (`clicking`)."""

    async def progress(self, progress: Progress) -> None:
        """In a private chat, until the words come, the draft shows the step; elsewhere Telegram
        shows "typing…" (a step sent as a group message would be one more message to edit)."""
        if not self.place.private or self._words:
            return
        step = say(STEPS[progress.step], progress.language)
        if progress.found is not None:  # "Checking what I found… — Found 5 passages in 3 documents"
            step = f"{step} — {found_text(progress.found, progress.language)}"
        self._latest = f"{step} ({progress.detail})" if progress.detail else step
        await self._pacer.offer()

    async def refused(self, reply: Reply) -> bool:
        return False  # sent with the replies

    async def draft(self, draft: Draft) -> None:
        if not draft.text and not self.place.private:
            return  # what a group was shown stays until the reply replaces it
        self._latest = draft.text[: MessageLimit.MAX_TEXT_LENGTH]
        self._words = bool(draft.text)
        if not draft.text:  # withdrawn: at once, whatever waits
            await self._pacer.cancel()
            await self._pacer.show_now()
            return
        await self._pacer.offer()

    async def finish(self) -> Message | None:
        """No more drafts (the reply is next): what a group was shown, for the reply to replace."""
        await self._pacer.cancel()
        return self.message

    async def _show(self) -> None:
        """The newest draft, where the chat's flood limits have room to spare; else (`NotNow`)
        it waits, unless a newer one overtakes it."""
        text, self._latest = self._latest, None
        if text is None or (text == self._shown and self.message is not None):
            return
        try:
            with optional():
                await self._send(text)
            self._shown = text
        except NotNow:
            if self._latest is None:
                self._latest = text
            raise
        except BadRequest as exc:
            log.info("a draft was not shown: %s", exc.message)
        except TelegramError as exc:
            log.warning("a draft was not shown: %s", exc)

    async def _send(self, text: str) -> None:
        if self.place.private:
            # Without a text (not an empty one, which python-telegram-bot's ExtBot sends as "[]"):
            # Telegram's "Thinking…".
            await self.bot.send_message_draft(
                self.place.chat_id, self.draft_id, text or None, message_thread_id=self.place.topic
            )
        elif self.message is None:
            self.message = await self.bot.send_message(self.place.chat_id, text, **self.place.send_kwargs())
        else:
            await self.message.edit_text(text)
