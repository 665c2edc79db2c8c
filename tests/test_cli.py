"""The operator's commands, run in-process through Typer's runner on a temporary data dir."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.locations import HANDBOOK

BUTTON_SECRET = "buttons-0123456789abcdef"


def test_ingest_is_idempotent_and_summarises(cli, tmp_path: Path) -> None:
    files = len([p for p in HANDBOOK.rglob("*") if p.is_file()])
    first = cli("ingest", str(HANDBOOK))
    assert first.exit_code == 0, first.output
    assert re.search(rf"^{files} files \({files} new, 0 changed, 0 unchanged\): \d+ chunks added", first.stdout, re.M)
    again = cli("ingest", str(HANDBOOK))
    assert f"(0 new, 0 changed, {files} unchanged): 0 chunks added, 0 updated, 0 removed" in again.stdout


def test_bad_files_are_reported_skipped_and_fail_the_run(cli, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(HANDBOOK / "it", docs)
    (docs / "empty.md").write_text("\n")
    (docs / "image.md").write_bytes(b"\x89PNG\x00\x00\x00")
    (docs / "logo.png").write_bytes(b"\x89PNG\x00")
    result = cli("ingest", str(docs))
    assert result.exit_code == 1
    assert re.search(r"skipped .*empty\.md: empty file", result.stderr)
    assert re.search(r"skipped .*image\.md: binary file", result.stderr)
    assert "2 skipped; 1 of unsupported types ignored" in result.stdout
    search = cli("search", "VPN password")
    assert search.exit_code == 0 and "vpn.md" in search.stdout


def test_a_link_out_of_the_ingested_folder_is_one_skipped_line_and_never_searchable(cli, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DATABASE_PASSWORD=hunter2-canary\n")
    docs = tmp_path / "docs"
    shutil.copytree(HANDBOOK / "it", docs)
    (docs / "x.txt").symlink_to("../.env")
    result = cli("ingest", str(docs))
    assert result.exit_code == 1
    skipped = re.findall(r"^skipped .*$", result.stderr, re.MULTILINE)
    assert skipped == [f"skipped {docs.resolve() / 'x.txt'}: symbolic link to outside {docs.resolve()}"]
    search = cli("search", "DATABASE_PASSWORD hunter2-canary")
    assert search.exit_code == 0 and "hunter2" not in search.stdout


def test_the_data_directory_is_created_private(cli, tmp_path: Path) -> None:
    previous = os.umask(0)  # the mode must not depend on it
    try:
        result = cli("ingest", str(HANDBOOK / "it"))
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700


def test_a_data_directory_with_wider_modes_is_tightened_at_start(cli, tmp_path: Path) -> None:
    """A Docker volume, say: the folder 0755, what is in it 0644 — the Milvus Lite files with every
    category's chunks and the git checkouts among them. The next start makes them the bot's own."""
    previous = os.umask(0o022)
    try:
        assert cli("ingest", str(HANDBOOK / "it")).exit_code == 0
        checkout = tmp_path / "data" / "sources" / "git" / "repo"
        checkout.mkdir(parents=True)
        (checkout / "README.md").write_text("# Readme\n")
        for path in [tmp_path / "data", *(tmp_path / "data").rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        assert cli("search", "VPN").exit_code == 0
    finally:
        os.umask(previous)
    modes = {p.relative_to(tmp_path).as_posix(): p.stat().st_mode & 0o777 for p in (tmp_path / "data").rglob("*")}
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700
    assert {m for p, m in modes.items() if (tmp_path / p).is_dir()} == {0o700}, modes
    assert {m for p, m in modes.items() if (tmp_path / p).is_file()} == {0o600}, modes
    assert "data/milvus.db" in modes and "data/sources/git/repo/README.md" in modes


def test_search_shows_source_heading_and_score(cli) -> None:
    cli("ingest", str(HANDBOOK))
    result = cli("search", "how do I reset my VPN password", "-k", "3")
    assert result.exit_code == 0, result.output
    assert "it/vpn.md" in result.stdout and "Resetting your password" in result.stdout
    assert re.search(r"^1\. \[\d+\.\d{3}\] it/vpn\.md \(VPN access with Larkspur Connect > ", result.stdout, re.M)
    scoped = cli("search", "password", "--category", "nothing-here")
    assert "no matching chunks" in scoped.stdout


def test_search_before_ingest_says_what_to_do(cli) -> None:
    result = cli("search", "anything")
    assert result.exit_code == 2
    assert "run `threadsage ingest PATH...` first" in result.stderr


def test_unreachable_milvus_is_one_clear_line(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MILVUS_URI", "http://127.0.0.1:9")
    result = cli("ingest", str(HANDBOOK))
    assert result.exit_code == 2
    assert "MILVUS_URI=http://127.0.0.1:9" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_changed_embeddings_need_a_rebuild(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("ingest", str(HANDBOOK / "it")).exit_code == 0
    monkeypatch.setenv("THREADSAGE_EMBEDDINGS", "local")
    refused = cli("ingest", str(HANDBOOK / "it"))
    assert refused.exit_code == 2 and "--rebuild" in refused.stderr
    rebuilt = cli("ingest", str(HANDBOOK / "it"), "--rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert cli("search", "VPN").exit_code == 0


def test_missing_path_is_refused(cli) -> None:
    result = cli("ingest", "no/such/folder")
    assert result.exit_code == 2 and "no such file or folder: no/such/folder" in result.stderr


@pytest.mark.slow
def test_eval_retrieval_json(cli, eval_dir: Path) -> None:
    cmrc = eval_dir / "cmrc2018"
    result = cli(
        "eval", "retrieval", "--corpus", str(cmrc), "--questions", str(cmrc / "dev_queries.jsonl"),
        "--sample", "40", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["n"] == 40
    assert set(scores) >= {"n", "recall@1", "recall@5", "mrr"}
    assert 0 <= scores["recall@1"] <= scores["recall@5"] <= 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-x", "THREADSAGE_SECRET": BUTTON_SECRET}, "REDIS_URL is not set"),
        (
            {"REDIS_URL": "redis://127.0.0.1:6379/0", "THREADSAGE_SECRET": BUTTON_SECRET},
            "neither SLACK_BOT_TOKEN nor TELEGRAM_BOT_TOKEN is set",
        ),
        (
            {"REDIS_URL": "redis://127.0.0.1:6379/0", "SLACK_BOT_TOKEN": "xoxb-x"},
            "THREADSAGE_SECRET is not set: every serve and worker must sign buttons with the same secret",
        ),
    ],
)
@pytest.mark.parametrize("command", ["serve", "worker"])
def test_serve_and_worker_say_what_is_missing(
    cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str, env: dict, message: str
) -> None:
    for name in ("REDIS_URL", "SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "THREADSAGE_SECRET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = cli(command)
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "data").exists()  # refused before anything opened


def test_serve_refuses_slack_without_a_signing_secret(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADSAGE_SECRET", BUTTON_SECRET)
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-x")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-x")  # Socket Mode is for single-process installs
    monkeypatch.delenv("SLACK_SIGNING_SECRET", raising=False)
    result = cli("serve")
    assert result.exit_code == 2 and "SLACK_SIGNING_SECRET" in result.stderr, result.output


def test_serve_says_when_redis_cannot_be_reached(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADSAGE_SECRET", BUTTON_SECRET)
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-x")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "0123456789abcdef0123456789abcdef")
    result = cli("serve")
    assert result.exit_code == 2 and "cannot reach Redis at REDIS_URL" in result.stderr, result.output


def test_telegram_refuses_an_allow_list_of_anything_but_ids(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "7000001:TEST-token")
    monkeypatch.setenv("THREADSAGE_TELEGRAM_ALLOWED", "123456789, @annlee")
    result = cli("telegram")
    assert result.exit_code == 2 and "THREADSAGE_TELEGRAM_ALLOWED: '@annlee' is neither an id" in result.stderr, (
        result.output
    )


def test_ingest_base_url_links_the_sources_and_must_be_a_web_address(cli) -> None:
    refused = cli("ingest", str(HANDBOOK / "it"), "--base-url", "handbook.example.com")
    assert refused.exit_code == 2 and "--base-url must be an http(s) URL" in refused.stderr
    assert cli("ingest", str(HANDBOOK / "it"), "--base-url", "https://handbook.example.com/it").exit_code == 0
    search = cli("search", "VPN password", "-k", "1")
    assert search.exit_code == 0 and "https://handbook.example.com/it/vpn.md" in search.stdout
