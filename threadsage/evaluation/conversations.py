"""Answer quality measured through the chat: the graph's own query handling, not the bare search.

Each question is asked as the first turn of a new session through `ChatService.handle` (an
anaphora question after its `context` turn, in the same session). Scored per question:

- file recall@5 *through the graph*: a gold file owns one of the top 5 passages the route node
  retrieved — after contextualisation, exclusion handling and whatever else the graph does to
  the question (read back from the thread's checkpoints);
- answered from the gold file: an answer (not a clarification, not "not covered") citing a gold file;
- contains the answer: the expected answer string is in the reply (case-insensitive);
- clarified: the reply asks back.

The GitLab question sets (`../shared/eval/gitlab-handbook/questions`) and the demo handbook's
(`demo/handbook-*.jsonl`) are read as they are; for GitLab negation and anaphora questions
the first retrieval entry is a deliberate wrong hit (see `evaluation.DECOY_FIRST`).
"""

from __future__ import annotations

import json
import re
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadsage.chat import ChatService, Reply, ReplyKind, Turn
from threadsage.chat.service import session_config
from threadsage.evaluation.retrieval import DECOY_FIRST
from threadsage.i18n import opens_as

RECALL_K = 5


@dataclass(frozen=True)
class Item:
    question: str
    answers: tuple[str, ...]  # any of them counts
    gold: frozenset[str]  # any of them counts
    ambiguous: bool = False
    context: str = ""  # an earlier user turn the question follows up
    pages: frozenset[str] = frozenset()  # gold "file#page N" (PDF sets): page recall@5 is scored too
    unanswerable: bool = False  # the right reply says the documents do not cover it
    id: str = ""


@dataclass
class Tally:
    """The scores of one question set."""

    name: str
    n: int = 0
    found: int = 0  # a gold file in the route's top 5
    from_gold: int = 0
    from_gold_when_found: int = 0
    contains: int = 0
    clarified: int = 0
    page_found: float = 0.0  # sum of per-question page recall@5 (items with gold pages)
    paged: int = 0  # items with gold pages
    declined: int = 0  # replies that cite nothing: "not covered", small talk, a clarification
    hedged: int = 0  # the closest passage quoted as possibly not answering
    seconds: list[float] = field(default_factory=list)  # per question, through `handle`
    routes: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)  # model calls per route (when counted)
    misses: list[str] = field(default_factory=list)

    def add(self, item: Item, reply: Reply, evidence: list[str], calls: int = 0, pages: Sequence[str] = ()) -> None:
        self.n += 1
        route = reply.route or reply.kind.value
        self.routes[route] += 1
        self.calls[route] += calls
        found = bool(item.gold & set(evidence[:RECALL_K]))
        answered = reply.kind is ReplyKind.ANSWER and any(c["path"] in item.gold for c in reply.citations)
        contains = contains_answer(reply, item.answers)
        self.found += found
        self.from_gold += answered
        self.from_gold_when_found += found and answered
        self.contains += contains
        self.clarified += reply.kind is ReplyKind.CLARIFICATION
        declined = reply.kind is not ReplyKind.ANSWER or not reply.citations
        self.declined += declined
        # the closest passage, possibly not answering (in the question's language or another)
        self.hedged += opens_as("closest_passage", reply.text) or opens_as("closest_in_other_language", reply.text)
        if item.pages:
            self.paged += 1
            self.page_found += len(item.pages & set(pages[:RECALL_K])) / len(item.pages)
        expected = declined if item.unanswerable else answered
        if not (reply.kind is ReplyKind.CLARIFICATION if item.ambiguous else expected):
            self.misses.append(f"[{route}; gold in top 5: {found}] {item.question[:120]} → {reply.text[:120]!r}")


_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"], 1
    )
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")


def comparable(text: str) -> str:
    """Text for contains-matching (Northwind's README): lower case, one space, "twelve" → "12",
    "$2,000" → "$2000", ’ → '."""
    text = " ".join(text.lower().replace("\u2019", "'").split())
    return _THOUSANDS.sub("", _NUMBER_WORD.sub(lambda m: _NUMBER_WORDS[m.group(1)], text))


