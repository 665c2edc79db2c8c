"""Understanding the question: start the turn, make a follow-up standalone, answer arithmetic and
dates by their tools, then decide how to answer the rest."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from langgraph.runtime import Runtime

from threadsage.adapters.questions import ambiguity
from threadsage.adapters.questions.exclusion import about_excluded, split_exclusion, without_excluded
from threadsage.adapters.questions.small_talk import is_small_talk
from threadsage.adapters.reasoner import MAX_OPTION_CHARS, ModelBusy, Passage, RouteDecision, passage_label
from threadsage.adapters.reasoning.offline.confidence import Frequencies, term_weights
from threadsage.graph.context import BrainContext, Policy
from threadsage.graph.nodes.begin import begin
from threadsage.graph.nodes.common import attempted, calls, history, traced
from threadsage.graph.nodes.tools import use_tools
from threadsage.graph.nodes.translate import search_across
from threadsage.graph.state import INTENT_STRATEGY, ConversationState, Decision, Strategy
from threadsage.i18n import DEFAULT, Language, language_of, say
from threadsage.support.text import term_set

log = logging.getLogger(__name__)


async def understand(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """`begin`, `contextualise` and `use_tools`, then `route` unless a model call was made before
    it, as one step of the graph. Every step is a checkpoint written to the database, and a turn
    killed within a step runs it again: with at most one model call in a step, it repeats at most
    that call, as it would with a step per function. A first question is therefore understood
    and routed in one step; a follow-up, made standalone by a model call, is routed in the next."""
    started = begin(state)
    state = {**state, **started, "messages": [*state.get("messages", []), *started["messages"]]}
    standalone = await contextualise(state, runtime)
    answered = use_tools({**state, **standalone}, runtime)
    understood: ConversationState = {**started, **standalone, **answered}
    if answered or "llm_calls" in standalone:
        return understood
    routed = await route({**state, **standalone}, runtime)  # `state` has what `begin` started
    return {**understood, **routed}


async def contextualise(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """The follow-up made standalone. A rewrite that shares no content word with the conversation
    was invented, not understood (a small model's "laptop maintenance records" became the topic of
    every later turn): the question is taken as typed, as when the call fails."""
    question = state["question"]
    earlier = history(state)
    if earlier and state.get("topic"):
        # The last question as it was finally understood (clarifications included).
        last = max(i for i, (role, _) in enumerate(earlier) if role == "user")
        earlier[last] = ("user", state["topic"])
    if not earlier:
        return {"standalone": question, "trace": traced(state, "contextualise", "first question")}
    written = await attempted(runtime.context.reasoner.contextualise(question, earlier), "contextualise")
    standalone = " ".join((written or "").split())
    if written is None:
        standalone, note = question, "failed: the question as typed"
    elif not term_set(standalone) & term_set(" ".join(text for _, text in earlier)):
        standalone, note = (
            question,
            f"rewrite shares no word with the conversation, the question as typed: {written[:120]}",
        )
    else:
        standalone, note = standalone or question, f"standalone: {standalone[:200]}"
    return {
        "standalone": standalone,
        "llm_calls": calls(state),
        "trace": traced(state, "contextualise", note),
    }


async def route(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """Retrieve evidence, ask the reasoner for a decision, resolve it to a strategy.

    The evidence serves twice: the router sees what the documents offer (so clarification options
    name real sections), and fast retrieval answers from it without searching again. What the
    question excludes ("…other than X") is left out of the search, and passages about it go last.
    """
    ctx = runtime.context
    question = state["standalone"]
    language = language_of(state["question"])
    exclusion = split_exclusion(question)
    k = ctx.policy.retrieve_k
    found, search_query, translated = await search_across(
        state, ctx, exclusion.query, 2 * k if exclusion else k, state.get("focus") or None
    )
    state = {**state, **translated}  # the translation's call and trace step come before the route's
    evidence = without_excluded(found, exclusion)[:k]
    if pinned := state.get("pinned"):
        evidence = [pinned, *(p for p in evidence if p["id"] != pinned["id"])][: ctx.policy.retrieve_k]
    # The deterministic checks run beside the router, in a thread (the first small-talk check loads
    # jieba's dictionary): no model call.
    checks = asyncio.create_task(
        asyncio.to_thread(_checks, question, state["question"], evidence, ctx.kb.document_frequencies)
    )
    try:
        proposal = await ctx.reasoner.route(question, evidence)
        failure = ""
    except ModelBusy:
        checks.cancel()
        raise  # not a router failure: the turn ends with a "busy" notice
    except Exception as exc:  # noqa: BLE001 - a router failure degrades to a clarification, never a crash
        log.warning("router failed (%s): asking the user instead", exc.__class__.__name__)
        proposal, failure = _clarify_from_evidence(evidence, language), f"router failed: {exc.__class__.__name__}; "
    proposal, backstop = _backstopped(proposal, *await checks, language)
    decision = resolve(
        proposal, evidence, ctx.policy, state.get("clarify_rounds", 0), language, state.get("unpicked") or []
    )
    return {
        "decision": decision,
        "route": decision["strategy"],
        "documents": evidence,
        "search_query": search_query,
        # The evidence is the first hop's retrieval for the strategies that answer from it.
        "hops": 1 if decision["strategy"] in ("fast_retrieval", "standard_retrieval") else 0,
        "llm_calls": calls(state),
        "trace": traced(
            state,
            "route",
            f"{failure}{backstop}{decision['intent']} → {decision['strategy']}: {decision['reasoning']}"
            + (f" (excluding: {'; '.join(x[:60] for x in exclusion.excluded)})" if exclusion else ""),
            confidence=decision["confidence"],
        ),
    }


def _checks(question: str, typed: str, evidence: list[Passage], frequencies: Frequencies) -> tuple[list[str], bool]:
    """The offline back-end's judgement beside the router's: the options when the evidence cannot
    tell the question's documents apart, and whether the message as `typed` is small talk."""
    return _alternatives(question, evidence, frequencies), is_small_talk(typed)


