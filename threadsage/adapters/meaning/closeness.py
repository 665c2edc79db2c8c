"""How close a question is in meaning to each passage: the passage as a whole, and sentence by
sentence.

- The passage's closeness — does it answer? which passage leads? — is MiniLM's (`minilm.py`)
  between the question and the passage's start read with its title and heading ("Parental leave ›
  Partner leave: you get one week…"): a sentence transformer reads a question in a person's own
  words as close to the section that answers it, where word vectors do not. One vector a passage,
  kept (`minilm.vectors`), the same text the search's ordering reads (`ordering.py`).
- Its sentences' closeness — what of it to show — is the static embedding's (`model.py`), each
  sentence read with the title and heading in front: every sentence of the candidates is compared
  at query time, which a transformer could not do within a turn's time on two cores — but for the
  passage that reads closest, whose closest sentence is the one usually shown: its sentences are
  read by MiniLM (publiccode paraphrases 5 → 6/16; turn median 29 → 51 ms, p95 59 → 138 ms).

English only: both models were trained on English text, and a Chinese question's vector is close
to nothing in particular (`reads_meaning`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from threadsage.adapters.meaning import minilm, model
from threadsage.adapters.meaning.units import sentences
from threadsage.i18n import language_of


@dataclass(frozen=True)
class Closeness:
    """How close a passage reads to the question (`best`), and each of its sentences (cosine, -1…1)."""

    units: tuple[str, ...]
    scores: tuple[float, ...]
    best: float = 0.0

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
    """For each (label, text) place, its sentences' closeness to the question; the sentences of
    the place that reads closest are read by MiniLM (`_read_closely`)."""
    units = [sentences(text) for _, text in places]
    labelled = [
        [f"{label}: {unit}" if label else unit for unit in own] for (label, _), own in zip(places, units, strict=True)
    ]
    whole = minilm.vectors([question, *(minilm.passage_text(label, text) for label, text in places)])
    passages = whole[1:] @ whole[0]
    closest = int(np.argmax(passages)) if places else -1
    # The word vectors read the others' sentences; the closest place's are read closely.
    flat = [unit for i, own in enumerate(labelled) if i != closest for unit in own]
    matrix = model.vectors([question, *flat])
    scores = iter(matrix[1:] @ matrix[0] if flat else np.zeros(0, dtype=np.float32))
    out = []
    for i, (own, passage) in enumerate(zip(units, passages, strict=True)):
        mine = _read_closely(question, labelled[i]) if i == closest and own else [next(scores) for _ in own]
        out.append(Closeness(tuple(own), tuple(float(s) for s in mine), float(passage)))
    return out


def _read_closely(question: str, units: list[str]) -> np.ndarray:
    """The units' closeness to the question by MiniLM: about 2 ms a sentence, so for one passage's
    sentences only — the closest passage's, whose closest sentence is the one usually shown."""
    matrix = minilm.vectors([question, *units])
    read: np.ndarray = matrix[1:] @ matrix[0]
    return read
