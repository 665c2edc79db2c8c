"""A feedback button carries the whole `turn_ref` of the answer it votes on (the chat seam makes the
reference, the button token holds it), so that a vote finds its turn record. Apart from
test_tokens.py, whose processes started by `spawn` import that module and should not import the chat stack."""

from __future__ import annotations

from threadsage.bots.tokens import Button, ButtonKind, Signer, session_digest
from threadsage.chat import turn_ref


def test_a_feedback_button_carries_the_whole_turn_ref() -> None:
    signer = Signer(b"s" * 32)
    session = "slack:T1:C1:1700000000.000100"
    for message_id in ("m1", "C1:1700000000.000200", "action:1"):
        ref = turn_ref(message_id)
        vote = signer.verify(signer.sign(Button(ButtonKind.FEEDBACK, session_digest(session), ref, 0)), session)
        assert vote.ref == ref
    assert len({turn_ref(f"m{n}") for n in range(1000)}) == 1000  # distinct turns, distinct references
