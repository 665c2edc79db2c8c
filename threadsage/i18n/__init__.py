"""Replies in the asker's language: which language a message is written in, and the catalogue of
every fixed text the bot says (notices, clarification prompts, "not covered", help, labels).

Detection is deliberately tiny and dependency-free: the two languages the catalogue holds are told
apart by their scripts. A message is Chinese when its Han characters outweigh its Latin words
(one Han character counting for two thirds of a word, roughly what a Chinese word of 1.5
characters carries), so "VPN 密码怎么重置？" is Chinese and "What does 报销 mean?" English. Kana or
Hangul mean Japanese or Korean, which have no table yet: those get English, as does a message with
no letters at all.

The tables (`en.py`, `zh.py`) hold the same keys with the same `{placeholders}`; a test keeps them
so. Adding a language is a table and a branch in `language_of`.

What is decided before anyone knows whom it is for (a file a front-end could not fetch, a
calculation the calculator refuses) is a `Text`: a key and its fields, put into words where the
language is known. An `Explained` error carries one; its `str()` is the English text, for logs and
for the language model, which words its answer in the asker's language itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Self

from threadsage.i18n import en, zh

Language = Literal["en", "zh"]
DEFAULT: Language = "en"
TABLES: dict[Language, dict[str, str]] = {"en": en.TEXTS, "zh": zh.TEXTS}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
HAN_PER_WORD = 1.5


def language_of(text: str | None, default: Language = DEFAULT) -> Language:
    """The catalogue language a message is written in; `default` when it says nothing (empty,
    only digits or emoji)."""
    if not text:
        return default
    han = len(_HAN.findall(text))
    if han and not _KANA_HANGUL.search(text):
        return "zh" if han >= HAN_PER_WORD * len(_LATIN_WORD.findall(text)) else "en"
    return "en" if _LATIN_WORD.search(text) or han else default


def passage_language(text: str) -> Language:
    """The catalogue language most of a document's passage is written in. Unlike a message, a
    Chinese passage that quotes a Korean or Japanese name ("백악봉") stays Chinese: its script
    decides, not the presence of kana or Hangul."""
    han = len(_HAN.findall(text))
    return "zh" if han and han >= HAN_PER_WORD * len(_LATIN_WORD.findall(text)) else DEFAULT


def language_of_code(code: str | None, default: Language = DEFAULT) -> Language:
    """The catalogue language of an IETF tag a platform reports for a person ("zh-hans", "en")."""
    primary = (code or "").split("-")[0].split("_")[0].lower()
    return next((language for language in TABLES if language == primary), default)


def say(key: str, language: Language = DEFAULT, **fields: object) -> str:
    """The catalogue text `key` in `language`, its `{placeholders}` filled from `fields`."""
    text = TABLES[language][key]
    return text.format(**fields) if fields else text


def opens_as(key: str, text: str) -> bool:
    """Whether `text` opens as the catalogue text `key` does (up to its first field), in any language."""
    return text.startswith(tuple(TABLES[language][key].split("{")[0] for language in TABLES))


def listed(items: Sequence[str], language: Language = DEFAULT) -> str:
    """Items as a sentence lists them: "a", "a and b", "a, b and c" (in Chinese "a、b和c")."""
    if len(items) < 2:
        return "".join(items)
    rest = say("list_comma", language).join(items[:-1])
    return say("list_and", language, rest=rest, last=items[-1])


@dataclass(frozen=True)
class Text:
    """The catalogue text `key` with its fields, not yet in a language."""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def render(self, language: Language = DEFAULT) -> str:
        return say(self.key, language, **self.fields)


class Explained(ValueError):
    """An error that says why in a catalogue text: `text.render(language)` for a person; `str()`
    in English."""

    def __init__(self, key: str, **fields: object) -> None:
        self.text = Text(key, fields)
        super().__init__(self.text.render())

    @classmethod
    def saying(cls, text: Text) -> Self:
        return cls(text.key, **text.fields)
