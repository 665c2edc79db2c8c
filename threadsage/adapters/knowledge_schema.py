"""The knowledge base's collection: a row per chunk with its citation metadata, the text BM25
indexes (`search_text`, which Milvus turns into a sparse vector itself, by a BM25 function), and
a dense vector beside it when embeddings are configured.

Jieba segments Chinese into words and leaves Latin words whole; it is the one tokenizer that both
Milvus Lite and Milvus server offer for mixed English/Chinese text. The analyzer drops the
commonest of the project's stop words (`text.COMMONEST_WORDS`) from the BM25 statistics: with no
stop words at all a search took about five times as long (measured on the GitLab handbook).
"""

from __future__ import annotations

from pymilvus import CollectionSchema, DataType, Function, FunctionType, MilvusClient
from pymilvus.milvus_client import IndexParams

from threadsage.adapters.text import COMMONEST_WORDS

TEXT_MAX_BYTES = 65_535
URL_FIELD = "url"
ANALYZER_PARAMS = {
    "tokenizer": "jieba",
    "filter": ["lowercase", {"type": "stop", "stop_words": sorted(COMMONEST_WORDS)}],
}


def collection_schema(client: MilvusClient, dim: int) -> tuple[CollectionSchema, IndexParams]:
    """The fields and indexes of a new collection; `dim` 0 for one without dense vectors."""
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
    schema.add_field(
        "search_text",
        DataType.VARCHAR,
        max_length=TEXT_MAX_BYTES,
        enable_analyzer=True,
        analyzer_params=ANALYZER_PARAMS,
    )
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["search_text"],
            output_field_names=["sparse"],
        )
    )
    index = client.prepare_index_params()
    index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    if dim:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        index.add_index(field_name="dense", index_type="AUTOINDEX", metric_type="COSINE")
    return schema, index
