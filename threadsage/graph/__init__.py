"""The LangGraph brain: routing, retrieval strategies, self-checking, clarification."""
