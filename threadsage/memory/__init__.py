"""What persists and what coordinates: checkpointers, session keys, locks."""
