"""The knowledge base's collection: a row per chunk with its citation metadata, the text BM25
indexes (`search_text`), the language it is written in (`language`, `i18n.passage_language`: for
the dense ranking of the passages in another language than a question's), and a dense vector
beside it when embeddings are configured.

On a Milvus server, Milvus turns `search_text` into a sparse vector itself, by a BM25 function.
On Milvus Lite the in-process index does BM25 (`lexical.py`) with the same analysis
(`text.index_terms`); Milvus still wants a vector field in every collection, so there the sparse
field holds a one-entry placeholder and costs next to nothing.

Jieba segments Chinese into words and leaves Latin words whole; it is the one tokenizer that both
Milvus Lite and Milvus server offer for mixed English/Chinese text. The analyzer drops the
commonest of the project's stop words (`text.COMMONEST_WORDS`) from the BM25 statistics: with no
stop words at all a search took much longer (docs/performance.md, "Ingestion and search speed").
"""

from __future__ import annotations

from typing import Any

from pymilvus import CollectionSchema, DataType, Function, FunctionType, MilvusClient
from pymilvus.milvus_client import IndexParams

from threadsage.adapters.documents.chunking import Chunk
from threadsage.i18n import passage_language
from threadsage.support.text import COMMONEST_WORDS, index_form

TEXT_MAX_BYTES = 65_535
URL_FIELD = "url"
LANGUAGE_FIELD = "language"
PLACEHOLDER_SPARSE = {0: 1.0}
ANALYZER_PARAMS = {
    "tokenizer": "jieba",
    "filter": ["lowercase", {"type": "stop", "stop_words": sorted(COMMONEST_WORDS)}],
}


def collection_schema(
    client: MilvusClient, dense_dim: int | None, milvus_bm25: bool = True
) -> tuple[CollectionSchema, IndexParams]:
    """The fields and indexes of a new collection; `dense_dim` None for one without dense
    vectors, `milvus_bm25` for Milvus to compute BM25 (else the sparse field is a placeholder)."""
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=64)
    schema.add_field("source", DataType.VARCHAR, max_length=2048)
    schema.add_field(URL_FIELD, DataType.VARCHAR, max_length=2048)  # absent from collections made before it
    schema.add_field("path", DataType.VARCHAR, max_length=1024)
    schema.add_field("title", DataType.VARCHAR, max_length=1024)
    schema.add_field("heading", DataType.VARCHAR, max_length=2048)
    schema.add_field("chunk_index", DataType.INT32)
    schema.add_field("content_hash", DataType.VARCHAR, max_length=64)
    schema.add_field("category", DataType.VARCHAR, max_length=128)
    schema.add_field("updated_at", DataType.INT64)
    schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
    schema.add_field(LANGUAGE_FIELD, DataType.VARCHAR, max_length=16)  # absent from collections made before it
    analyzed = {"enable_analyzer": True, "analyzer_params": ANALYZER_PARAMS} if milvus_bm25 else {}
    schema.add_field("search_text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES, **analyzed)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    if milvus_bm25:
        schema.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["search_text"],
                output_field_names=["sparse"],
            )
        )
    index = client.prepare_index_params()
    metric = "BM25" if milvus_bm25 else "IP"
    index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type=metric)
    if dense_dim is not None:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dense_dim)
        index.add_index(field_name="dense", index_type="AUTOINDEX", metric_type="COSINE")
    return schema, index


def chunk_row(chunk: Chunk, vector: list[float] | None, with_url: bool, with_language: bool) -> dict[str, Any]:
    """A chunk as a row of the collection (`with_url`, `with_language` unless it predates them)."""
    doc = chunk.document
    row: dict[str, Any] = {
        "id": chunk.id,
        "doc_id": doc.doc_id,
        "source": fit(doc.source, 2048),
        "path": fit(doc.path, 1024),
        "title": fit(doc.title, 1024),
        "heading": fit(chunk.heading, 2048),
        "chunk_index": chunk.index,
        "content_hash": doc.content_hash,
        "category": doc.category,
        "updated_at": doc.updated_at,
        "text": fit(chunk.text, TEXT_MAX_BYTES),
        "search_text": fit(index_form(chunk.search_text), TEXT_MAX_BYTES),
    }
    if vector is not None:
        row["dense"] = vector
    if with_url:
        row[URL_FIELD] = fit(doc.url, 2048)
    if with_language:
        row[LANGUAGE_FIELD] = passage_language(chunk.text)
    return row


def fit(text: str, max_bytes: int) -> str:
    """Milvus limits VARCHAR by bytes; cut on a character boundary."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")
