"""Settings: the environment contract (pydantic-settings), its sections, and the generated reference."""
