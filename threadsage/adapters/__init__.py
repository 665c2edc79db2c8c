"""The outside services the brain uses: embeddings, Milvus, document loaders, the LLM."""
