"""How close a question is in meaning to each passage, sentence by sentence.

A passage's closeness is that of its closest sentence, each sentence read with the passage's title
and heading in front ("Parental leave › Partner leave: you get one week…"): a sentence alone often
does not say what it is about, and a person's question names the topic in their own words. Both
sides are mean token vectors of a static embedding (`model.py`), so the comparison is one matrix
product whatever the number of candidates.

English only: the embedding was trained on English text, and a Chinese question's vector is close
to nothing in particular (`reads_meaning`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from threadsage.adapters.meaning import model
from threadsage.adapters.meaning.units import sentences
from threadsage.i18n import language_of


@dataclass(frozen=True)
class Closeness:
    """One passage's sentences and how close each is to the question (cosine, -1…1)."""

    units: tuple[str, ...]
    scores: tuple[float, ...]

    @property
    def best(self) -> float:
        return max(self.scores, default=0.0)

    @property
    def closest(self) -> int:
        """The index of the closest sentence (0 when there is none)."""
        return max(range(len(self.scores)), key=self.scores.__getitem__, default=0)

    def ranked(self) -> list[int]:
        """The sentences' indices, closest first."""
        return sorted(range(len(self.scores)), key=lambda i: -self.scores[i])


def reads_meaning(question: str) -> bool:
    """Whether the embedding can read this question (and so the passages found for it)."""
    return language_of(question) == "en"


def closeness(question: str, places: Sequence[tuple[str, str]]) -> list[Closeness]:
    """For each (label, text) place, its sentences' closeness to the question."""
    units = [sentences(text) for _, text in places]
    flat = [
        f"{label}: {unit}" if label else unit for (label, _), own in zip(places, units, strict=True) for unit in own
    ]
    matrix = model.vectors([question, *flat])
    scores = matrix[1:] @ matrix[0] if flat else np.zeros(0, dtype=np.float32)
    out, at = [], 0
    for own in units:
        out.append(Closeness(tuple(own), tuple(float(s) for s in scores[at : at + len(own)])))
        at += len(own)
    return out
