"""What the console reads: turn records, votes, ingestion runs, on the checkpointer's connection."""
