"""Pruning old conversations, per checkpoint store."""
