"""The passages closest in meaning to a question among all the knowledge base holds.

The search's words rank a question in a person's own words by its incidental words: "when do I get
back what I spent myself?" shares "get" and "back" with many pages and nothing with "claims are
reimbursed with the salary", which may not be among the words' first 50. Reordering the words'
first candidates by meaning (`ordering.py`) cannot bring back a passage they never held. So the reader
also looks up, among every passage read ahead, the few closest to the question by MiniLM: one
vector each, already kept (`reading_ahead.py`), a matrix product a question (under 1 ms for 2,000
passages, about 20 ms for 50,000, with the other core busy). Measured on every public handbook set:
the paraphrases' answering passage within the first 5, words alone 15/44, by meaning over every
passage 34/44 (docs/performance.md, "The offline reader, fourth round").
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.closeness import reads_meaning


class MeaningIndex:
    """Every read passage's MiniLM vector by its chunk id. Filled whole by the reading ahead after
    each change (`replace`); a passage added since is found by the words until the next fill, one
    deleted since is dropped when its hit is fetched (the knowledge base no longer has it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: tuple[str, ...] = ()
        self._matrix = np.zeros((0, minilm.DIM), dtype=np.float32)

    def replace(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index these passages (`texts` as `minilm.passage_text` reads them), and only these. A
        chunk's id names its content, so the same ids are the same passages: nothing to redo (a
        sync that changed nothing, or a restart)."""
        with self._lock:
            if tuple(ids) == self._ids:
                return
        matrix = minilm.vectors(texts, ahead=True) if texts else np.zeros((0, minilm.DIM), dtype=np.float32)
        with self._lock:
            self._ids, self._matrix = tuple(ids), matrix

    def closest(self, question: str, n: int) -> list[str]:
        """The ids of the `n` passages closest to `question`, closest first ([] for a question the
        model cannot read, or before anything was indexed)."""
        with self._lock:
            ids, matrix = self._ids, self._matrix
        if not ids or n <= 0 or not reads_meaning(question):
            return []
        scores = matrix @ minilm.vectors([question])[0]
        first = np.argpartition(-scores, n)[:n] if n < len(ids) else np.arange(len(ids))
        return [ids[i] for i in sorted(first, key=lambda i: (-scores[i], i))]
