"""The knowledge store: Milvus (Lite or server), BM25, embeddings, and how a search is fused."""
