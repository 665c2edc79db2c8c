"""LangChain chat models for the names in the settings, one per model and token limit.

- A plain name (or `openai:`) is `ChatOpenAI` on `OPENAI_BASE_URL`: OpenAI itself or any
  OpenAI-compatible server (vLLM, llama.cpp, Ollama's `/v1`, LM Studio).
- `azure_openai:<deployment>` is `AzureChatOpenAI`: Azure's URL, `api-version` and key scheme.
- Any other `provider:model` goes through LangChain's `init_chat_model` (`anthropic:` needs the
  `anthropic` extra, `ollama:` the `ollama` extra: Ollama's native API).

Every model is built with the SDK's own retries off (threadsage/adapters/reasoning/llm/calls.py
retries, but not timeouts) and a token limit in the field its server reads: langchain-openai sends
`max_completion_tokens`, which OpenAI reads and llama.cpp's server ignores (its request type has
only `max_tokens`, llama_cpp/server/types.py of llama-cpp-python 0.3.36), so a model on a base
URL gets `max_tokens` in the request body instead; Ollama's native API calls it `num_predict`.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_openai import AzureChatOpenAI, ChatOpenAI
from openai import DefaultAioHttpClient

from threadsage.settings.language_model import LanguageModelSettings, provider_of

Method = Literal["function_calling", "json_schema", "json_mode"]
METHODS: dict[str, Method] = {"tools": "function_calling", "json_schema": "json_schema", "json_mode": "json_mode"}
# `auto`: a call of the one named function works on OpenAI, Azure, Anthropic and every compatible
# server tried (llama.cpp answers 500 to OpenAI's json_schema); Ollama's native API constrains its
# output to a JSON schema by grammar (`format`), which small local models follow better than tools.
AUTO: dict[str, Method] = {"ollama": "json_schema"}


class ModelUnavailable(RuntimeError):
    """A model the settings name cannot be built here (its provider's extra is not installed, or
    what it needs is not configured): a configuration error, said at start."""


def structured_method(settings: LanguageModelSettings, model: str) -> Method:
    """How structured replies are asked of `model` (THREADSAGE_STRUCTURED_OUTPUT)."""
    if settings.structured_output != "auto":
        return METHODS[settings.structured_output]
    return AUTO.get(provider_of(model)[0], "function_calling")


def chat_model(
    settings: LanguageModelSettings, model: str, max_tokens: int, http: DefaultAioHttpClient, streams: bool = False
) -> BaseChatModel:
    """`model` (a name from the settings) answering at most `max_tokens` tokens, at temperature 0.
    The OpenAI and Azure models send through `http`, the back-end's own connection pool (it reads
    HTTP(S)_PROXY and NO_PROXY as the SDK's would, and closes with the back-end). Unless it
    `streams`, it never streams, even in a run streamed with LangGraph's `messages` mode; a streamed
    reply has no timeout per chunk (langchain-openai's `stream_chunk_timeout` waits for every chunk
    in a task of its own): the call's own time limit (calls.py) bounds it whole."""
    provider, name = provider_of(model)
    common: dict[str, Any] = {"temperature": 0, "timeout": settings.llm_timeout, "max_retries": 0}
    common["disable_streaming"] = not streams
    # the sync client is never used: no keep-alive transport built for it (which would also warn
    # that it disables the proxy of the environment)
    pooled = {**common, "http_async_client": http, "http_socket_options": (), "stream_chunk_timeout": None}
    if provider == "openai":
        key = settings.openai_api_key
        if settings.openai_base_url:
            limit: dict[str, Any] = {"extra_body": {"max_tokens": max_tokens}}
        else:
            limit = {"max_tokens": max_tokens}
        return ChatOpenAI(model=name, api_key=key, base_url=settings.openai_base_url, **limit, **pooled)
    if provider == "azure_openai":
        if not settings.azure_openai_endpoint:
            raise ModelUnavailable(f"{model} needs AZURE_OPENAI_ENDPOINT (and AZURE_OPENAI_API_KEY)")
        return AzureChatOpenAI(
            azure_deployment=name,
            azure_endpoint=settings.azure_openai_endpoint,
            api_key=settings.azure_openai_api_key,
            api_version=settings.openai_api_version,
            max_tokens=max_tokens,
            **pooled,
        )
    if provider == "ollama":
        # ChatOllama has no timeout or retries of its own: its httpx client takes the timeout.
        options: dict[str, Any] = {"num_predict": max_tokens, "client_kwargs": {"timeout": settings.llm_timeout}}
        options["disable_streaming"] = not streams
        return _initialised(model, name, provider, temperature=0, **options)
    return _initialised(model, name, provider, max_tokens=max_tokens, **common)


def _initialised(model: str, name: str, provider: str, **options: Any) -> BaseChatModel:
    try:
        built = init_chat_model(name, model_provider=provider, **options)
    except ImportError as exc:
        raise ModelUnavailable(f"{model}: install threadsage's `{provider}` extra ({exc})") from None
    except ValueError as exc:
        raise ModelUnavailable(f"{model}: {exc}") from None
    assert isinstance(built, BaseChatModel)  # a fixed model, not a configurable one
    return built
