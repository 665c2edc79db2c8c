"""Deep search without a language model: plans by splitting, steps by extraction.

The plan splits a comparison into one sub-question per side ("Lisbon vs Toronto expense limits" →
"Lisbon expense limits", "Toronto expense limits") and two questions joined by "and" into two.
A step's sub-answer is the offline back-end's extract from the passages it judges relevant; the
synthesis puts the sub-answers side by side under their sub-questions. Contradictions are not
detected offline (that needs reading, not matching).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from threadsage.adapters.reasoner import Passage, renumbered
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.adapters.reasoning.research import Finding, StepResult, in_pool, pooled
from threadsage.i18n import language_of, say
from threadsage.support.text import term_set

MAX_SUB_QUESTIONS = 3
_NAME = r"(?:[A-Z][\w’'-]*(?:\s+[A-Z][\w’'-]*)*|[\w’'-]+)"
# "A vs B", "A versus B", "A and B", "A or B", "A compared with B": the two sides nearest the connector.
_SIDES = re.compile(
    rf"(?P<a>{_NAME})\s+(?:vs\.?|versus|compared\s+(?:to|with)|and|or)\s+(?:the\s+)?(?P<b>{_NAME})",
)
_COMPARING = re.compile(
    r"\b(?:(?:what(?:'s| is| are)\s+)?the\s+differences?\s+(?:between|in)|how\s+do(?:es)?|differences?\s+between|"
    r"compare[ds]?|comparing|difference|differ|versus|vs\.?)\b\s*",
    re.IGNORECASE,
)
_QUESTION_WORD = re.compile(r"^\s*(what|which|who|when|where|how|why|is|are|can|do|does|should)\b", re.IGNORECASE)


def split_question(question: str) -> list[str]:
    """The sub-questions of a comparison or a conjunction; the question alone otherwise."""
    halves = re.split(
        r"[,;]?\s+and\s+(?=(?:what|which|who|when|where|how|why|is|are|can|do|does)\b)",
        question,
        maxsplit=1,
        flags=re.IGNORECASE,
    )
    if len(halves) == 2 and _QUESTION_WORD.match(halves[0]):
        return [h.strip().rstrip("?") + "?" for h in halves]
    for match in _SIDES.finditer(question):
        a, b = match.group("a"), match.group("b")
        if not (a[:1].isupper() and b[:1].isupper()) and not _COMPARING.search(question):
            continue  # "tea and coffee" in a plain question is not two sides of a comparison
        before, after = question[: match.start()], question[match.end() :]
        sides = [_tidy(f"{before}{side}{after}") for side in (a, b)]
        if all(sides) and sides[0] != sides[1]:
            return sides[:MAX_SUB_QUESTIONS]
    return [question]


def _tidy(text: str) -> str:
    """A side of a comparison as a question of its own: the comparing words dropped."""
    text = re.sub(r"\s+([?.!])", r"\1", " ".join(_COMPARING.sub("", text).split()))
    return text.strip(" ,;")


class OfflineResearcher:
    def __init__(self, reasoner: OfflineReasoner) -> None:
        self.reasoner = reasoner

    async def plan(self, question: str) -> list[str]:
        planned = split_question(question)
        return planned if len(planned) > 1 else await self.reasoner.decompose(question)

    async def step(
        self, question: str, sub_question: str, findings: Sequence[Finding], passages: Sequence[Passage]
    ) -> StepResult:
        verdicts = await self.reasoner.grade(sub_question, passages)
        relevant = [p for p, ok in zip(passages, verdicts, strict=False) if ok]
        if not relevant:
            return StepResult(answer="", found=False)
        # A section named after the sub-question's terms first: for "Lisbon hotel limits", the Lisbon
        # policy's "Hotel limits" before the Toronto one's, whose table merely mentions Lisbon.
        wanted = term_set(sub_question)
        relevant.sort(key=lambda p: -len(wanted & term_set(f"{p['title']} {p['heading']}")))
        answer = await self.reasoner.extract(sub_question, relevant)
        # The extract numbers `relevant`; the step's passages are `passages`: renumber.
        position = {p["id"]: i for i, p in enumerate(passages, start=1)}
        answer = renumbered(answer, {n: position[p["id"]] for n, p in enumerate(relevant, start=1)})
        return StepResult(answer=answer, found="[" in answer)

    async def replan(self, question: str, findings: Sequence[Finding], remaining: Sequence[str]) -> list[str]:
        """Search again for the step that found nothing, by its content words alone."""
        failed = findings[-1]["question"]
        again = await self.reasoner.rewrite(failed, [])
        return [again, *remaining] if again.lower() != failed.lower() else list(remaining)

    async def synthesise(self, question: str, findings: Sequence[Finding]) -> str:
        pool = pooled(findings)
        parts = [
            f"**{_heading(f['question'])}**\n{in_pool(f, pool).removeprefix(_lead_in(f['question'])).strip()}"
            for f in findings
        ]
        return "\n\n".join(parts)


def _lead_in(sub_question: str) -> str:
    """How the offline answer to a sub-question opens, in its language: dropped under its heading."""
    return say("from_documents", language_of(sub_question))


def _heading(sub_question: str) -> str:
    text = sub_question.rstrip("?").strip()
    return text[:1].upper() + text[1:]
