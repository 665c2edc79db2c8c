"""Where a document can be read on the web, so that a citation can link to it.

Two sources, in this order: a Markdown file's own front matter (`url: https://…`; a relative
`url: /travel/` is taken relative to the folder's base URL), and the base URL an operator gives a
folder at ingest (`threadsage ingest handbook/ --base-url https://handbook.example.com/`): the
base joined with the file's path relative to that folder, as it is (`finance/travel.md` →
`https://handbook.example.com/finance/travel.md`), each path segment percent-encoded. The
relative path is kept as it is because sites differ in how they map files to pages (`.html`,
no suffix, `/index`); a site that renders elsewhere should publish `url:` in its front matter.
A document with neither has no link: its citation names its path.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import yaml

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?\n", re.DOTALL)


def front_matter(markdown: str) -> dict[str, Any]:
    """A Markdown file's YAML front matter; {} when it has none (or none that is a mapping)."""
    match = FRONT_MATTER.match(markdown)
    try:
        meta = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError:
        meta = None
    return meta if isinstance(meta, dict) else {}


def is_web_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def base_url_error(base_url: str) -> str | None:
    """Why `base_url` cannot be a folder's base URL, or None when it can."""
    if base_url and not is_web_url(base_url):
        return f"--base-url must be an http(s) URL such as https://handbook.example.com/, not {base_url!r}"
    return None


def document_url(relative_path: str, markdown: str | None, base_url: str = "") -> str:
    """The link of a document at `relative_path` (posix, relative to its ingested folder), whose
    text is `markdown` when it is a Markdown file; "" when it has none."""
    base = base_url if not base_url or base_url.endswith("/") else base_url + "/"
    declared = front_matter(markdown).get("url") if markdown is not None else None
    if isinstance(declared, str) and declared.strip():
        url = urljoin(base, declared.strip()) if base else declared.strip()
        if is_web_url(url):
            return url
    return urljoin(base, quote(relative_path)) if base else ""
