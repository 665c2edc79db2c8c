"""The offline back-end: deterministic, no network; extractive answers."""
