"""The terminal chat: the same chat service as Slack and Telegram, options as numbered choices.

On a terminal it renders Markdown with rich; with piped standard input it prints plain lines, so
scripts can drive it (a line with just a number picks that option of the open clarification).

An answer's words are printed as the model writes them (the service's drafts): on a terminal in a
live area that the final reply replaces; piped, as a growing line, after which only what the
reply adds is printed (its sources, a note) — or, when the reply is not what was shown (a draft
the self-check withdrew, the documents' own words after a failure), the reply whole.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from threadsage.bots.render import to_plain
from threadsage.bots.replies import handoff_markdown, source_markdown
from threadsage.chat import (
    ChatService,
    ClarificationAnswer,
    Draft,
    Progress,
    Reply,
    ReplyKind,
    Turn,
    readable,
    run_shown,
)
from threadsage.i18n import say
from threadsage.memory.sessions import session_key

HELP = """Ask a question about the documents. Commands:
  /new   start a new conversation (forget this one)
  /help  show this help
  /quit  leave (Ctrl-D works too)
When I ask back, type the number of an option or answer in your own words."""


class TerminalChat:
    def __init__(
        self,
        chat: ChatService,
        session: str,
        console: Console,
        read_line: Callable[[str], str] | None = None,
        user: str = "terminal-user",
    ) -> None:
        self.chat = chat
        self.key = session_key("terminal", "local", session)
        self.console = console
        self.fancy = console.is_terminal
        self.user = user
        self._read_line = read_line or (console.input if self.fancy else _read_stdin_line)
        self._pending: Reply | None = None

    async def run(self) -> None:
        while True:
            try:
                line = await asyncio.to_thread(self._read_line, "[bold cyan]you>[/] " if self.fancy else "")
            except (EOFError, KeyboardInterrupt):
                break
            line = line.strip()
            if line in ("/quit", "/exit"):
                break
            if line == "/help":
                self._say(HELP)
            elif line == "/new":
                await self.chat.reset(self.key, "terminal")
                self._pending = None
                self._say("Started a new conversation.")
            elif line:
                await self.ask(line)

    async def ask(self, line: str) -> None:
        """One turn: its drafts as they come, then its replies."""
        drafts = _Drafts(self.console, self.fancy)
        try:
            replies = await run_shown(self.chat, self._turn(line), drafts)
        finally:
            drafts.stop()
        for reply in replies:
            self.show(reply, drafts.take())

    def _turn(self, line: str) -> Turn:
        message_id = uuid.uuid4().hex
        pending = self._pending
        if (
            pending
            and pending.interrupt_id
            and line.isascii()
            and line.isdigit()
            and 1 <= int(line) <= len(pending.choices)
        ):
            answer = ClarificationAnswer(pending.interrupt_id, int(line) - 1)
            return Turn("terminal", self.key, self.user, message_id, answer=answer)
        return Turn("terminal", self.key, self.user, message_id, text=line)

    def show(self, reply: Reply, printed: str = "") -> None:
        """Print `reply`; piped, its text only where the `printed` draft did not already say it."""
        self._pending = reply if reply.kind is ReplyKind.CLARIFICATION else None
        lines = [reply.text]
        if printed:
            said = readable(reply.text)
            rest = said[len(printed) :] if said.startswith(printed) else None
            self.console.out(rest if rest is not None else " …", highlight=False)
            if rest is not None:
                lines = [""]
        if reply.kind is ReplyKind.CLARIFICATION:
            lines += [f"  {i}. {choice.label}" for i, choice in enumerate(reply.choices, start=1)]
            lines.append("(type a number, or answer in your own words)")
        if reply.handoff:
            lines.append(to_plain(handoff_markdown(reply)))
        if reply.low_confidence:
            lines.append(say("low_confidence", reply.language))
        if reply.citations:
            lines.append(f"{say('sources', reply.language)}:")
            lines += [f"  {to_plain(source_markdown(c))}" for c in reply.citations]
        if self.fancy:
            self.console.print(Markdown(reply.text) if reply.kind is ReplyKind.ANSWER else reply.text)
            for line in lines[1:]:
                self.console.print(line, highlight=False, markup=False)
            self.console.print()
        elif text := "\n".join(lines).removeprefix("\n"):
            self._say(text)
        else:
            self.console.print("")

    def _say(self, text: str) -> None:
        self.console.print(text, highlight=False, markup=False)
        if not self.fancy:
            self.console.print("")


class _Drafts:
    """The answer's words as the model writes them: on a terminal in a live area that the reply
    replaces, piped as a growing line (`printed`, which the first reply does not repeat)."""

    def __init__(self, console: Console, fancy: bool) -> None:
        self.console = console
        self.fancy = fancy
        self.printed = ""
        self._live: Live | None = None

    async def accepted(self) -> None:
        """The terminal's choice is the number typed: nothing more to show."""

    async def progress(self, progress: Progress) -> None:
        """The terminal shows the words, not the steps."""

    async def refused(self, reply: Reply) -> bool:
        return False  # printed with the replies

    async def draft(self, draft: Draft) -> None:
        if not self.fancy:
            self.printed = self._grown(draft.text)
            return
        if self._live is None:
            self._live = Live(Text(""), console=self.console, transient=True, auto_refresh=False)
            self._live.start()
        self._live.update(Text(draft.text), refresh=True)

    def _grown(self, text: str) -> str:
        """Print what `text` adds to the words printed; a draft taken back ends its line."""
        if text.startswith(self.printed):
            self.console.out(text[len(self.printed) :], end="", highlight=False)
            return text
        self.console.out(" …", highlight=False)
        return ""

    def take(self) -> str:
        """The words printed so far, for the reply that follows them (once)."""
        printed, self.printed = self.printed, ""
        return printed

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _read_stdin_line(_prompt: str) -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line
