"""What deep search asks of a back-end, and the findings it keeps.

Deep search answers a question in steps: a plan of sub-questions, each executed on its own
(retrieval, then a short cited sub-answer that sees the earlier findings), a new plan when a step
finds nothing or contradicts an earlier one, and one answer synthesised from the findings. A
`Researcher` performs the three reasoning acts; `LLMResearcher` (llm_research.py) and
`OfflineResearcher` (offline_research.py) implement it.

Every finding cites its own passages as [1], [2]…; the synthesis numbers all findings' passages
in one list (`pooled`), so the final answer's citations point into the documents of the turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypedDict

from pydantic import BaseModel, Field

from threadsage.adapters.reasoner import CITATION, Passage


class Finding(TypedDict):
    """One executed step: its sub-question, its sub-answer (citing `passages` as [n]) and how it went."""

    question: str
    answer: str
    found: bool
    contradicts: bool
    passages: list[Passage]


class StepResult(BaseModel):
    """The outcome of one step of deep search."""

    answer: str = Field(description="A short answer to the sub-question citing excerpts as [n]; empty if none.")
    found: bool = Field(description="True when the excerpts answer the sub-question.")
    contradicts: bool = Field(default=False, description="True when this answer conflicts with an earlier finding.")


class Researcher(Protocol):
    async def plan(self, question: str) -> list[str]:
        """Sub-questions (at most 3), to be executed in order."""

    async def step(
        self, question: str, sub_question: str, findings: Sequence[Finding], passages: Sequence[Passage]
    ) -> StepResult:
        """Answer one sub-question from its passages, in the light of the earlier findings."""

    async def replan(self, question: str, findings: Sequence[Finding], remaining: Sequence[str]) -> list[str]:
        """The sub-questions still to execute, given that the last step found nothing or contradicted."""

    async def synthesise(self, question: str, findings: Sequence[Finding]) -> str:
        """One answer from the findings, citing the pooled passages (see `pooled`) as [n]."""


def cited_passages(answer: str, passages: Sequence[Passage]) -> list[Passage]:
    """The passages an answer cites, in citation order; renumbers nothing."""
    numbers = dict.fromkeys(int(n) for n in CITATION.findall(answer) if 1 <= int(n) <= len(passages))
    return [passages[n - 1] for n in numbers]


def kept_for(answer: str, passages: Sequence[Passage]) -> tuple[str, list[Passage]]:
    """A sub-answer with only the passages it cites, renumbered 1.. in that order."""
    cited = cited_passages(answer, passages)
    position = {p["id"]: i for i, p in enumerate(cited, start=1)}

    def renumber(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[{position[passages[n - 1]['id']]}]" if 1 <= n <= len(passages) else ""

    return CITATION.sub(renumber, answer), cited


def pooled(findings: Sequence[Finding]) -> list[Passage]:
    """Every finding's passages in one list, in order, each once: the turn's documents."""
    seen: dict[str, Passage] = {}
    for finding in findings:
        for p in finding["passages"]:
            seen.setdefault(p["id"], p)
    return list(seen.values())


def in_pool(finding: Finding, pool: Sequence[Passage]) -> str:
    """A finding's sub-answer with its [n] renumbered to the pooled list."""
    number = {p["id"]: i for i, p in enumerate(pool, start=1)}
    passages = finding["passages"]

    def renumber(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[{number[passages[n - 1]['id']]}]" if 1 <= n <= len(passages) else ""

    return CITATION.sub(renumber, finding["answer"])


def cites_finding(answer: str, finding: Finding, pool: Sequence[Passage]) -> bool:
    """Whether the answer cites at least one of the finding's passages (pooled numbering)."""
    ids = {p["id"] for p in finding["passages"]}
    mine = {i for i, p in enumerate(pool, start=1) if p["id"] in ids}
    return any(int(n) in mine for n in CITATION.findall(answer))
