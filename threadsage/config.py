"""Settings: the one place where the environment contract lives.

Every value comes from the environment (or a `.env` file in the working directory); the names are
fixed by the environment contract in the design notes, so operators and tests can rely on them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

EmbeddingsKind = Literal["none", "openai", "local"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # Storage and services
    data_dir: Path = Field(Path("data"), validation_alias="THREADSAGE_DATA_DIR")
    database_url: str | None = Field(None, validation_alias="DATABASE_URL")
    redis_url: str | None = Field(None, validation_alias="REDIS_URL")
    redis_prefix: str = Field("threadsage:", validation_alias="THREADSAGE_REDIS_PREFIX")
    milvus_uri: str | None = Field(None, validation_alias="MILVUS_URI")
    milvus_token: SecretStr | None = Field(None, validation_alias="MILVUS_TOKEN")
    collection: str = Field("threadsage", validation_alias="THREADSAGE_COLLECTION")
    # Checkpoint retention (`threadsage prune`): off unless set, since it deletes conversations
    prune_older_than_days: float = Field(0, validation_alias="THREADSAGE_PRUNE_OLDER_THAN_DAYS", ge=0)
    prune_every_hours: float = Field(24, validation_alias="THREADSAGE_PRUNE_EVERY_HOURS", gt=0)

    # Reasoning and embeddings
    openai_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(None, validation_alias="OPENAI_BASE_URL")
    chat_model: str = Field("gpt-4o-mini", validation_alias="THREADSAGE_CHAT_MODEL")
    router_model: str | None = Field(None, validation_alias="THREADSAGE_ROUTER_MODEL")
    embeddings: EmbeddingsKind = Field("none", validation_alias="THREADSAGE_EMBEDDINGS")
    embedding_model: str | None = Field(None, validation_alias="THREADSAGE_EMBEDDING_MODEL")
    llm_timeout: float = Field(30.0, validation_alias="THREADSAGE_LLM_TIMEOUT", gt=0)
    llm_retries: int = Field(2, validation_alias="THREADSAGE_LLM_RETRIES", ge=0)

    # The conversation graph's brakes
    clarify_threshold: float = Field(0.6, validation_alias="THREADSAGE_CLARIFY_THRESHOLD", ge=0, le=1)
    max_clarify_rounds: int = Field(2, validation_alias="THREADSAGE_MAX_CLARIFY_ROUNDS", ge=0)
    max_hops: int = Field(2, validation_alias="THREADSAGE_MAX_HOPS", ge=1)
    llm_budget: int = Field(8, validation_alias="THREADSAGE_LLM_BUDGET", ge=2)

    # Chunking: defaults chosen from measured recall (see README, "Performance")
    chunk_chars: int = Field(1200, validation_alias="THREADSAGE_CHUNK_CHARS", gt=100)
    chunk_overlap: int = Field(200, validation_alias="THREADSAGE_CHUNK_OVERLAP", ge=0)

    # Platforms
    slack_bot_token: SecretStr | None = Field(None, validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, validation_alias="SLACK_SIGNING_SECRET")
    slack_app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN")
    slack_api_url: str | None = Field(None, validation_alias="SLACK_API_URL")
    telegram_bot_token: SecretStr | None = Field(None, validation_alias="TELEGRAM_BOT_TOKEN")
    telegram_api_url: str | None = Field(None, validation_alias="TELEGRAM_API_URL")
    telegram_webhook_url: str | None = Field(None, validation_alias="TELEGRAM_WEBHOOK_URL")
    telegram_webhook_secret: SecretStr | None = Field(
        None, validation_alias="TELEGRAM_WEBHOOK_SECRET"
    )
    telegram_idle_hours: float = Field(24, validation_alias="THREADSAGE_TELEGRAM_IDLE_HOURS", gt=0)
    http_port: int = Field(8080, validation_alias="THREADSAGE_HTTP_PORT")

    # The turn queue between `threadsage serve` and `threadsage worker` (REDIS_URL)
    turn_timeout: float = Field(60, validation_alias="THREADSAGE_TURN_TIMEOUT", ge=5)  # seconds
    worker_concurrency: int = Field(16, validation_alias="THREADSAGE_WORKER_CONCURRENCY", ge=1)
    turn_max_tries: int = Field(3, validation_alias="THREADSAGE_TURN_MAX_TRIES", ge=1)

    # Who sees what, and how often
    channel_categories: dict[str, list[str]] = Field(
        default_factory=dict, validation_alias="THREADSAGE_CHANNEL_CATEGORIES"
    )  # JSON: {"C0123": ["it", "people"], "-1001234": ["engineering"]}
    default_categories: list[str] = Field(
        default_factory=list, validation_alias="THREADSAGE_DEFAULT_CATEGORIES"
    )  # JSON list for DMs and unmapped channels; [] means every category
    rate_limit_per_minute: int = Field(20, validation_alias="THREADSAGE_RATE_LIMIT_PER_MINUTE", ge=1)
    # Model calls per minute for all processes together (0: no limit); past it people get "busy".
    max_model_calls_per_minute: int = Field(0, validation_alias="THREADSAGE_MAX_MODEL_CALLS_PER_MINUTE", ge=0)
    anyone_may_answer: bool = Field(False, validation_alias="THREADSAGE_ANYONE_MAY_ANSWER")
    secret: SecretStr | None = Field(None, validation_alias="THREADSAGE_SECRET")

    # Logs of the servers (`run`, `slack`, `telegram`); the terminal chat keeps a quiet console
    log_format: Literal["json", "text"] = Field("json", validation_alias="THREADSAGE_LOG_FORMAT")
    log_level: LogLevel = Field("INFO", validation_alias="THREADSAGE_LOG_LEVEL")  # DEBUG shows user text

    def categories_for(self, channel: str) -> tuple[str, ...]:
        """The knowledge categories a channel (or a DM, channel "") may retrieve from."""
        return tuple(self.channel_categories.get(channel, self.default_categories))

    @property
    def milvus_lite_path(self) -> Path:
        """The Milvus Lite file used when `MILVUS_URI` is unset."""
        return self.data_dir / "milvus.db"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
