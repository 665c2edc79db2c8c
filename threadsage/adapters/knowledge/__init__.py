"""The knowledge store: hybrid search over the documents, and the writes ingestion needs.

One interface (`KnowledgeBase`, `base.py`) and two back-ends, picked by `open_knowledge_base`:
the embedded default, Milvus Lite + BM25 by tantivy in this process (`embedded.py`), and a Milvus
server with its own BM25 (`server.py`). Beside them: what a collection is (`collection.py`), its
fields (`schema.py`), filters (`filters.py`), what a search returns (`search.py`), embeddings
(`embeddings.py`).
"""

from threadsage.adapters.knowledge.base import KnowledgeBase
from threadsage.adapters.knowledge.collection import DenseUse, KnowledgeBaseError, StoredDocument, validate_category
from threadsage.adapters.knowledge.embedded import EmbeddedKnowledgeBase
from threadsage.adapters.knowledge.embeddings import Embedder
from threadsage.adapters.knowledge.search import Hit, passage
from threadsage.adapters.knowledge.server import ServerKnowledgeBase
from threadsage.settings.sections import StorageSettings
from threadsage.support.private_files import tighten

__all__ = [
    "DenseUse",
    "Hit",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "StoredDocument",
    "open_knowledge_base",
    "passage",
    "validate_category",
]


def open_knowledge_base(
    settings: StorageSettings, embedder: Embedder | None = None, dense: DenseUse | None = None
) -> KnowledgeBase:
    """The knowledge base of `settings`: on the Milvus server at `MILVUS_URI` when it is set,
    else embedded (Milvus Lite file under the data dir). Unreachable: `KnowledgeBaseError`. The data
    dir is made private first (`private_files.tighten`): every process that holds it opens this.
    `dense`: `DenseUse.of(settings)` for the configured languages; None = the default ones."""
    try:
        tighten(settings.data_dir)
    except OSError as exc:  # NotPrivate says why; a read-only volume says what it says
        raise KnowledgeBaseError(f"the data directory cannot be made private: {exc}") from None
    if settings.milvus_uri:
        return ServerKnowledgeBase.open(settings, embedder, dense)
    return EmbeddedKnowledgeBase.open(settings, embedder, dense)
