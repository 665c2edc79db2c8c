"""The offline reader's sentence transformer: loaded from its packages with the network off (nothing
is fetched: the model file and the tokenizer are read from site-packages), unit vectors, and kept —
in memory, and on disk across a restart, so a passage read ahead is not embedded again by a question."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.store import VectorStore, key_of

TEXTS = ["Company laptops are replaced every three years.", "How often do we get a new computer?"]


def test_vectors_are_unit_length_and_a_paraphrase_reads_closer_than_another_topic(embedded: list[str]) -> None:
    laptops, question, lunch = minilm.vectors([*TEXTS, "The canteen serves lunch from noon."])
    assert np.allclose([np.linalg.norm(v) for v in (laptops, question, lunch)], 1.0, atol=1e-5)
    assert float(laptops @ question) > float(lunch @ question) + 0.2
    assert minilm.vectors([]).shape == (0, minilm.DIM)


def test_a_text_is_embedded_once_then_read_back_from_memory_or_disk(embedded: list[str], tmp_path: Path) -> None:
    first = minilm.vectors(TEXTS)
    again = minilm.vectors(list(reversed(TEXTS)))
    assert embedded == sorted(TEXTS, key=len) and np.array_equal(first[0], again[1])  # made once, in order
    minilm._kept.clear()  # a restart: memory gone, the file stays
    assert np.array_equal(minilm.vectors(TEXTS), first) and len(embedded) == 2


def test_unread_names_the_texts_kept_neither_in_memory_nor_on_disk(embedded: list[str]) -> None:
    minilm.vectors(TEXTS[:1])
    minilm._kept.clear()  # the first one is on disk only
    assert minilm.unread([*TEXTS, TEXTS[1]]) == TEXTS[1:]
    minilm.vectors(TEXTS)
    assert minilm.unread(TEXTS) == [] and embedded == TEXTS  # the first read back from disk, not made again


def test_two_threads_embedding_at_once_each_get_their_rows_and_each_text_is_made_once(embedded: list[str]) -> None:
    """A question's passages while a long batch is read ahead: the model runs outside the cache's lock."""
    many = [f"Passage {i} about the travel policy and its rules." for i in range(64)]
    with ThreadPoolExecutor(2) as pool:
        ahead = pool.submit(minilm.vectors, many)
        asked = pool.submit(minilm.vectors, TEXTS)
        assert ahead.result().shape == (64, minilm.DIM) and asked.result().shape == (2, minilm.DIM)
    assert sorted(embedded) == sorted([*many, *TEXTS])


def test_reading_ahead_waits_while_a_question_is_embedded(embedded: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The question's texts have the model to themselves; the batch read ahead runs after them."""
    started, release, order = threading.Event(), threading.Event(), []
    embed = minilm._embed

    def slow_for_the_question(texts: list[str]) -> np.ndarray:
        if texts == [TEXTS[1]]:
            started.set()
            release.wait(5)
        order.append(texts[0])
        return embed(texts)

    monkeypatch.setattr(minilm, "_embed", slow_for_the_question)
    with ThreadPoolExecutor(2) as pool:
        asked = pool.submit(minilm.vectors, [TEXTS[1]])
        assert started.wait(5)
        ahead = pool.submit(minilm.vectors, [TEXTS[0]], ahead=True)
        time.sleep(0.3)
        assert order == [] and not ahead.done()  # waiting for the question
        release.set()
        asked.result(5), ahead.result(5)
    assert order == [TEXTS[1], TEXTS[0]]


def test_a_stored_vector_of_another_size_is_made_again(tmp_path: Path) -> None:
    store = VectorStore(tmp_path / "odd", minilm.DIM)
    store.put([(key_of(minilm.NAME, "x"), np.ones(3, dtype=np.float32))])
    assert store.get([key_of(minilm.NAME, "x")]) == {}
    store.close()


@pytest.mark.slow  # a child interpreter
def test_the_model_loads_from_its_packages_with_the_network_off(tmp_path: Path) -> None:
    """A fresh interpreter whose sockets all fail, and no Hugging Face cache to fall back on."""
    script = (
        "import socket\n"
        "def refused(*a, **k):\n    raise OSError('network off')\n"
        "socket.socket.connect = refused\nsocket.create_connection = refused\n"
        "from threadsage.adapters.meaning import minilm\n"
        "print(minilm.vectors(['hello there']).shape)\n"
    )
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"(1, {minilm.DIM})"
    assert socket.socket.connect is not None  # this process untouched
