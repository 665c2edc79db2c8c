"""Answer quality by kind of question, on handbooks whose questions are typed as people type them.

The question files follow `../shared/eval/publiccode-handbook/README.md` (one JSON object a line:
`id`, `type`, `question`, `context`, `gold_files`, `answer`, `readings`); the demo handbook's
`demo/handbook-questions-typed.jsonl` is written the same way. Scored through the chat as a
person would meet it (`ChatService.handle`, one new session per question), by the README's rules:

- fact, paraphrase, multi, followup, zh: the reply is an answer that contains the expected string
  (any alternative; a follow-up's `context` is asked first, in the same session);
- ambiguous: the first reply asks back with 2–3 options; then, for each reading in a session of its
  own, the person types the reading's label, and the reply must contain that reading's answer;
- unanswerable: the reply cites nothing (says the documents do not cover it);
- chitchat: a short reply with no citations and no options.

Beside the score: replies that cite nothing though a gold file was in the route's top 5
("refused with the answer found"), and clarifications of questions that were clear.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadsage.chat import ChatService, ReplyKind
from threadsage.evaluation.conversations import RECALL_K, contains_answer, converse, read_jsonl, route_evidence

ANSWERABLE = ("fact", "paraphrase", "multi", "followup", "zh")
KINDS = (*ANSWERABLE, "ambiguous", "unanswerable", "chitchat")
SHORT_REPLY = 400  # characters: small talk answers in a sentence or two


@dataclass(frozen=True)
class Reading:
    label: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    question: str
    answers: tuple[str, ...] = ()
    gold: frozenset[str] = frozenset()
    context: str = ""
    readings: tuple[Reading, ...] = ()


def _many(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)


def questions(file: Path) -> list[Question]:
    return [
        Question(
            id=str(row["id"]),
            kind=row["type"],
            question=row["question"],
            answers=_many(row.get("answer")),
            gold=frozenset(row.get("gold_files", ())),
            context=row.get("context") or "",
            readings=tuple(Reading(r["label"], _many(r["answer"])) for r in row.get("readings", ())),
        )
        for row in read_jsonl(file)
    ]


@dataclass
class KindTally:
    """The score of one handbook's questions, by kind."""

    name: str
    asked: Counter[str] = field(default_factory=Counter)
    right: Counter[str] = field(default_factory=Counter)
    readings: list[int] = field(default_factory=lambda: [0, 0])  # answered after the pick, of all
    refused_found: int = 0  # answerable, cited nothing, though a gold file was in the top 5
    false_clarifications: int = 0  # clear questions asked back
    misses: list[str] = field(default_factory=list)

    def row(self) -> list[str]:
        cells = [f"{self.right[k]}/{self.asked[k]}" if self.asked[k] else "–" for k in KINDS]
        picked, readings = self.readings
        answerable = sum(self.asked[k] for k in ANSWERABLE)
        return [
            self.name,
            *cells,
            f"{picked}/{readings}" if readings else "–",
            str(self.false_clarifications),
            f"{self.refused_found}/{answerable}",
        ]


HEADER = [
    "set",
    *KINDS,
    "ambiguous: reading answered",
    "false clarifications",
    "refused, answer in top 5",
]


async def score(chat: ChatService, name: str, items: list[Question]) -> KindTally:
    tally = KindTally(name)
    for q in items:
        tally.asked[q.kind] += 1
        reply, session = await converse(chat, [q.context, q.question] if q.context else [q.question])
        clarified = reply.kind is ReplyKind.CLARIFICATION
        if q.kind == "ambiguous":
            ok = clarified and 2 <= len(reply.choices) <= 3
            for reading in q.readings:
                tally.readings[1] += 1
                if not ok:
                    continue
                picked, _ = await converse(chat, [q.question, reading.label])
                tally.readings[0] += contains_answer(picked, reading.answers)
        elif q.kind == "unanswerable":
            ok = not reply.citations and not clarified
        elif q.kind == "chitchat":
            ok = not reply.citations and not reply.choices and len(reply.text) <= SHORT_REPLY
        else:
            ok = contains_answer(reply, q.answers)
            evidence = [p["path"] for p in await route_evidence(chat, session)]
            if not reply.citations and not clarified and q.gold & set(evidence[:RECALL_K]):
                tally.refused_found += 1
        if clarified and q.kind != "ambiguous":
            tally.false_clarifications += 1
        tally.right[q.kind] += ok
        if not ok:
            tally.misses.append(
                f"{q.id} [{q.kind}; {reply.route or reply.kind.value}] {q.question[:90]} → {reply.text[:160]!r}"
            )
    return tally
