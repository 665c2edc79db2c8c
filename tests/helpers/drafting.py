"""A chat service whose answers arrive as `Draft`s first, for the front-ends' renderers.

`Drafting` is the real chat service (its graph, checkpoints, coordination) whose answer replies are
preceded by the drafts a streaming model would have produced: the answer's words, `first_token`
seconds after the run finished, then one word every 1/`words_per_second` s — each draft the whole
text so far, as `chat.turns.Draft` says — and the reply `last_step` seconds after the last draft
(a renderer that shows drafts at its own pace has shown the last one by then). `withdraw_after`:
after that many drafts an empty draft withdraws them (a self-check that rejected the draft) and
drafting starts over. Used until the chat service drafts from the model's own tokens; the
renderers see the same events either way."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass

from threadsage.chat import ChatService, Draft, Reply, ReplyKind, Turn, TurnEvent

_WORD = re.compile(r"\S+\s*")


@dataclass
class Drafting(ChatService):
    first_token: float = 0.0
    words_per_second: float = 200.0
    withdraw_after: int | None = None
    last_step: float = 0.0

    @classmethod
    def of(cls, chat: ChatService, **options: float | int | None) -> Drafting:
        fields = {f.name: getattr(chat, f.name) for f in dataclasses.fields(chat) if f.init}
        return cls(**fields, **options)  # type: ignore[arg-type]

    async def stream(self, turn: Turn, drafts: bool = True) -> AsyncGenerator[TurnEvent, None]:
        async with aclosing(super().stream(turn, drafts)) as events:  # closed in this task, should it stop early
            async for event in events:
                if drafts and isinstance(event, Reply) and event.kind is ReplyKind.ANSWER:
                    async for draft in self.drafts(event):
                        yield draft
                    await asyncio.sleep(self.last_step)
                yield event

    async def drafts(self, reply: Reply) -> AsyncGenerator[Draft, None]:
        await asyncio.sleep(self.first_token)
        words = _WORD.findall(reply.text)
        withdrawn = self.withdraw_after is None
        text, count = "", 0
        while True:
            for word in words:
                text += word
                count += 1
                yield Draft(text.rstrip(), reply.language)
                await asyncio.sleep(1 / self.words_per_second)
                if not withdrawn and count == self.withdraw_after:
                    break
            else:
                return
            withdrawn, text = True, ""
            yield Draft("", reply.language)
