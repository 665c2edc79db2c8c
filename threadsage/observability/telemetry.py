"""What operators watch: JSON log lines that name the turn they belong to, and Prometheus metrics.

Logs carry no secrets: user text is logged only at DEBUG, the loggers that print URLs holding the
Telegram token or request bodies are kept at WARNING, and every record is scrubbed
(threadsage/observability/redaction.py) of passwords in connection URLs, of anything shaped like a Slack,
Telegram or OpenAI token and of the configured secrets. Metrics live in prometheus-client's
process-wide registry, created once at import; `GET /metrics` serves them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from pydantic import SecretStr

from threadsage.observability.redaction import RedactingFilter
from threadsage.settings.environment import Settings

log = logging.getLogger(__name__)

# --- metrics -----------------------------------------------------------------------------------

TURNS = Counter(
    "threadsage_turns", "Turns handled, by how they ended.", ["platform", "route", "outcome"]
)  # outcome: answer | clarification | notice | duplicate | error | rate_limited
TURN_SECONDS = Histogram(
    "threadsage_turn_duration_seconds",
    "Time from receiving a turn to having its replies, session lock wait included.",
    ["platform", "route"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120),
)
TURNS_IN_FLIGHT = Gauge("threadsage_turns_in_flight", "Turns being handled now.", ["platform"])
CLARIFICATIONS = Counter(
    "threadsage_clarifications", "Clarification questions asked, answered and abandoned.", ["platform", "event"]
)
LLM_CALLS = Counter(
    "threadsage_llm_calls", "Language-model calls (client retries included in one).", ["model", "kind"]
)  # kind: the structured-output schema (a repair: "<schema> repair"), or the text call's name
LLM_TOKENS = Counter("threadsage_llm_tokens", "Tokens the model reported.", ["model", "kind", "type"])
ERRORS = Counter("threadsage_errors", "Failures, by where they happened.", ["where"])
QUEUE_DEPTH = Gauge("threadsage_queue_depth", "Turns queued, running or waiting for a retry (serve and worker).")
QUEUE_OLDEST = Gauge("threadsage_queue_oldest_age_seconds", "Age of the oldest turn not yet finished.")


def render_metrics(accept: str) -> tuple[bytes, str]:
    """The registry in the format the scraper asked for (Prometheus text or OpenMetrics)."""
    encode, content_type = choose_encoder(accept)
    return encode(REGISTRY), content_type


def count_tokens(model: str, kind: str, usage: Mapping[str, Any] | None) -> None:
    """`usage` as the Chat Completions API reports it (`prompt_tokens`, `completion_tokens`)."""
    if usage:
        LLM_TOKENS.labels(model, kind, "input").inc(usage.get("prompt_tokens") or 0)
        LLM_TOKENS.labels(model, kind, "output").inc(usage.get("completion_tokens") or 0)


@dataclass
class TurnScope:
    """What a turn's handler reports before leaving `turn_scope`; a turn that raises stays an error."""

    outcome: str = "error"
    route: str = "none"  # for turns that never reached the graph's decision


@dataclass(frozen=True)
class _TurnIds:
    session: str
    turn: str


_current: ContextVar[_TurnIds | None] = ContextVar("threadsage_turn", default=None)


@contextmanager
def turn_scope(session: str, turn: str, platform: str) -> Iterator[TurnScope]:
    """One turn: its ids on every log line written inside it (threads started with
    `asyncio.to_thread` included), counted in flight, then by outcome and latency."""
    ids = _current.set(_TurnIds(session, turn))
    scope = TurnScope()
    TURNS_IN_FLIGHT.labels(platform).inc()
    start = time.perf_counter()
    try:
        yield scope
    except Exception:
        ERRORS.labels("turn").inc()
        raise
    finally:
        elapsed = time.perf_counter() - start
        TURNS_IN_FLIGHT.labels(platform).dec()
        TURNS.labels(platform, scope.route, scope.outcome).inc()
        TURN_SECONDS.labels(platform, scope.route).observe(elapsed)
        log.info("turn handled: %s, route %s, %.0f ms", scope.outcome, scope.route, elapsed * 1000)
        _current.reset(ids)


# --- logs --------------------------------------------------------------------------------------

# httpx and httpcore print request URLs, and Telegram's hold the bot token; faiss chatters on import;
# slack_bolt logs request bodies at INFO (on a bad signature, the whole body: anyone could flood the log).
_QUIET = ("httpx", "httpcore", "faiss", "slack_bolt")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, session and turn inside a turn,
    exc for a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if ids := _current.get():
            entry |= {"session": ids.session, "turn": ids.turn}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The classic line for a terminal, with the turn's ids in brackets."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(turn_ids)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        ids = _current.get()
        record.turn_ids = f" [{ids.session} {ids.turn}]" if ids else ""
        return super().format(record)


def configure_logging(settings: Settings) -> None:
    """Replace the root logger's handlers with one stderr handler in the configured format, every
    record scrubbed of the configured secrets (of every section: hence the whole `Settings`)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else TextFormatter())
    handler.addFilter(RedactingFilter(_configured_secrets(settings)))
    logging.basicConfig(level=settings.log_level, handlers=[handler], force=True)
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


def configure_console_logging() -> None:
    """For the commands that are not servers: warnings as bare lines on stderr, as Python prints
    them when logging is not set up, but scrubbed (connection pools log their failed attempts)."""
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    logging.basicConfig(level=logging.WARNING, format="%(message)s", handlers=[handler])


def _configured_secrets(settings: Settings) -> list[str]:
    """The secret settings of every section, and the passwords inside the connection URLs (libraries
    may quote them out of their URL); none shorter than 8 characters, which would garble lines."""
    values = [getattr(settings, name) for name in type(settings).model_fields]
    secrets = [value.get_secret_value() for value in values if isinstance(value, SecretStr)]
    secrets += list(settings.mcp_readers())  # one secret holding several: each token on its own
    for url in filter(None, (settings.database_url, settings.redis_url, settings.milvus_uri)):
        try:
            password = urlsplit(url).password
        except ValueError:  # not a URL Python can parse: the patterns still catch what it holds
            continue
        secrets += [password, unquote(password)] if password else []
    return [secret for secret in secrets if len(secret) >= 8]
