"""The sources file (`THREADSAGE_SOURCES`): what the running bot keeps in sync.

Its shape is fixed by operators' files and tests (docs/sources.md):

    sources:
      - {name: handbook, type: folder, path: ./docs, category: people, base_url: https://hb.example.com/}
      - {name: site, type: web, url: https://www.example.com/sitemap.xml, category: it, every: 15m}

Unknown keys are refused, so a misspelt `evry:` is reported instead of silently ignored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from threadsage.adapters.knowledge import KnowledgeBaseError, validate_category

SourceType = Literal["folder", "web", "confluence", "git", "slack"]
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_NAME = re.compile(r"^[\w.-]{1,64}$")
_SLACK_CHANNEL = re.compile(r"^[CG][A-Z0-9]{6,}$")
NEEDED = {"folder": ["path"], "web": ["url"], "confluence": ["url", "space"], "git": ["url"], "slack": ["channels"]}


class SourcesFileError(ValueError):
    """The sources file cannot be used; the message names the file, the source and the key."""


class SourceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: SourceType
    category: str = ""
    every: str = "15m"
    base_url: str | None = None
    path: str | None = None  # folder: the folder; git: the folder inside the repository
    url: str | None = None  # web: sitemap or start page; confluence: the site; git: the repository
    space: str | None = None  # confluence
    branch: str | None = None  # git: default branch when unset
    max_pages: int = Field(1000, ge=1)  # web
    max_depth: int = Field(3, ge=0)  # web, from a start page
    concurrency: int = Field(8, ge=1, le=32)  # web: requests to the site at once
    trust_lastmod: bool = True  # web: a page the sitemap dates as when last read is not asked for
    max_page_kb: int = Field(2048, ge=1)  # web, confluence
    labels_as_categories: bool = True  # confluence
    channels: tuple[str, ...] = ()  # slack: channel ids whose resolved threads are indexed

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("use letters, digits, . _ - (up to 64)")
        return value

    @field_validator("category")
    @classmethod
    def _category(cls, value: str) -> str:
        try:
            return validate_category(value)
        except KnowledgeBaseError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("branch")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        if value is not None and (not value or value.startswith("-") or any(c.isspace() for c in value)):
            raise ValueError("a branch name: not empty, not starting with '-', no spaces")
        return value

    @field_validator("channels")
    @classmethod
    def _channels(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        wrong = [c for c in value if not _SLACK_CHANNEL.match(c)]
        if wrong:
            raise ValueError(f"Slack channel ids (C…): not {', '.join(wrong)}")
        return value

    @field_validator("every")
    @classmethod
    def _every(cls, value: str) -> str:
        parse_duration(value)
        return value

    @model_validator(mode="after")
    def _needs(self) -> SourceSpec:
        needed = {
            "folder": ["path"],
            "web": ["url"],
            "confluence": ["url", "space"],
            "git": ["url"],
            "slack": ["channels"],
        }[self.type]
        missing = [key for key in needed if not getattr(self, key)]
        if missing:
            raise ValueError(f"a {self.type} source needs {', '.join(missing)}")
        return self

    @property
    def interval(self) -> float:
        return parse_duration(self.every)


def parse_duration(text: str) -> float:
    """`30s`, `15m`, `2h`, `1d` in seconds."""
    match = _DURATION.match(str(text))
    if not match or float(match[1]) <= 0:
        raise ValueError(f"{text!r} is not a duration such as 30s, 15m, 2h or 1d")
    return float(match[1]) * _UNIT_SECONDS[match[2]]


def load_sources(file: Path) -> list[SourceSpec]:
    """The sources of `file`; relative folder paths are taken from the file's own folder."""
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SourcesFileError(f"cannot read the sources file {file}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), list):
        raise SourcesFileError(f"{file}: expected a `sources:` list (see docs/sources.md)")
    specs: list[SourceSpec] = []
    for number, raw in enumerate(data["sources"], start=1):
        label = raw.get("name", f"#{number}") if isinstance(raw, dict) else f"#{number}"
        try:
            spec = SourceSpec.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'source'}: {e['msg']}" for e in exc.errors())
            raise SourcesFileError(f"{file}: source {label}: {problems}") from None
        if spec.type == "folder" and spec.path and not Path(spec.path).is_absolute():
            spec = spec.model_copy(update={"path": str((file.parent / spec.path).resolve())})
        specs.append(spec)
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise SourcesFileError(f"{file}: source names must be unique ({', '.join(names)})")
    return specs
