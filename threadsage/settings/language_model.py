"""The language model's settings: which provider and model, how structured replies are asked for,
and the bounds on every request (tokens per call kind, time, retries). A mixin of
`threadsage.settings.environment.Settings`, like those of sections.py; docs/models.md explains the
defaults for hosted APIs and for local servers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr

from threadsage.settings.sections import section

StructuredOutput = Literal["auto", "tools", "json_schema", "json_mode"]
OPENAI_COMPATIBLE = ("openai", "azure_openai")  # providers served by langchain-openai


def provider_of(model: str) -> tuple[str, str]:
    """`anthropic:claude-…` → ("anthropic", "claude-…"); a plain name is an OpenAI-compatible model
    (so configurations written before providers existed keep their meaning)."""
    provider, colon, name = model.partition(":")
    if colon and provider and name and "/" not in provider:
        return provider.strip().lower(), name.strip()
    return "openai", model


class LanguageModelSettings(BaseModel):
    """The language model: provider, model, structured output and the bounds of each request."""

    openai_api_key: SecretStr | None = Field(
        None,
        validation_alias="OPENAI_API_KEY",
        description="Key of an OpenAI-compatible API; unset (and no other provider named) = the offline, "
        "extractive back-end",
        json_schema_extra=section("Reasoning and embeddings"),
    )
    openai_base_url: str | None = Field(
        None,
        validation_alias="OPENAI_BASE_URL",
        description="Base URL of that API (vLLM, llama.cpp, Ollama's `/v1`, LM Studio…); unset = OpenAI's",
    )
    chat_model: str = Field(
        "gpt-4o-mini",
        description="Model for answers: a plain name is served by the OpenAI-compatible API; `provider:model` names "
        "another (`azure_openai:<deployment>`, `anthropic:claude-…`, `ollama:qwen2.5`; docs/models.md)",
    )
    chat_model_vision: bool = Field(
        False,
        description="The chat model accepts images (OpenAI's vision models, Anthropic's, Ollama's vision models): "
        "the images sent with a question go to its answer call beside their OCR text (docs/models.md)",
    )
    router_model: str | None = Field(
        None,
        description="Cheaper model for routing, judging, rewriting and translating, named the same way; unset = the "
        "chat model",
    )
    azure_openai_endpoint: str | None = Field(
        None,
        validation_alias="AZURE_OPENAI_ENDPOINT",
        description="Azure OpenAI: the resource's endpoint, for `azure_openai:<deployment>` models",
    )
    azure_openai_api_key: SecretStr | None = Field(
        None, validation_alias="AZURE_OPENAI_API_KEY", description="Azure OpenAI: the resource's key"
    )
    openai_api_version: str = Field(
        "2024-10-21", validation_alias="OPENAI_API_VERSION", description="Azure OpenAI: the API version"
    )
    structured_output: StructuredOutput = Field(
        "auto",
        description="How structured replies are asked for: `tools` (a call of the one named function: portable), "
        "`json_schema` (OpenAI's response_format), `json_mode` (any JSON object, the schema in the prompt); `auto` = "
        "`tools`, and `json_schema` for Ollama (docs/models.md)",
    )
    llm_timeout: float = Field(
        30.0, gt=0, description="Time one model request may take, in seconds; then its connection is closed"
    )
    llm_retries: int = Field(2, ge=0, description="Retries of a model request on connection errors, 429 and 5xx")
    llm_retry_timeouts: bool = Field(
        False,
        description="Retry a request that timed out, too (off: a slow local server would get the same work "
        "again behind the one it is still computing)",
    )
    max_tokens_contextualise: int = Field(
        128, ge=16, description="Token limit of the reply that makes a follow-up standalone"
    )
    max_tokens_route: int = Field(
        384,
        ge=16,
        description="Token limit of routing, and of the other small decisions (rerank, plan, computations)",
    )
    max_tokens_rewrite: int = Field(64, ge=16, description="Token limit of a rewritten search query")
    max_tokens_translate: int = Field(128, ge=16, description="Token limit of a translated search query")
    max_tokens_judge: int = Field(192, ge=16, description="Token limit of the judgement of an answer")
    max_tokens_answer: int = Field(
        768, ge=32, description="Token limit of an answer (also a deep-search step, small talk, a web answer)"
    )
    max_tokens_synthesis: int = Field(1024, ge=32, description="Token limit of deep search's final answer")

    @property
    def uses_language_model(self) -> bool:
        """Whether turns are reasoned by a language model: a key for the OpenAI-compatible API, or
        a chat model of another provider (Azure's endpoint, Anthropic, Ollama: their own settings)."""
        provider, _ = provider_of(self.chat_model)
        return self.openai_api_key is not None or provider != "openai"
