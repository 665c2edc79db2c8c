"""Reasoning: the back-end interface beside its two implementations, `llm/` and `offline/`."""
