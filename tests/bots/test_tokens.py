from __future__ import annotations

import base64
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from threadsage.bots.tokens import (
    Button,
    ButtonKind,
    InvalidToken,
    Signer,
    load_secret,
    session_digest,
)
from threadsage.settings.environment import Settings

SESSION = "slack:T1:C1:1700000000.000100"
signer = Signer(b"s" * 32)


def clarify(option: int = 2, session: str = SESSION) -> Button:
    return Button(ButtonKind.CLARIFY, session_digest(session), "c4da245dd03761a0", option)


def test_round_trip_fits_telegram_callback_data() -> None:
    token = signer.sign(clarify())
    assert len(token.encode()) <= 64 and len(token) < 32
    button = signer.verify(token, SESSION)
    assert (button.kind, button.ref, button.value) == (ButtonKind.CLARIFY, "c4da245d", 2)
    vote = signer.verify(signer.sign(Button(ButtonKind.FEEDBACK, session_digest(SESSION), "0a1b2c3d", 1)))
    assert (vote.kind, vote.ref, vote.value) == (ButtonKind.FEEDBACK, "0a1b2c3d", 1)


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
    first = load_secret(settings, settings.data_dir)
    assert len(first) >= 32 and load_secret(settings, settings.data_dir) == first
    assert (tmp_path / "button-secret").stat().st_mode & 0o777 == 0o600
    assert (
        load_secret(Settings(THREADSAGE_DATA_DIR=tmp_path, THREADSAGE_SECRET="x" * 20, _env_file=None), tmp_path)
        == b"x" * 20
    )


def start_and_read_secrets(data_dirs: list[Path], barrier: Any, results: Any) -> None:
    """A process starting on each of `data_dirs` with no THREADSAGE_SECRET, at the same instant as
    the others, and as permissive a umask as there is; what it read, and the modes it found."""
    os.umask(0)
    for data_dir in data_dirs:
        settings = Settings(THREADSAGE_DATA_DIR=data_dir, THREADSAGE_SECRET=None, _env_file=None)
        barrier.wait(timeout=60)
        secret = load_secret(settings, settings.data_dir)
        modes = (data_dir.stat().st_mode & 0o777, (data_dir / "button-secret").stat().st_mode & 0o777)
        results.put((data_dir, secret, modes))


@pytest.mark.slow
def test_processes_starting_together_all_read_one_complete_private_secret(tmp_path: Path) -> None:
    processes, rounds = 8, 12
    data_dirs = [tmp_path / f"start-{n}" / "data" for n in range(rounds)]
    spawn = multiprocessing.get_context("spawn")
    barrier, results = spawn.Barrier(processes), spawn.Queue()
    starters = [
        spawn.Process(target=start_and_read_secrets, args=(data_dirs, barrier, results)) for _ in range(processes)
    ]
    for starter in starters:
        starter.start()
    read = [results.get(timeout=120) for _ in range(processes * rounds)]
    for starter in starters:
        starter.join(timeout=30)
        assert starter.exitcode == 0
    for data_dir in data_dirs:
        seen = [(secret, modes) for where, secret, modes in read if where == data_dir]
        assert len(seen) == processes
        assert {secret for secret, _ in seen} == {(data_dir / "button-secret").read_bytes()}
        assert len(seen[0][0]) == 64
        assert {modes for _, modes in seen} == {(0o700, 0o600)}
        assert [p.name for p in data_dir.iterdir()] == ["button-secret"]  # nothing left half-written
