"""Leaves that import nothing of ours: private files, Retry-After, text terms, background tasks, contacts."""
