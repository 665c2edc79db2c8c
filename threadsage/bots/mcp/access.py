"""Who may call the MCP server: a bearer token of `THREADSAGE_MCP_TOKENS`, and the categories it
may read (fail-closed like a channel's). The token itself is never kept beside the reader, logged
or shown: a reader is named by a digest of it."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass


@dataclass(frozen=True)
class Reader:
    id: str  # a digest of the token: in session keys, records and logs
    categories: tuple[str, ...] | None  # None: every category; (): none


class Readers:
    """The configured tokens, each checked in constant time against what a request presents."""

    def __init__(self, tokens: dict[str, tuple[str, ...] | None]) -> None:
        self._readers = [(_digest(token), categories) for token, categories in tokens.items()]

    def __bool__(self) -> bool:
        return bool(self._readers)

    def of(self, authorization: str | None) -> Reader | None:
        """The reader an `Authorization: Bearer <token>` header names; None for a missing, malformed
        or unknown one. Every configured token is compared, whichever matches, and digests of equal
        length are compared, so that the time taken tells nothing of the tokens."""
        scheme, _, presented = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            return None
        candidate = _digest(presented.strip())
        found: Reader | None = None
        for digest, categories in self._readers:
            if hmac.compare_digest(candidate, digest):
                found = Reader(digest.hex()[:16], categories)
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
