"""The tools as steps of the graph: a question that is only arithmetic or dates is answered by its
tool before any search; a question out of the documents' scope goes to the web when a web search
is configured, and the answer says it comes from the web. Web results are never passages: they
cannot become citations of the documents."""

from __future__ import annotations

import re
from typing import Literal

from langgraph.runtime import Runtime

from threadsage.adapters.reasoner import CITATION
from threadsage.graph.context import BrainContext, WebWriter
from threadsage.graph.nodes.common import attempted, calls, traced
from threadsage.graph.state import ConversationState
from threadsage.i18n import language_of, say
from threadsage.tools.web import WebResult

WEB_LABEL = say("web_label")  # in English; the answer's own is in the question's language


def use_tools(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    direct = runtime.context.tools.direct(state["standalone"], language_of(state["question"]))
    if direct is None:
        return {}
    return {
        "answer": direct.text,
        "documents": [],
        "route": "tools",
        "confidence": 1.0 if direct.ok else 0.0,
        "trace": traced(state, "tools", f"{direct.tool}: {'answered' if direct.ok else 'refused'}"),
    }


async def web(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """Search the web for a question the documents don't cover; with nothing found, the refusal follows."""
    ctx = runtime.context
    assert ctx.tools.web is not None  # the edge comes here only when a web search is configured
    results = await ctx.tools.web.search(state["standalone"])
    if not results:
        return {"trace": traced(state, "web", f"{ctx.tools.web.name}: no results")}
    answer = await web_answer(ctx.web_writer, state["standalone"], results)
    return {
        "answer": answer,
        "documents": [],
        "route": "web_search",
        "confidence": state["decision"]["confidence"],
        "llm_calls": calls(state, int(ctx.web_writer is not None)),
        "trace": traced(state, "web", f"{ctx.tools.web.name}: {len(results)} results"),
    }


def after_web(state: ConversationState) -> Literal["answered", "fallback"]:
    return "answered" if state.get("route") == "web_search" else "fallback"


async def web_answer(writer: WebWriter | None, question: str, results: list[WebResult]) -> str:
    """The labelled answer, its [n] turned into [web n], the sources listed as links (with no
    writer, the offline back-end, the results' own words are listed)."""
    written = None
    if writer is not None:
        written = await attempted(writer(question, results), "web answer")
    if written is not None:
        body = CITATION.sub(lambda m: f"[web {m.group(1)}]" if int(m.group(1)) <= len(results) else "", written)
    else:  # the offline back-end, or a model that failed: the results' own words
        body = "\n".join(f"- {r.content or r.title} [web {n}]" for n, r in enumerate(results[:3], start=1))
    sources = "\n".join(f"{n}. [{_plain(r.title)}]({r.url})" for n, r in enumerate(results, start=1))
    language = language_of(question)
    label, listed = say("web_label", language), say("web_sources", language)
    return f"{label}\n\n{body.strip()}\n\n{listed}\n{sources}"


def _plain(title: str) -> str:
    """A title that cannot break its Markdown link nor look like a citation."""
    return re.sub(r"[\[\]()]", "", title).strip() or "link"
