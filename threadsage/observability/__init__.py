"""Logs, metrics and traces; secrets scrubbed from all of them."""
