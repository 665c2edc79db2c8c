"""Deep search: plan → execute the sub-questions one by one → replan when a step fails → synthesise.

Each step searches for its own sub-question and writes a short cited sub-answer that sees the
earlier findings. A step that finds nothing (or contradicts an earlier finding) gets a new plan.
The synthesis writes one answer from the findings, citing their passages; a side of a comparison
that the synthesis left uncited is added from its own finding, so both sides are always cited.

Three brakes, all visible in the trace: `deep_max_steps`, `deep_max_replans`, and the turn's
`deep_budget` of reasoning calls (which replaces `llm_budget` on this route). A move is made only
when the budget still leaves room for the synthesis after it.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from threadsage.adapters.reasoning.research import (
    Finding,
    StepResult,
    cites_finding,
    in_pool,
    kept_for,
    pooled,
)
from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.common import attempted, calls, traced
from threadsage.graph.nodes.evidence import search
from threadsage.graph.state import ConversationState
from threadsage.i18n import language_of, say

STEP_K = 4  # passages searched per step


async def plan(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    made = await attempted(runtime.context.researcher.plan(state["standalone"]), "deep search's plan")
    planned = (made or [])[:3] or [state["standalone"]]
    return {
        "sub_questions": planned,
        "findings": [],
        "replans": 0,
        "llm_calls": calls(state),
        "trace": traced(state, "plan", " | ".join(q[:80] for q in planned)),
    }


async def execute(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """The next planned step: its own search, then its sub-answer in the light of the earlier findings."""
    ctx = runtime.context
    sub_question, *remaining = state["sub_questions"]
    findings = state.get("findings", [])
    passages = await search(state, ctx, sub_question, STEP_K, state.get("focus") or None)
    step = ctx.researcher.step(state["standalone"], sub_question, findings, passages)
    result = await attempted(step, "a deep-search step") or StepResult(answer="", found=False)  # "not found"
    answer, cited = kept_for(result.answer, passages)
    found = result.found and bool(cited)
    finding = Finding(question=sub_question, answer=answer, found=found, contradicts=result.contradicts, passages=cited)
    outcome = "contradicts an earlier finding" if result.contradicts else f"{len(cited)} passages cited"
    n = len(findings) + 1
    return {
        "findings": [*findings, finding],
        "sub_questions": remaining,
        "hops": n,
        "llm_calls": calls(state),
        "trace": traced(
            {**state, "hops": n},
            "execute",
            f"step {n}: {sub_question[:100]} → {outcome if found else 'nothing found'}",
        ),
    }


async def replan(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    findings = state["findings"]
    remaining = state.get("sub_questions", [])
    made = runtime.context.researcher.replan(state["standalone"], findings, remaining)
    planned = await attempted(made, "deep search's replan") or []  # no further steps
    why = "contradiction" if findings[-1]["contradicts"] else "nothing found"
    return {
        "sub_questions": planned[:3],
        "replans": state.get("replans", 0) + 1,
        "llm_calls": calls(state),
        "trace": traced(state, "replan", f"{why}: " + (" | ".join(q[:80] for q in planned) or "no further steps")),
    }


async def synthesise(state: ConversationState, runtime: Runtime[BrainContext]) -> ConversationState:
    """One cited answer from the findings that found something."""
    found = [f for f in state.get("findings", []) if f["found"]]
    unplanned = len(state.get("sub_questions", []))
    if not found:
        return {
            "answer": say("not_covered", language_of(state["question"])),
            "documents": [],
            "low_confidence": True,
            "trace": traced(state, "synthesise", "no step found anything"),
        }
    pool = pooled(found)
    written = runtime.context.researcher.synthesise(state["standalone"], found)
    answer = await attempted(written, "the synthesis") or ""  # failed: the findings as they are
    missing = [f for f in found if not cites_finding(answer, f, pool)]
    for finding in missing:  # a side the synthesis dropped: its own cited sub-answer
        answer += f"\n\n**{finding['question'].rstrip('?')}**: {in_pool(finding, pool)}"
    answer = answer.strip()
    steps = len(state.get("findings", []))
    # a failed step that a replan took over is not a gap; one left as it was, or a step never run, is
    gaps = max(0, steps - len(found) - state.get("replans", 0)) + unplanned
    return {
        "answer": answer,
        "documents": pool,
        "confidence": round(len(found) / (len(found) + gaps), 3),
        "low_confidence": gaps > 0,
        "llm_calls": calls(state),
        "trace": traced(
            state,
            "synthesise",
            f"from {len(found)} of {steps} steps"
            + (f", {unplanned} left unplanned by the brakes" if unplanned else "")
            + (f"; {len(missing)} uncited finding(s) added" if missing else ""),
        ),
    }


def after_execute(
    state: ConversationState, runtime: Runtime[BrainContext]
) -> Literal["execute", "replan", "synthesise"]:
    """Replan after a failed step, go on with the plan, or stop: whichever the brakes allow."""
    policy = runtime.context.policy
    findings = state["findings"]
    last = findings[-1]
    steps_left = policy.deep_max_steps - len(findings)
    failed = not last["found"] or last["contradicts"]
    # a replan costs itself and the step it plans; every move keeps one call for the synthesis
    may_replan = state.get("replans", 0) < policy.deep_max_replans and calls(state, 3) <= policy.deep_budget
    if failed and may_replan and steps_left:
        return "replan"
    if state.get("sub_questions") and steps_left and calls(state, 2) <= policy.deep_budget:
        return "execute"
    return "synthesise"


def next_step(state: ConversationState, runtime: Runtime[BrainContext]) -> Literal["execute", "synthesise"]:
    """After a plan: its first step, unless the plan is empty or the budget leaves room only for the synthesis."""
    policy = runtime.context.policy
    if state.get("sub_questions") and calls(state, 2) <= policy.deep_budget:
        return "execute"
    return "synthesise"
