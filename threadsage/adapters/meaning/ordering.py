"""The search's candidates in an order that reads meaning as well as words.

BM25 ranks a question in a person's own words ("Will the company hand me a work computer on day
one?") by its incidental words, so the section that answers it is often below the first few — and
the offline reader, which quotes from the first few, never sees it. So the search takes more
candidates than it keeps (`POOL`), and keeps them alternating: the best by words, the best by
meaning (the question's MiniLM closeness to "title › heading: text", `minilm.py`), the second by
words, the second by meaning… A question in the page's own words keeps its first place; one in a
person's words gets its closest section among the first two (measured on every public set:
docs/performance.md, "The offline reader").
"""

from __future__ import annotations

from collections.abc import Sequence

from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.closeness import reads_meaning
from threadsage.adapters.reasoner import Passage, passage_label

POOL = 20  # candidates read by meaning for the few kept


def by_meaning(question: str, passages: Sequence[Passage], k: int) -> list[Passage]:
    """The first `k` of `passages` (in the search's order) alternated with the closest in meaning."""
    if len(passages) <= 1 or not reads_meaning(question):
        return list(passages[:k])
    matrix = minilm.vectors([question, *(minilm.passage_text(passage_label(p), p["text"]) for p in passages)])
    closeness = matrix[1:] @ matrix[0]
    meaning = sorted(range(len(passages)), key=lambda i: (-float(closeness[i]), i))
    kept: dict[int, None] = {}
    for by_words, by_sense in zip(range(len(passages)), meaning, strict=True):
        kept.setdefault(by_words, None)
        kept.setdefault(by_sense, None)
        if len(kept) >= k:
            break
    return [passages[i] for i in list(kept)[:k]]
