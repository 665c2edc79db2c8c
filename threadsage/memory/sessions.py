"""Session keys: one conversation thread per platform place, named without platform types.

A key reads "platform:workspace:channel:thread" (e.g. "slack:T123:C456:1712.000100",
"telegram:-:12345:-"); its thread id is a stable UUID derived from it, so any process maps the
same place to the same checkpointed thread.
"""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://threadsage.invalid/sessions")


def session_key(platform: str, workspace: str, channel: str, thread: str = "-") -> str:
    parts = [platform, workspace or "-", channel or "-", thread or "-"]
    return ":".join(p.replace(":", "_") for p in parts)


def thread_id(key: str) -> str:
    """`uuid5(_NAMESPACE, key)`, computed here so that a key with a lone surrogate (from a JSON
    escape) has one too rather than raising."""
    digest = hashlib.sha1(_NAMESPACE.bytes + key.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))
