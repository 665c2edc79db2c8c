"""What a knowledge base's collection is, apart from searching it: how an existing one was made
(`Layout`), what it holds of a document (`StoredDocument`), what its dense ranking is for
(`DenseUse`), its categories' names, and the errors an operator can act on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from threadsage.adapters.knowledge import milvus_lite
from threadsage.adapters.knowledge.filters import Filter, field_in
from threadsage.adapters.knowledge.schema import URL_FIELD
from threadsage.adapters.knowledge.search import HIT_FIELDS
from threadsage.i18n import DEFAULT, Language
from threadsage.settings.environment import LanguageSettings

_CATEGORY = re.compile(r"^[\w.-]{1,128}$")


class KnowledgeBaseError(RuntimeError):
    """A knowledge-base problem an operator can act on; the message says how."""


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    source: str
    content_hash: str
    chunks: int


@dataclass(frozen=True)
class DenseUse:
    """What the dense ranking is fused for (`THREADSAGE_DENSE_SEARCH`, `search.rankings_to_fuse`)."""

    everywhere: bool = True  # `all`: over every passage, besides the other-language ranking
    # A question in none of these gets the other-language ranking.
    document_languages: tuple[Language, ...] = (DEFAULT,)

    @classmethod
    def of(cls, settings: LanguageSettings) -> DenseUse:
        return cls(settings.dense_search == "all", tuple(settings.document_languages))


@dataclass(frozen=True)
class Layout:
    """How an existing collection was made: fixed then, read back whenever it is opened."""

    dense_dim: int | None  # the size of its dense vectors; None: it has none (BM25 alone)
    links: bool  # it has the url field (collections made before links have not)
    milvus_bm25: bool  # Milvus computes BM25 into its sparse field (else that holds a placeholder)
    languages: bool = True  # it has the language field (collections made before it have not)

    @property
    def hit_fields(self) -> list[str]:
        return [*HIT_FIELDS, URL_FIELD] if self.links else HIT_FIELDS


MEMBERS_PREFIX = "slack-members-"  # a private channel's knowledge: its members' only (`chat.members`)


def members_category(channel: str) -> str:
    """The category of what only the members of `channel` may read (a private Slack channel's threads)."""
    return MEMBERS_PREFIX + channel


def members_only(category: str) -> bool:
    return category.startswith(MEMBERS_PREFIX)


def validate_category(category: str) -> str:
    if category and not _CATEGORY.match(category):
        raise KnowledgeBaseError(f"Invalid category {category!r}: use letters, digits, . _ -")
    return category


def unreachable_message(describe: str, exc: Exception, uri: str) -> str:
    detail = str(getattr(exc, "message", "") or exc).strip().splitlines()[0][:300]
    hint = milvus_lite.ONE_PROCESS_HINT if milvus_lite.is_lite_file(uri) else ""
    return f"Cannot open the knowledge base at {describe}: {detail}.{hint}"


def narrowed(categories: Sequence[str] | None, paths: Sequence[str] | None) -> Filter:
    """The rows a search may return: of these categories (None: any) and document paths (None: any)."""
    narrowing = Filter()
    if categories:
        narrowing &= field_in("category", [validate_category(c) for c in categories])
    if paths:
        narrowing &= field_in("path", paths)
    return narrowing
