"""Evaluation: retrieval (recall@k, MRR) and whole conversations through the chat service."""
