"""The knowledge base's tools for editors and agents: `search` (passages with their sources) and
`ask` (an answer with its citations, through the same graph and chat service as Slack's and
Telegram's questions; a conversation continues when its id is passed back).

The tools run on the HTTP thread's event loop; the knowledge base and the chat service live on the
main loop, which they reach through `MainLoopBridge` (threadsage/http/thread.py). A tool refuses with
a plain sentence (`ToolError`), never a trace."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from threadsage.adapters.knowledge import KnowledgeBase, passage
from threadsage.adapters.reasoner import Passage
from threadsage.bots.mcp.access import Reader
from threadsage.chat import ChatService
from threadsage.chat.turns import MAX_QUESTION_CHARS, Reply, ReplyKind, Turn, fixed_notice
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.http.thread import MainLoopBridge
from threadsage.memory.sessions import session_key

log = logging.getLogger(__name__)

READER = "threadsage.mcp_reader"  # where the gate leaves the request's reader in its ASGI scope
MAX_RESULTS = 20
CONVERSATION = re.compile(r"[A-Za-z0-9_-]{1,64}")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class Found(BaseModel):
    title: str
    section: str = Field(description="The heading path of the passage within its document")
    source: str = Field(description="Where the document is: its web link, else its path")
    text: str
    score: float


class SearchResult(BaseModel):
    passages: list[Found]


class Source(BaseModel):
    number: int = Field(description="The [n] the answer cites it by")
    title: str
    section: str
    source: str


class Answer(BaseModel):
    kind: Literal["answer", "clarification", "notice"]
    text: str
    citations: list[Source] = Field(default_factory=list)
    options: list[str] = Field(
        default_factory=list,
        description="A clarification's options: call `ask` again with one of them as the question, in the same "
        "conversation",
    )
    conversation: str = Field(description="Pass it to `ask` to follow up in this conversation (it keeps its memory)")


def knowledge_server(chat: ChatService, kb: KnowledgeBase, main_loop: MainLoopBridge) -> MCPServer:
    server: MCPServer = MCPServer(
        "threadsage",
        instructions="The organisation's documents: `search` returns passages with their sources; `ask` answers a "
        "question from them with citations, asks back when the question reads two ways, and keeps a conversation's "
        "memory when its id is passed back.",
    )

    async def search(query: str, ctx: Context, limit: int = 5) -> SearchResult:
        """Search the organisation's documents: the best passages for the query, each with its document, section
        and source."""
        reader = reader_of(ctx)
        query = _asked(query)
        limit = max(1, min(limit, MAX_RESULTS))
        try:
            readable = await main_loop.run(chat.members_only.readable(reader.categories, frozenset()))
            hits = await main_loop.run(kb.search(query, limit, readable))  # no members-only knowledge
        except Exception:
            log.exception("MCP search by %s failed", reader.id)
            raise ToolError("The search failed; try again in a moment.") from None
        return SearchResult(passages=[_found(passage(hit)) for hit in hits])

    async def ask(question: str, ctx: Context, conversation: str = "") -> Answer:
        """Ask a question about the organisation's documents: an answer with numbered citations, or a
        clarification with options when the question reads two ways. Pass the returned `conversation` back to
        follow up (or to answer a clarification) with the memory of what was asked before."""
        reader = reader_of(ctx)
        question = _asked(question)
        if conversation and not CONVERSATION.fullmatch(conversation):
            raise ToolError("`conversation` is the id an earlier answer returned (letters, digits, - and _).")
        conversation = conversation or uuid.uuid4().hex
        turn = Turn(
            "mcp",
            session_key("mcp", reader.id, conversation),
            f"mcp:{reader.id}",
            uuid.uuid4().hex,
            text=question,
            categories=reader.categories,
        )
        try:
            replies = await main_loop.run(chat.handle(turn))
        except ServiceUnavailable:
            raise ToolError("The service is unavailable for a moment; ask again shortly.") from None
        return _answer(replies, conversation, turn)

    server.add_tool(search, annotations=READ_ONLY, structured_output=True)
    server.add_tool(ask, annotations=READ_ONLY, structured_output=True)
    return server


def reader_of(ctx: Context) -> Reader:
    """The reader the gate checked for this request; none (a call that did not come through the
    gate) reads nothing."""
    request: Any = ctx.request_context.request
    reader = request.scope.get(READER) if request is not None else None
    if not isinstance(reader, Reader):
        raise ToolError("Not authorised.")
    return reader


def _asked(text: str) -> str:
    text = text.strip()
    if not text:
        raise ToolError("The question is empty.")
    if len(text) > MAX_QUESTION_CHARS:
        raise ToolError(f"The question is longer than {MAX_QUESTION_CHARS} characters; shorten it.")
    return text


def _found(p: Passage) -> Found:
    return Found(
        title=p["title"], section=p["heading"], source=p.get("url") or p["path"], text=p["text"], score=p["score"]
    )


def _answer(replies: list[Reply], conversation: str, turn: Turn) -> Answer:
    """The turn's replies as one answer: the answer or clarification, with any notices before it.
    No reply to a new message means the asker was told of the rate limit already this minute: an
    MCP client is told again (a chat would be flooded; a tool call must not come back empty)."""
    if not replies:
        replies = [fixed_notice("rate_limited", turn.reply_language)]
    main = next((r for r in replies if r.kind is not ReplyKind.NOTICE), None)
    notices = [r.text for r in replies if r is not main]
    text = "\n\n".join([*notices, main.text] if main else notices)
    if main is None:
        return Answer(kind="notice", text=text, conversation=conversation)
    citations = [
        Source(number=c["number"], title=c["title"], section=c["heading"], source=c.get("url") or c["path"])
        for c in main.citations
    ]
    return Answer(
        kind="answer" if main.kind is ReplyKind.ANSWER else "clarification",
        text=text,
        citations=citations,
        options=[choice.label for choice in main.choices],
        conversation=conversation,
    )
