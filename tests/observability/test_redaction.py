"""Credentials inside DATABASE_URL, REDIS_URL and MILVUS_URI stay out of log lines and error messages,
while the host they name stays in (it is what an operator needs to see)."""

from __future__ import annotations

import io
import logging
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.served import serve
from threadsage.observability.redaction import redact_url

PASSWORD = "s3cr3t-hunter2-pw"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://postgres:{PASSWORD}@db.internal:5432/app", "postgresql://postgres:***@db.internal:5432/app"),
        (f"redis://:{PASSWORD}@cache.internal:6379/0", "redis://:***@cache.internal:6379/0"),
        (f"rediss://default:{PASSWORD}@cache.internal:6380", "rediss://default:***@cache.internal:6380"),
        (f"http://root:{PASSWORD}@milvus.internal:19530", "http://root:***@milvus.internal:19530"),
        (f"postgresql://app:p@ss/{PASSWORD}@db.internal/app", "postgresql://app:***@db.internal/app"),  # unescaped
        (
            f"postgresql://db.internal/app?user=app&password={PASSWORD}&sslmode=require",
            "postgresql://db.internal/app?user=app&password=***&sslmode=require",
        ),
        (f"host=db.internal password={PASSWORD} dbname=app", "host=db.internal password=*** dbname=app"),
        (f'URI: "postgresql://pg:{PASSWORD}@[db.internal/app"', 'URI: "postgresql://pg:***@[db.internal/app"'),
        ("postgresql://postgres@127.0.0.1:5432/test", "postgresql://postgres@127.0.0.1:5432/test"),
        ("http://127.0.0.1:19530", "http://127.0.0.1:19530"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_no_log_record_carries_a_url_password_whichever_handler_writes_it(
    configure,
    log_format: str,
) -> None:
    logs = configure(THREADSAGE_LOG_FORMAT=log_format, DATABASE_URL=f"postgresql://app:{PASSWORD}@db.internal/app")
    captured = io.StringIO()  # another handler after ours, as a log shipper or pytest's capture would be
    logging.getLogger().addHandler(logging.StreamHandler(captured))
    log = logging.getLogger("threadsage.test")
    log.warning("connecting to %s", f"redis://:{PASSWORD}@cache.internal:6379/0")
    try:
        raise RuntimeError(f'invalid URI: "http://root:{PASSWORD}@milvus.internal:19530"')
    except RuntimeError:
        log.exception("knowledge base unreachable")
    log.error("libpq said: %s", f"bad value {PASSWORD!r} for a connection option")  # the configured URL's password
    for output in (logs.getvalue(), captured.getvalue()):
        assert PASSWORD not in output
        assert "cache.internal" in output and "milvus.internal" in output and "RuntimeError" in output


def test_milvus_credentials_stay_out_of_the_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MILVUS_URI", f"http://root:{PASSWORD}@127.0.0.1:9")
    result = cli("search", "anything")
    assert result.exit_code == 2 and PASSWORD not in result.output
    assert "MILVUS_URI=http://root:***@127.0.0.1:9" in result.stderr


def test_redis_credentials_stay_out_of_the_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", f"redis://default:{PASSWORD}@127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-x")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "0123456789abcdef0123456789abcdef")
    monkeypatch.setenv("THREADSAGE_SECRET", "buttons-0123456789abcdef")
    result = cli("serve")
    assert result.exit_code == 2 and PASSWORD not in result.output
    assert "cannot reach Redis at REDIS_URL=redis://default:***@127.0.0.1:1/0" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://postgres:{PASSWORD}@127.0.0.1:1/test",  # nothing listens there
        f"postgresql://postgres:{PASSWORD}@[127.0.0.1:1/test",  # a typo, which libpq quotes whole in its error
    ],
)
@pytest.mark.parametrize("command", [["prune", "--older-than", "30d"], ["worker"]])
def test_postgres_credentials_stay_out_of_the_log(tmp_path: Path, command: list[str], url: str) -> None:
    """`prune` leaves logging as Python sets it up; `worker` logs JSON lines. The connection pool
    logs each failed attempt: the first one is enough."""
    env = {
        "DATABASE_URL": url,
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "THREADSAGE_EMBEDDINGS": "none",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "SLACK_BOT_TOKEN": "xoxb-x",
        "THREADSAGE_SECRET": "buttons-0123456789abcdef",
    }
    output = output_until(serve(command, env, tmp_path).process, "error connecting in")
    assert "error connecting in" in output, output
    assert PASSWORD not in output and "127.0.0.1" in output


def output_until(process: subprocess.Popen, marker: str, timeout: float = 120) -> str:
    """What the process printed until a line with `marker` (or its exit, or the timeout); then it
    is killed."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout or ()), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline and not any(marker in line for line in lines):
        time.sleep(0.1)
    process.kill()
    process.wait(timeout=30)
    reader.join(timeout=30)
    return "".join(lines)
