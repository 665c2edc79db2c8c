"""The settings of the MCP server (`threadsage.bots.mcp`): who may read the knowledge base from an
editor or an agent, and which categories. A mixin of `threadsage.settings.environment.Settings`, as
those of `sections.py`."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, SecretStr

from threadsage.settings.sections import section

EVERY_CATEGORY = "*"
MIN_TOKEN_CHARS = 24  # as the console's password: a bearer token is all that stands in front of the documents


def readers_of(tokens: SecretStr | None) -> dict[str, tuple[str, ...] | None]:
    """Each bearer token → the categories it may read (None: every one; an empty list: none).
    Raises ValueError, naming no token, when the value is not a JSON object of token → list of
    category names, or a token is shorter than `MIN_TOKEN_CHARS`."""
    if tokens is None or not tokens.get_secret_value().strip():
        return {}
    try:
        parsed = json.loads(tokens.get_secret_value())
    except json.JSONDecodeError:
        raise ValueError("THREADSAGE_MCP_TOKENS is not JSON: it is an object of token → list of categories") from None
    if not isinstance(parsed, dict):
        raise ValueError("THREADSAGE_MCP_TOKENS is an object of token → list of categories")
    readers: dict[str, tuple[str, ...] | None] = {}
    for number, (token, categories) in enumerate(parsed.items(), start=1):
        if len(token) < MIN_TOKEN_CHARS:
            raise ValueError(f"THREADSAGE_MCP_TOKENS: token {number} is shorter than {MIN_TOKEN_CHARS} characters")
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise ValueError(f"THREADSAGE_MCP_TOKENS: the categories of token {number} are not a list of names")
        readers[token] = None if EVERY_CATEGORY in categories else tuple(categories)
    return readers


def _valid_tokens(tokens: SecretStr | None) -> SecretStr | None:
    readers_of(tokens)
    return tokens


class McpSettings(BaseModel):
    """The knowledge base as an MCP server, for editors and agents."""

    mcp_tokens: Annotated[SecretStr | None, AfterValidator(_valid_tokens)] = Field(
        None,
        description="The MCP server at `/mcp` (Streamable HTTP; tools `search` and `ask`): a JSON object of bearer "
        'token → the categories it may read, `["*"]` = every one, `[]` = none: `{"<token>": ["it", "people"]}`. '
        f"Each token at least {MIN_TOKEN_CHARS} characters. Unset = no MCP server (docs/mcp.md)",
        json_schema_extra=section("The MCP server"),
    )

    def mcp_readers(self) -> dict[str, tuple[str, ...] | None]:
        return readers_of(self.mcp_tokens)
