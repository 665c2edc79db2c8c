from __future__ import annotations

import base64

import pytest

from threadsage.bots.tokens import (
    Button,
    ButtonKind,
    InvalidToken,
    Signer,
    load_secret,
    session_digest,
    turn_ref,
)
from threadsage.config import Settings

SESSION = "slack:T1:C1:1700000000.000100"
signer = Signer(b"s" * 32)


def clarify(option: int = 2, session: str = SESSION) -> Button:
    return Button(ButtonKind.CLARIFY, session_digest(session), "c4da245dd03761a0", option)


def test_round_trip_fits_telegram_callback_data() -> None:
    token = signer.sign(clarify())
    assert len(token.encode()) <= 64 and len(token) < 32
    button = signer.verify(token, SESSION)
    assert (button.kind, button.ref, button.value) == (ButtonKind.CLARIFY, "c4da245d", 2)
    vote = signer.verify(signer.sign(Button(ButtonKind.FEEDBACK, session_digest(SESSION), turn_ref("m1"), 1)))
    assert vote.kind is ButtonKind.FEEDBACK and vote.ref == turn_ref("m1")


def test_every_single_byte_change_is_rejected() -> None:
    token = signer.sign(clarify())
    raw = bytearray(base64.urlsafe_b64decode(token[1:] + "=" * (-len(token[1:]) % 4)))
    for i in range(len(raw)):
        forged = bytearray(raw)
        forged[i] ^= 0x01
        with pytest.raises(InvalidToken):
            signer.verify("1" + base64.urlsafe_b64encode(bytes(forged)).decode().rstrip("="))


@pytest.mark.parametrize("bad", ["", "x", "2abc", "1!!!", "1" + "A" * 200, "clr:7f3a:1", None])
def test_garbage_is_rejected(bad) -> None:
    with pytest.raises(InvalidToken):
        signer.verify(bad)


def test_another_secret_or_another_conversation_is_rejected() -> None:
    token = signer.sign(clarify())
    with pytest.raises(InvalidToken, match="bad signature"):
        Signer(b"t" * 32).verify(token)
    with pytest.raises(InvalidToken, match="another conversation"):
        signer.verify(token, "slack:T1:C1:other-thread")


def test_secret_is_generated_once_and_kept(tmp_path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, _env_file=None)
    first = load_secret(settings)
    assert len(first) >= 32 and load_secret(settings) == first
    assert (tmp_path / "button-secret").stat().st_mode & 0o777 == 0o600
    assert load_secret(Settings(THREADSAGE_DATA_DIR=tmp_path, THREADSAGE_SECRET="x" * 20, _env_file=None)) == b"x" * 20