def _alternatives(question: str, evidence: list[Passage], frequencies: Frequencies) -> list[str]:
    """The options the evidence offers when the question cannot tell its documents apart (the
    offline back-end's check, threadsage/adapters/questions/ambiguity.py, its terms weighed by
    their rarity in the knowledge base); [] when it is clear."""
    exclusion = split_exclusion(question)
    wanted = term_set(exclusion.query)
    weights, _ = term_weights(wanted, frequencies)
    return [
        ambiguity.option(p)
        for p in ambiguity.alternatives(wanted, [p for p in evidence if not about_excluded(p, exclusion)], weights)
    ]


def _backstopped(
    proposal: RouteDecision, ambiguous: list[str], small_talk: bool, language: Language
) -> tuple[RouteDecision, str]:
    """The router's proposal, checked by the offline back-end's rules (no model call): a message
    those rules read as small talk is small talk (a small model sent "Thanks, that's all for now -
    bye!" to retrieval, three answer calls and 70 s for a goodbye), and a question the evidence
    says is ambiguous is asked back when the router did not ask (a question for the documents:
    not small talk, not out of scope)."""
    if small_talk and proposal.intent != "CHIT_CHAT":
        update = {"intent": "CHIT_CHAT", "confidence": 1.0, "clarify": False, "clarify_options": []}
        return proposal.model_copy(update=update), f"small talk (the router said {proposal.intent}); "
    if proposal.clarify or _clean_options(proposal.clarify_options) or len(ambiguous) < 2:
        return proposal, ""
    if proposal.intent in ("CHIT_CHAT", "UNKNOWN"):
        return proposal, ""
    update = {"clarify": True, "clarify_prompt": say("clarify_several", language), "clarify_options": ambiguous}
    return proposal.model_copy(update=update), f"ambiguous: {len(ambiguous)} documents match alike; "


def resolve(
    proposal: RouteDecision,
    evidence: list[Passage],
    policy: Policy,
    rounds: int,
    language: Language = DEFAULT,
    unpicked: Sequence[str] = (),
) -> Decision:
    """Explicit clarify wins, and so do options the router wrote, whatever flag it set (a model may
    fill the options and forget the flag); low confidence clarifies; otherwise the fixed intent →
    strategy map. Clarification needs options or at least a prompt (in the asker's `language`), and
    stops after `max_clarify_rounds` — or at once where it would offer again an option of the
    round the person just answered in words naming none of them (`unpicked`: "as an employee"):
    the same buttons again would ask the same question twice."""
    strategy: Strategy = INTENT_STRATEGY[proposal.intent]
    reasoning = proposal.reasoning
    proposed = _clean_options(proposal.clarify_options)
    wants_clarify = proposal.clarify or bool(proposed) or proposal.confidence < policy.clarify_threshold
    options = proposed or _clean_options(_evidence_options(evidence))
    prompt = proposal.clarify_prompt.strip()
    again = bool(set(options) & set(unpicked))
    if wants_clarify and (rounds >= policy.max_clarify_rounds or again):
        reasoning += (
            " (offered in the round answered: best effort)" if again else " (clarification rounds used up: best effort)"
        )
        if strategy in ("fallback", "direct_reply"):
            strategy = "standard_retrieval"
    elif wants_clarify:
        strategy = "clarify_needed"
        if not prompt:
            prompt = say("clarify_which" if len(options) >= 2 else "clarify_more", language)
        if len(options) < 2:
            options = []
    clarifying = strategy == "clarify_needed"
    return Decision(
        intent=proposal.intent,
        confidence=proposal.confidence,
        strategy=strategy,
        reasoning=reasoning,
        clarify_prompt=prompt if clarifying else "",
        clarify_options=options if clarifying else [],
        clarify_sources=[_source_of(option, evidence) for option in options] if clarifying else [],
    )


def _source_of(option: str, evidence: list[Passage]) -> Passage | None:
    """The passage an option names, when it was made from a passage's label."""
    stem = option.removesuffix("…")
    return next((p for p in evidence if passage_label(p).startswith(stem)), None)


def _clarify_from_evidence(evidence: list[Passage], language: Language) -> RouteDecision:
    return RouteDecision(
        intent="UNKNOWN",
        confidence=0.0,
        clarify=True,
        reasoning="could not decide how to answer",
        clarify_prompt=say("clarify_unsure", language),
        clarify_options=_evidence_options(evidence),
    )


def _evidence_options(evidence: list[Passage]) -> list[str]:
    """The distinct documents among the evidence, best first: options grounded in what exists."""
    seen: dict[str, str] = {}
    for p in evidence:
        seen.setdefault(p["path"], passage_label(p))
    return list(seen.values())


def _clean_options(options: list[str]) -> list[str]:
    """2–3 distinct, non-empty options that fit on a button."""
    out: list[str] = []
    for option in options:
        label = " ".join(str(option).split())
        if len(label) > MAX_OPTION_CHARS:
            label = label[: MAX_OPTION_CHARS - 1].rstrip() + "…"
        if label and label.lower() not in {o.lower() for o in out}:
            out.append(label)
    return out[:3] if len(out) >= 2 else []
