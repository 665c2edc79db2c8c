"""Compact signed button tokens, shared by Slack and Telegram.

Telegram's `callback_data` allows 64 bytes, so a token is a version character followed by
base64url(payload ‖ HMAC-SHA256(secret, payload)[:8]), about 30 characters. The payload names
the kind of button, the session (a 6-byte hash of its key), a reference (the first 4 bytes of the
pending interrupt id, or of a hash of the answered turn) and a small value (the option index, or
the vote). A forged or altered token fails the MAC; a token moved to another conversation fails
the session check the bots make before anything runs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from threadsage.settings.sections import AccessSettings
from threadsage.support.private_files import private_dir, write_once

log = logging.getLogger(__name__)

VERSION = "1"
MAC_BYTES = 8
SESSION_BYTES = 6
REF_BYTES = 4  # of an interrupt id prefix, or of a `chat.turn_ref`
_PAYLOAD_BYTES = 1 + SESSION_BYTES + REF_BYTES + 1


class InvalidToken(ValueError):
    """Not a token this deployment signed, or not one for this conversation."""


class ButtonKind(Enum):
    CLARIFY = b"c"
    FEEDBACK = b"f"
    VERIFY = b"v"  # a curator's "Save as verified answer" (ref: the answered turn, as for feedback)
    SHARE = b"s"  # a private answer posted where it was asked (Slack)
    MOVE = b"m"  # a private answer's conversation continued in a DM (Slack)
    ESCALATE = b"e"  # "Still need help?" under an answer (ref: the answered turn)
    EXPERT = b"x"  # an expert's "Save as verified answer" under their relayed reply (ref: the reply)
    DRAFT = b"d"  # an expert's "Post as is" (value 1) or "Discard" (0) on a draft channel's answer
    RESOLVE = b"r"  # "Resolved" under an answer in a help channel (ref: the answered turn)


@dataclass(frozen=True)
class Button:
    kind: ButtonKind
    session: bytes  # session_digest(key)
    ref: str  # hex: an interrupt id prefix, or a turn digest
    value: int  # option index, or vote (1 up, 0 down)


def session_digest(session_key: str) -> bytes:
    return hashlib.sha256(session_key.encode("utf-8", "surrogatepass")).digest()[:SESSION_BYTES]


class Signer:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the button secret must be at least 16 bytes")
        self._secret = secret

    def sign(self, button: Button) -> str:
        ref = bytes.fromhex(button.ref[: REF_BYTES * 2].ljust(REF_BYTES * 2, "0"))
        payload = button.kind.value + button.session + ref + bytes([button.value])
        mac = hmac.new(self._secret, payload, hashlib.sha256).digest()[:MAC_BYTES]
        return VERSION + base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")

    def verify(self, token: str, session_key: str | None = None) -> Button:
        """The button a token names; raises InvalidToken for anything else. With `session_key`,
        the token must also belong to that conversation."""
        if not isinstance(token, str) or not token.startswith(VERSION) or len(token) > 64:
            raise InvalidToken("unknown token format")
        body = token[len(VERSION) :]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError) as exc:
            raise InvalidToken("not base64") from exc
        if len(raw) != _PAYLOAD_BYTES + MAC_BYTES:
            raise InvalidToken("wrong length")
        payload, mac = raw[:_PAYLOAD_BYTES], raw[_PAYLOAD_BYTES:]
        expected = hmac.new(self._secret, payload, hashlib.sha256).digest()[:MAC_BYTES]
        if not hmac.compare_digest(mac, expected):
            raise InvalidToken("bad signature")
        try:
            kind = ButtonKind(payload[:1])
        except ValueError as exc:
            raise InvalidToken("unknown button kind") from exc
        button = Button(
            kind=kind,
            session=payload[1 : 1 + SESSION_BYTES],
            ref=payload[1 + SESSION_BYTES : 1 + SESSION_BYTES + REF_BYTES].hex(),
            value=payload[-1],
        )
        if session_key is not None and not hmac.compare_digest(button.session, session_digest(session_key)):
            raise InvalidToken("token of another conversation")
        return button


def clicked(signer: Signer, token: object, session_key: str, kind: ButtonKind) -> Button | None:
    """The button of `kind` a click's value names, in the conversation `session_key`; None — logged
    — for a forged, altered, misplaced or other kind of button."""
    try:
        button = signer.verify(str(token), session_key)
    except InvalidToken as exc:
        log.warning("rejected a %s button: %s", kind.name.lower(), exc)
        return None
    return button if button.kind is kind else None


def load_secret(settings: AccessSettings, data_dir: Path) -> bytes:
    """`THREADSAGE_SECRET`, or a random secret generated once and kept under the data dir (so
    buttons stay valid across restarts of the embedded default), readable by this user only."""
    if settings.secret is not None:
        return settings.secret.get_secret_value().encode()
    path = data_dir / "button-secret"
    if not path.exists():
        write_once(private_dir(data_dir) / path.name, secrets.token_hex(32).encode())
    return path.read_text().strip().encode()