def read_jsonl(file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def gitlab_items(file: Path) -> list[Item]:
    items = []
    for row in read_jsonl(file):
        kind = str(row.get("type", "")).replace("-", " ").strip().lower()
        evidence = row["retrieval"][1:] if kind in DECOY_FIRST else row["retrieval"]
        gold = frozenset(path for entry in evidence for path in entry)
        items.append(Item(row["question"], (str(row["answer"]),), gold, context=row.get("context") or ""))
    return items


def handbook_items(file: Path) -> list[Item]:
    def many(value: str | list[str]) -> tuple[str, ...]:
        return tuple(value) if isinstance(value, list) else (value,)

    return [
        Item(r["question"], many(r["answer"]), frozenset(many(r["file"])), bool(r.get("ambiguous")))
        for r in read_jsonl(file)
    ]


def northwind_items(file: Path) -> list[Item]:
    """Northwind questions (../shared/eval/northwind/README.md): answerable ones with gold pages,
    "don't know" ones (`unanswerable`), ambiguous ones (two readings, each a plan) and controls."""
    items = []
    for row in read_jsonl(file):
        readings = row.get("readings") or [row]
        files = frozenset(f for r in readings for f in r.get("gold_files", []))
        pages = frozenset(f"{g['file']}#Page {g['page']}" for r in readings for g in r.get("gold_pages", []))
        # Upstream's long-form answers (they carry "[file.pdf#page=N]") cannot be contains-matched.
        answers = tuple(str(r["answer"]) for r in readings if r.get("answer") and "#page=" not in r["answer"])
        items.append(
            Item(
                row["question"],
                answers,
                files,
                ambiguous="readings" in row,
                pages=pages,
                unanswerable=row["type"] == "unanswerable",
                id=row["id"],
            )
        )
    return items


def beir_items(queries: Path, limit: int | None = None) -> list[Item]:
    """BEIR-style questions (CMRC 2018: `_id`, `text`, `answers`; a `*qrels.tsv` beside them)."""
    gold: dict[str, set[str]] = {}
    for line in next(queries.parent.glob("*qrels.tsv")).read_text(encoding="utf-8").splitlines()[1:]:
        query, doc, *_ = line.split("\t")
        gold.setdefault(query, set()).add(doc)
    rows = read_jsonl(queries)[:limit]
    return [Item(r["text"], tuple(r.get("answers", [])), frozenset(gold.get(r["_id"], ()))) for r in rows]


def seconds_summary(tallies: list[Tally]) -> tuple[float, float]:
    """Median and 95th percentile of the time per question, over every set."""
    times = sorted(t for tally in tallies for t in tally.seconds)
    if not times:
        return 0.0, 0.0
    return statistics.median(times), times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]


def contains_answer(reply: Reply, answers: Sequence[str]) -> bool:
    """Whether the reply is an answer holding one of the expected strings (`comparable` forms)."""
    return reply.kind is ReplyKind.ANSWER and any(comparable(a) in comparable(reply.text) for a in answers)


async def converse(chat: ChatService, turns: Sequence[str]) -> tuple[Reply, str]:
    """The reply to the last of `turns`, typed one after the other in a new session, and the session."""
    who = uuid.uuid4().hex  # a person of its own: the per-person rate limit must not bite
    session = f"eval:{who}"
    for n, text in enumerate(turns[:-1]):
        await chat.handle(Turn("bench", session, f"U{who}", f"m{n}", text=text))
    replies = await chat.handle(Turn("bench", session, f"U{who}", f"m{len(turns) - 1}", text=turns[-1]))
    if len(replies) != 1:
        raise AssertionError(f"expected one reply, got {replies}")
    return replies[0], session


async def ask(chat: ChatService, item: Item) -> tuple[Reply, list[str], list[str]]:
    """The reply to the item's question in a new session, and the files (and "file#heading") of
    the passages the route node retrieved for it, best first."""
    reply, session = await converse(chat, [item.context, item.question] if item.context else [item.question])
    passages = await route_evidence(chat, session)
    return reply, [p["path"] for p in passages], [f"{p['path']}#{p['heading']}" for p in passages]


async def route_evidence(chat: ChatService, session: str) -> list[Any]:
    """The files of the routing's passages in the session's last turn: the turn's first checkpoint
    with a route (`understand` clears it, and routes a first question; `route` a follow-up)."""
    routed: Any = None
    async for snapshot in chat.graph.aget_state_history(session_config(session)):  # newest first
        if snapshot.next == ("understand",) or not snapshot.values.get("route"):
            break  # the turn's input, not yet understood; or understood, not yet routed
        routed = snapshot
    return list(routed.values.get("documents", [])) if routed is not None else []


async def run_set(chat: ChatService, name: str, items: list[Item], calls: Callable[[], int] | None = None) -> Tally:
    """Ask every item; `calls()`, when given, counts the model calls made so far."""
    tally = Tally(name)
    for item in items:
        before = calls() if calls else 0
        started = time.perf_counter()
        reply, evidence, pages = await ask(chat, item)
        tally.seconds.append(time.perf_counter() - started)
        tally.add(item, reply, evidence, (calls() - before) if calls else 0, pages)
    return tally
