"""The answer's words while the model writes them: a run streamed with LangGraph's `messages`
mode, whose tokens of the calls written for the person (the back-end marks them: `WORDS` in the
run's metadata) become drafts — the whole text so far, for a front-end to show.

- A structured answer streams as a function call's arguments: they are read as partial JSON
  (langchain_core's `parse_partial_json`) and only the field with the words is shown; a server that
  ignores `tool_choice` sends the JSON (or plain text) as content, read the same way.
- Citation markers are left out of a draft ([n] is renumbered when the answer is composed), and an
  unfinished marker at its end is held back, so each draft extends the one before.
- A draft that cannot be extended (a retried or repaired call starting again, a new round of the
  self-check) is withdrawn first: an empty draft. A node withdraws the draft the self-check rejected
  (`withdraw`, through LangGraph's `custom` stream mode).
- Cheap: tokens are only gathered as they come; the text is worked out and shown at most every
  `DRAFT_INTERVAL` (the first words at once, the last ones when the call ends).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.json import parse_partial_json
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from threadsage.adapters.reasoning.llm.calls import WORDS

DRAFT_INTERVAL = 0.2  # seconds between two drafts at most: 5 a second, a few words each at 30 tokens a second
WITHDRAWN = "threadsage:draft-withdrawn"  # the custom stream event of a withdrawn draft

_MARKER = re.compile(r"\s*\[\d+\]")
_OPEN_MARKER = re.compile(r"\s*\[\d*$")


def withdraw(runtime: Runtime[Any]) -> None:
    """Take back the draft on show: the self-check found it wanting (a no-op in an unstreamed run)."""
    runtime.stream_writer(WITHDRAWN)


def readable(text: str) -> str:
    """The words as a draft shows them: no citation markers, none half-written at the end, no
    trailing space (so that the next draft extends this one)."""
    return _MARKER.sub("", _OPEN_MARKER.sub("", text)).strip()


def words_in(written: str, field: str) -> str:
    """The words in what a call has written so far: its text, or for a structured reply the
    `field` of the partial JSON object (also when a server sends it as content, perhaps fenced);
    a structured reply in plain text (a server that ignores `tool_choice`) is its text."""
    if not field:
        return written
    start = written.lstrip()
    if start.startswith("`"):  # a fence: the object starts on its next line
        start = start.partition("\n")[2].lstrip()
    if not start.startswith("{"):
        return "" if written.lstrip().startswith("`") else written
    try:
        value, _ = json.JSONDecoder().raw_decode(start)  # a whole object, perhaps followed by text
    except ValueError:
        value = parse_partial_json(start)
    found = value.get(field) if isinstance(value, dict) else None
    return found if isinstance(found, str) else ""


class Drafts:
    """Gathers the streamed tokens of the person's words and calls `show` with each new draft."""

    def __init__(
        self, show: Callable[[str], None], interval: float = DRAFT_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.show, self.interval, self.clock = show, interval, clock
        self.shown = ""
        self._message: str | None = None
        self._field = ""
        self._content: list[str] = []
        self._arguments: list[str] = []
        self._last = -math.inf

    def token(self, message: BaseMessage, metadata: dict[str, Any]) -> None:
        """One streamed chunk (LangGraph's `messages` mode): kept if it is the person's words."""
        field = metadata.get(WORDS)
        if field is None or not isinstance(message, AIMessageChunk):
            return
        if message.id != self._message:  # a new call (or the same one again)
            self._message, self._field = message.id, str(field)
            self._content, self._arguments = [], []
        content = message.content  # a list of blocks from some providers (Anthropic)
        self._content.append(content if isinstance(content, str) else "".join(map(_block_text, content)))
        for call in message.tool_call_chunks:
            if (call.get("index") or 0) == 0:
                self._arguments.append(call.get("args") or "")
        if message.chunk_position == "last" or self.clock() - self._last >= self.interval:
            self.flush()

    def flush(self) -> None:
        written = "".join(self._arguments) or "".join(self._content)
        text = readable(words_in(written, self._field))
        if text == self.shown:
            return
        if not text.startswith(self.shown):
            self.withdraw()
        if text:
            self.show(text)
            self.shown, self._last = text, self.clock()

    def withdraw(self) -> None:
        if self.shown:
            self.show("")
            self.shown = ""


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    return str(block.get("text", "")) if isinstance(block, dict) and block.get("type") == "text" else ""


async def run_drafting(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    context: Any,
    drafts: Drafts,
    **options: Any,
) -> dict[str, Any]:
    """What `graph.ainvoke` returns (the final state, with `__interrupt__` when the run paused),
    with the person's words passed to `drafts` as they are written."""
    latest: dict[str, Any] = {}
    interrupts: list[Any] = []
    async for part in graph.astream(
        graph_input,
        config,
        context=context,
        stream_mode=["values", "messages", "custom"],
        version="v2",
        **options,
    ):
        if part["type"] == "messages":
            drafts.token(*cast(tuple[BaseMessage, dict[str, Any]], part["data"]))
        elif part["type"] == "custom":
            if part["data"] == WITHDRAWN:
                drafts.withdraw()
        elif part["type"] == "values":
            latest = cast(dict[str, Any], part["data"])
            interrupts.extend(part.get("interrupts", ()))
    return {**latest, "__interrupt__": interrupts} if interrupts else latest
