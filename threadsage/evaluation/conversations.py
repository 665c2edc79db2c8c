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
(`examples/handbook-*.jsonl`) are read as they are; for GitLab negation and anaphora questions
the first retrieval entry is a deliberate wrong hit (see `evaluation.DECOY_FIRST`).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadsage.chat import ChatService, Reply, ReplyKind, Turn
from threadsage.chat.service import session_config
from threadsage.evaluation.retrieval import DECOY_FIRST

RECALL_K = 5


@dataclass(frozen=True)
class Item:
    question: str
    answers: tuple[str, ...]  # any of them counts
    gold: frozenset[str]  # any of them counts
    ambiguous: bool = False
    context: str = ""  # an earlier user turn the question follows up


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
    routes: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)  # model calls per route (when counted)
    misses: list[str] = field(default_factory=list)

    def add(self, item: Item, reply: Reply, evidence: list[str], calls: int = 0) -> None:
        self.n += 1
        route = reply.route or reply.kind.value
        self.routes[route] += 1
        self.calls[route] += calls
        found = bool(item.gold & set(evidence[:RECALL_K]))
        answered = reply.kind is ReplyKind.ANSWER and any(c["path"] in item.gold for c in reply.citations)
        contains = reply.kind is ReplyKind.ANSWER and any(a.lower() in reply.text.lower() for a in item.answers)
        self.found += found
        self.from_gold += answered
        self.from_gold_when_found += found and answered
        self.contains += contains
        self.clarified += reply.kind is ReplyKind.CLARIFICATION
        if not (reply.kind is ReplyKind.CLARIFICATION if item.ambiguous else answered):
            self.misses.append(f"[{route}; gold in top 5: {found}] {item.question[:120]} → {reply.text[:120]!r}")


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


async def ask(chat: ChatService, item: Item) -> tuple[Reply, list[str]]:
    """The reply to the item's question in a new session, and the files of the passages the
    route node retrieved for it, best first."""
    who = uuid.uuid4().hex  # a person of its own: the per-person rate limit must not bite
    session = f"eval:{who}"
    if item.context:
        await chat.handle(Turn("bench", session, f"U{who}", "m0", text=item.context))
    replies = await chat.handle(Turn("bench", session, f"U{who}", "m1", text=item.question))
    if len(replies) != 1:
        raise AssertionError(f"expected one reply, got {replies}")
    return replies[0], await route_evidence(chat, session)


async def route_evidence(chat: ChatService, session: str) -> list[str]:
    """The files of the routing's passages in the session's last turn: the turn's first checkpoint
    with a route (`understand` clears it, and routes a first question; `route` a follow-up)."""
    routed: Any = None
    async for snapshot in chat.graph.aget_state_history(session_config(session)):  # newest first
        if snapshot.next == ("understand",) or not snapshot.values.get("route"):
            break  # the turn's input, not yet understood; or understood, not yet routed
        routed = snapshot
    return [p["path"] for p in routed.values.get("documents", [])] if routed is not None else []


async def run_set(chat: ChatService, name: str, items: list[Item], calls: Callable[[], int] | None = None) -> Tally:
    """Ask every item; `calls()`, when given, counts the model calls made so far."""
    tally = Tally(name)
    for item in items:
        before = calls() if calls else 0
        reply, evidence = await ask(chat, item)
        tally.add(item, reply, evidence, (calls() - before) if calls else 0)
    return tally
