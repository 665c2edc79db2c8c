"""Deep search on the language model: the plan by decomposition, a structured call per step, a
structured replan, and a synthesis that cites the pooled passages. Every call goes through the
model back-end's own invoke, so the per-minute budget and the metrics count them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from threadsage.adapters.reasoner import CITATION, Passage
from threadsage.adapters.reasoning.llm import prompts
from threadsage.adapters.reasoning.llm.back_end import LLMReasoner, asked
from threadsage.adapters.reasoning.research import Finding, StepResult, in_pool, pooled

_MARKER = re.compile(r"\s*" + CITATION.pattern)  # a citation and the space before it


class Replan(BaseModel):
    questions: list[str] = Field(description="At most 3 sub-questions still to look up, in order.")


class LLMResearcher:
    def __init__(self, llm: LLMReasoner) -> None:
        self.llm = llm

    async def plan(self, question: str) -> list[str]:
        return await self.llm.decompose(question)

    async def step(
        self, question: str, sub_question: str, findings: Sequence[Finding], passages: Sequence[Passage]
    ) -> StepResult:
        user = (
            f"Question: {question}\n\nEarlier findings:\n{_plain(findings) or '(none yet)'}\n\n"
            f"Sub-question: {sub_question}\n\nExcerpts:\n{prompts.numbered(passages) or '(no excerpts found)'}"
        )
        return await self.llm.router(StepResult, prompts.STEP, user, self.llm.limits.max_tokens_answer)

    async def replan(self, question: str, findings: Sequence[Finding], remaining: Sequence[str]) -> list[str]:
        planned = "\n".join(f"- {q}" for q in remaining) or "(none)"
        user = f"Question: {question}\n\nFindings so far:\n{_plain(findings)}\n\nSteps still planned:\n{planned}"
        result = await self.llm.router(Replan, prompts.REPLAN, user)
        return [q for q in (" ".join(q.split()) for q in result.questions) if q][:3]

    async def synthesise(self, question: str, findings: Sequence[Finding]) -> str:
        pool = pooled(findings)
        steps = "\n\n".join(f"Sub-question: {f['question']}\nFinding: {in_pool(f, pool)}" for f in findings)
        system = prompts.in_language_of(prompts.SYNTHESISE, question)
        user = f"Question: {question}\n\nFindings:\n{steps}\n\nExcerpts:\n{prompts.numbered(pool)}"
        limit = self.llm.limits.max_tokens_synthesis
        return await self.llm.calls.text(self.llm.chat_model, limit, "synthesise", asked(system, user), words=True)


def _plain(findings: Sequence[Finding]) -> str:
    """Earlier findings without their citation numbers, which mean nothing in this step's excerpts."""
    return "\n".join(
        f"- {f['question']}: {_MARKER.sub('', f['answer']) if f['found'] else 'nothing found'}" for f in findings
    )
