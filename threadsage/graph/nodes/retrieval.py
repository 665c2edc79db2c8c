"""The retrieval strategies and the self-check loop (Self-RAG).

retrieve → generate (numbered citations, and the passages the answer relies on: the grading, in
the same model call) → judge → finish, or rewrite the query and go round again; an answer that
relies on no passage goes round again without being judged. Two brakes stop the loop: `max_hops`
and the per-turn budget of reasoning calls. When they bite, the best-scoring answer so far is
returned, marked low-confidence — not a canned refusal.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from threadsage.adapters.questions.exclusion import split_exclusion, without_excluded
from threadsage.adapters.reasoner import GroundedAnswer, Passage, cited, renumbered
from threadsage.adapters.reasoning.attribution import attributed
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.graph.context import BrainContext
from threadsage.graph.drafts import withdraw
from threadsage.graph.nodes.common import attempted, calls, traced
from threadsage.graph.nodes.evidence import search
from threadsage.graph.nodes.rerank import reranked
from threadsage.graph.state import ConversationState
from threadsage.i18n import language_of, say

CODE_MARKER = "```"


async def retrieve(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    ctx = runtime.context
    code_only = state.get("route") == "code_search"
    k = ctx.policy.retrieve_k * (2 if code_only else 1)
    documents = await search(state, ctx, state["search_query"], k, state.get("focus") or None)
    documents = without_excluded(documents, split_exclusion(state["standalone"]))
    if code_only:
        documents = [d for d in documents if CODE_MARKER in d["text"]][: ctx.policy.retrieve_k]
    hops = state.get("hops", 0) + 1
    return {
        "documents": documents,
        "hops": hops,
        "trace": traced(
            {**state, "hops": hops}, "retrieve", f"{len(documents)} passages for: {state['search_query'][:120]}"
        ),
    }


async def generate(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """Answer from the passages, keeping those the answer relies on. Fast retrieval answers from
    the router's top evidence."""
    ctx = runtime.context
    state = {**state, **await reranked(state, runtime)}  # a no-op without a reranker
    documents = state.get("documents", [])
    if state.get("route") == "fast_retrieval":
        documents = documents[: ctx.policy.fast_k]
    if not documents:
        key = "no_code" if state.get("route") == "code_search" else "not_covered"
        message = say(key, language_of(state["question"]))
        return {"documents": [], "answer": message, "trace": traced(state, "generate", "no passages")}
    result = await attempted(ctx.reasoner.answer(state["standalone"], documents, ctx.images), "the answer")
    if result is None:
        return {**await extracted(state, documents), "llm_calls": calls(state)}
    answer, kept = relied_on(result, documents)
    return {
        "documents": kept,
        "answer": answer,
        "llm_calls": calls(state),
        "trace": traced(state, "generate", f"answer relies on {len(kept)} of {len(documents)} passages"),
    }


async def extracted(state: ConversationState, documents: list[Passage]) -> ConversationState:
    """The model could not answer: the passages' own best sentences (the offline back-end's
    extract), said to be that, not judged."""
    extract = await OfflineReasoner().extract(state["standalone"], documents)
    language = language_of(state["question"])
    answer, kept = relied_on(GroundedAnswer(answer=f"{say('model_failed', language)}\n\n{extract}"), documents)
    return {
        "documents": kept,
        "answer": answer,
        "unchecked": True,
        "low_confidence": True,
        "trace": traced(state, "generate", f"model failed: extract from {len(kept)} of {len(documents)} passages"),
    }


def relied_on(result: GroundedAnswer, documents: list[Passage]) -> tuple[str, list[Passage]]:
    """The passages the answer says it uses or cites, in their order, and the answer renumbered
    to them: what the judge checks and the citations point at, as when a grade dropped the rest.
    An answer without [n] markers gets them where its sentences stand in the passages it uses."""
    answer = attributed(result.answer, documents, result.used)
    numbers = sorted((set(result.used) | cited(answer)) & set(range(1, len(documents) + 1)))
    return (
        renumbered(answer, {old: new for new, old in enumerate(numbers, start=1)}),
        [documents[n - 1] for n in numbers],
    )


async def judge(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """Score the answer; remember the best one in case the loop runs out."""
    documents = state["documents"]
    verdict = await attempted(runtime.context.reasoner.judge(state["standalone"], documents, state["answer"]), "judge")
    if verdict is None:
        return {
            "unchecked": True,
            "low_confidence": True,
            "llm_calls": calls(state),
            "trace": traced(state, "judge", "judge failed: the answer is kept, unchecked"),
        }
    if verdict.score < runtime.context.policy.good_enough:
        withdraw(runtime)  # not shown while the loop looks again (or settles on the best answer)
    update: ConversationState = {
        "llm_calls": calls(state),
        "trace": traced(state, "judge", verdict.reasoning[:160], grounded=verdict.grounded, useful=verdict.useful),
        "confidence": verdict.score,
    }
    if verdict.score > state.get("best_score", -1.0):
        update |= {"best_answer": state["answer"], "best_score": verdict.score, "best_documents": documents}
    return update


async def rewrite(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """A better query from the model; if it fails, the question's content words (as offline).
    The answer before it is not the turn's: its draft goes."""
    withdraw(runtime)
    documents = state.get("documents", [])
    written = await attempted(runtime.context.reasoner.rewrite(state["standalone"], documents), "rewrite")
    query = " ".join((written or await OfflineReasoner().rewrite(state["standalone"], documents)).split())
    query = query or state["standalone"]
    note = "new query" if written is not None else "rewrite failed, content words"
    return {
        "search_query": query,
        "llm_calls": calls(state),
        "trace": traced(state, "rewrite", f"{note}: {query[:160]}"),
    }


def settle(state: ConversationState) -> ConversationState:
    """The loop ran out: return the best answer seen, marked low-confidence."""
    if state.get("best_answer"):
        return {
            "answer": state["best_answer"],
            "documents": state.get("best_documents", []),
            "confidence": state.get("best_score", 0.0),
            "low_confidence": True,
            "trace": traced(state, "settle", "brakes reached: best answer so far"),
        }
    return {
        "answer": say("not_covered", language_of(state["question"])),
        "documents": [],
        "low_confidence": True,
        "trace": traced(state, "settle", "brakes reached: nothing relevant found"),
    }


# --- conditional edges ---------------------------------------------------------------------


def after_judge(state: ConversationState, runtime: Runtime[BrainContext]) -> Literal["finish", "rewrite", "settle"]:
    if state.get("unchecked") or state.get("confidence", 0.0) >= runtime.context.policy.good_enough:
        return "finish"
    return "rewrite" if _may_loop(state, runtime) else "settle"


def after_generate(
    state: ConversationState, runtime: Runtime[BrainContext]
) -> Literal["judge", "finish", "rewrite", "settle"]:
    """Fast retrieval answers in one generation; the others are checked, unless the answer relies
        on no passage: then there is nothing to check, and the loop searches again. An answer extracted
    without the model is not judged by it either."""
    if state.get("route") == "fast_retrieval" or state.get("unchecked"):
        return "finish"
    if state.get("documents"):
        return "judge"
    return "rewrite" if _may_loop(state, runtime) else "settle"


def _may_loop(state: ConversationState, runtime: Runtime[BrainContext]) -> bool:
    """Another hop costs a rewrite, a generation (which grades) and a judgement."""
    policy = runtime.context.policy
    return state.get("hops", 0) < policy.max_hops and calls(state, 3) <= policy.llm_budget
