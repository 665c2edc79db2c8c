"""Translating the search query when a question is not in the documents' language.

A Chinese question about English documents shares no words with them: BM25 finds nothing, and the
light embeddings are not multilingual. With a language model, the question is also searched in
translation, in one cheap call on the router model (counted against the turn's budget), and the two
searches are fused. Only the search is translated: the answer stays in the asker's language.

The documents' languages are a setting (`THREADSAGE_DOCUMENT_LANGUAGES`, default `["en"]`), not a
detection over the knowledge base: the operator knows them, and a setting costs nothing at start.
The offline back-end has no translator: questions are searched as asked.

A translation is only used when it is plausibly one — non-empty, of a query's length, different
from the question, and written in the target language by the same detection that picks the reply
language. Anything else (a failed call, garbage, an answer instead of a query) means searching
with the original alone: a translation may help the search, never lose it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from threadsage.adapters.knowledge.search import reciprocal_rank_fusion
from threadsage.adapters.reasoner import ModelBusy
from threadsage.i18n import Language, language_of, say
from threadsage.settings.environment import LanguageSettings

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_GROWTH = 4  # a translation longer than this many times the query (plus slack) is not one
SLACK_CHARS = 80


@runtime_checkable
class Translates(Protocol):
    async def translate(self, query: str, language: str) -> str:
        """`query` in the language named (e.g. "English")."""


@dataclass(frozen=True)
class QueryTranslator:
    model: Translates
    languages: tuple[Language, ...]
    model_calls: int = 1  # reasoning calls one translation costs (counted against the turn's budget)

    def target(self, question: str) -> Language | None:
        """The documents' language to search in as well, or None when the question is in one of them."""
        asked = language_of(question)
        return None if asked in self.languages else self.languages[0]

    async def translated(self, query: str, language: Language) -> tuple[str | None, str]:
        """The translation, or None, and a note for the trace saying which and why."""
        try:
            text = " ".join((await self.model.translate(query, say("answer_language", language))).split())
        except ModelBusy:
            raise  # the turn ends with a "busy" notice, as for any other call
        except Exception as exc:  # noqa: BLE001 - a failed translation leaves the original search
            log.warning("query translation failed (%s): searching as asked", exc.__class__.__name__)
            return None, f"translation failed ({exc.__class__.__name__}): searching as asked"
        if not text or text == query or len(text) > MAX_GROWTH * len(query) + SLACK_CHARS:
            return None, "translation unusable: searching as asked"
        if language_of(text) != language:
            return None, f"translation not in {language}: searching as asked"
        return text, f"also searching in {language}: {text[:160]}"


def make_translator(settings: LanguageSettings, reasoner: object) -> QueryTranslator | None:
    """A translator on the reasoner's router model when it can translate (the language-model
    back-end), else None."""
    if not isinstance(reasoner, Translates) or not settings.document_languages:
        return None
    return QueryTranslator(reasoner, tuple(settings.document_languages))


def fused(asked: Sequence[T], translated: Sequence[T], key: Callable[[T], str], k: int) -> list[T]:
    """The `k` best of the two searches by reciprocal rank, each result once; a tie goes to the
    translation's, which is in the documents' language (MRR 0.57 → 0.85 on the bench, docs/performance.md).
    Shared by the graph and bench/crosslingual.py, so the bench measures the fusion the bot does."""
    by_key = {key(x): x for x in (*asked, *translated)}
    order = reciprocal_rank_fusion([[key(x) for x in translated], [key(x) for x in asked]])
    return [by_key[id_] for id_, _ in order[:k]]
