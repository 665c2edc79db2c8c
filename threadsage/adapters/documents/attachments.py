"""Files attached to a question: read by the ingestion loaders, chunked, kept in that session only.

An attachment is context for the conversation it was sent in, never part of the shared knowledge
base: its passages live in the session's graph state and are matched against each question with
the project's own analyzer (a small BM25 over the attached chunks), beside the knowledge base's
hits. Citations name the file as it was sent.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from threadsage.adapters.documents.chunking import chunk_document
from threadsage.adapters.documents.images import (
    IMAGE_SUFFIXES,
    IMAGE_TYPES,
    MAX_PIXELS,
    ImageTooLarge,
    NoTextInImage,
    is_image,
    media_type_of,
)
from threadsage.adapters.documents.loaders import (
    MAX_PDF_CHARS,
    MAX_PDF_PAGES,
    SUPPORTED_SUFFIXES,
    Document,
    DocumentTooLong,
    content_hash,
)
from threadsage.adapters.documents.reading import Budget, ReadersBusy, TooCostly, shared_pool
from threadsage.adapters.documents.sections import UnreadableDocument, clean_text
from threadsage.adapters.reasoner import Passage, TurnImage
from threadsage.i18n import Explained, Language, Text, listed, say
from threadsage.support.text import term_set, terms

MB = 1024 * 1024
MAX_NAME_CHARS = 120
MAX_ATTACHED_PASSAGES = 400  # per session; the oldest files' passages go first
MAX_IMAGES = 4  # read per message; more is a flood (Slack allows 10 files): refused before any is read
SOURCE_PREFIX = "attachment:"  # the source of an attached file's passages (never a path in the knowledge base)
# A question that points at what was sent: "what does the attached file say…", "summarise this
# document", "what does this mean?" (of a screenshot), "附件里…", "这份文件…", "截图里…". Such a
# question is answered from the files alone.
_POINTS_AT_FILE = re.compile(
    r"\b(?:the|this|that|these|those|my|your|attached|uploaded|enclosed)\s+(?:attached\s+|uploaded\s+)?"
    r"(?:file|attachment|document|doc|pdf|docx|upload|screenshot|screen\s?shot|image|picture|photo)s?\b"
    r"|\battach(?:ed|ment|ments)?\b|^\W*what(?:'s|\s+is|\s+does)\s+(?:this|that|it)(?:\s+(?:mean|say))?\W*$"
    r"|附件|附上的|上传的|截图|图片|(?:这|该|此|那)(?:个|份|篇|张)?(?:文件|文档|附件|PDF|图)|^这是什么意思\W*$",
    re.IGNORECASE,
)
SUFFIX_OF_TYPE = {
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "text/plain": ".txt",
    "text/html": ".html",
    **IMAGE_TYPES,
}


@dataclass(frozen=True)
class Attachment:
    """A file sent with a question. A front-end that could not fetch it (too big to download, the
    platform refused) sends it without content and says why in `problem` (put into words in the
    asker's language by the chat service)."""

    name: str
    content: bytes
    media_type: str = ""
    problem: Text | None = None


class Unusable(Explained):
    """Why a file sent with a question could not be used."""


def too_big(name: str, size: int, limit: int) -> Text:
    return Text("file_too_big", {"name": display_name(name), "size": f"{size / MB:.1f}", "limit": f"{limit / MB:g}"})


def unsupported(name: str) -> Text:
    return Text("file_unsupported", {"name": display_name(name)})


def readable_as(name: str, media_type: str) -> str | None:
    """The name the loaders read a file by (its own, or one with the suffix its media type says),
    or None for a type they cannot read — known before anything is downloaded."""
    name = display_name(name)
    if PurePosixPath(name).suffix.lower() in SUPPORTED_SUFFIXES | IMAGE_SUFFIXES:
        return name
    suffix = SUFFIX_OF_TYPE.get(media_type.split(";")[0].strip().lower())
    return name + suffix if suffix else None


def not_fetched(name: str) -> Text:
    return Text("file_not_fetched", {"name": display_name(name)})


def files_read(passages: Sequence[Passage], language: Language) -> str:
    """What the bot says to files sent without a question."""
    names = list(dict.fromkeys(f"“{p['path']}”" for p in passages))
    return say("files_read_one" if len(names) == 1 else "files_read_many", language, names=listed(names, language))


def display_name(name: str) -> str:
    """The file's own name, without any folder part or control characters, of a sane length."""
    base = clean_text(PurePosixPath(name.replace("\\", "/")).name).strip() or "attachment"
    return base if len(base) <= MAX_NAME_CHARS else base[: MAX_NAME_CHARS - 1] + "…"


@dataclass(frozen=True)
class AttachmentReader:
    max_bytes: int = 10 * MB
    chunk_chars: int = 1200
    chunk_overlap: int = 200
    budget: Budget = field(default_factory=Budget)  # of each file's reading: see `reading`

    async def read(self, attachments: Sequence[Attachment], language: Language) -> tuple[list[Passage], list[str]]:
        """The attachments' passages, and a message (in `language`) for each file that could not
        be used. The files are read in the process's reader pool, within its budget (images in
        the pool of `Budget.for_images`); files that wait for a reader longer than a file may take
        are refused as "busy". Images past `MAX_IMAGES` are refused, with one sentence, unread."""
        attachments, flood = _capped(attachments)
        refused = [_too_many_images(flood).render(language)] if flood else []
        if not attachments:
            return [], refused
        waiting = shared_pool(self.budget).run(self._read, attachments, language)
        try:
            passages, problems = await asyncio.wait_for(waiting, len(attachments) * self.budget.seconds * 2 + 5)
        except TimeoutError:
            busy = [Text("file_readers_busy", {"name": display_name(a.name)}) for a in attachments]
            passages, problems = [], [text.render(language) for text in busy]
        return passages, [*problems, *refused]

    def _read(self, attachments: Sequence[Attachment], language: Language) -> tuple[list[Passage], list[str]]:
        passages: list[Passage] = []
        problems: list[str] = []
        for attachment in attachments:
            try:
                passages.extend(self._passages(attachment))
            except Unusable as exc:
                problems.append(exc.text.render(language))
        return passages, problems

    def _passages(self, attachment: Attachment) -> list[Passage]:
        name = display_name(attachment.name)
        if attachment.problem is not None:
            raise Unusable.saying(attachment.problem)
        if len(attachment.content) > self.max_bytes:
            raise Unusable.saying(too_big(name, len(attachment.content), self.max_bytes))
        parse_as = readable_as(name, attachment.media_type)
        if parse_as is None:
            raise Unusable.saying(unsupported(name))
        image = is_image(parse_as)
        budget = self.budget.for_images() if image else self.budget
        try:
            title, sections = shared_pool(budget).parse(attachment.content, parse_as, wait=False)
        except ImageTooLarge as exc:
            raise Unusable("image_too_large", name=name, limit=f"{MAX_PIXELS / 1e6:g}") from exc
        except NoTextInImage as exc:
            raise Unusable("image_no_text", name=name) from exc
        except DocumentTooLong as exc:
            raise Unusable("file_too_long", name=name, pages=MAX_PDF_PAGES, chars=f"{MAX_PDF_CHARS:,}") from exc
        except TooCostly as exc:
            raise Unusable(
                "file_too_costly", name=name, seconds=f"{budget.seconds:g}", memory=budget.memory_mb
            ) from exc
        except UnreadableDocument as exc:  # its reason is the parser's, in English
            if image:  # Pillow's reasons mean nothing to the asker: it is damaged, or no image
                raise Unusable("image_unreadable", name=name) from exc
            raise Unusable("file_unreadable", name=name, reason=exc) from exc
        except ReadersBusy as exc:
            raise Unusable("file_readers_busy", name=name) from exc
        digest = content_hash(attachment.content)
        document = Document(f"{SOURCE_PREFIX}{name}", name, title, sections, digest)
        return [
            Passage(
                id=f"attached-{digest[:16]}-{chunk.index:05d}",
                path=name,
                source=document.source,
                title=title,
                heading=chunk.heading,
                text=chunk.text,
                score=0.0,
            )
            for chunk in chunk_document(document, self.chunk_chars, self.chunk_overlap)
        ]


def _capped(attachments: Sequence[Attachment]) -> tuple[list[Attachment], list[Attachment]]:
    """The attachments to read, and the images past `MAX_IMAGES` (in the order they were sent)."""
    images = [a for a in attachments if _is_image(a)]
    flood = images[MAX_IMAGES:]
    return [a for a in attachments if not any(a is f for f in flood)], flood


def images_read(attachments: Sequence[Attachment], passages: Sequence[Passage]) -> list[TurnImage]:
    """The images among `attachments` whose text was read into `passages` (at most `MAX_IMAGES`):
    what a chat model that sees is shown beside that text. One that could not be read is not."""
    read = {p["path"] for p in passages}
    return [
        TurnImage(name, media_type_of(readable_as(name, a.media_type) or name), a.content)
        for a in _capped(attachments)[0]
        if _is_image(a) and (name := display_name(a.name)) in read
    ]


def _is_image(attachment: Attachment) -> bool:
    """Whether the attachment is an image (by its name or type) that came with its bytes."""
    parse_as = readable_as(attachment.name, attachment.media_type)
    return attachment.problem is None and parse_as is not None and is_image(parse_as)


def _too_many_images(flood: Sequence[Attachment]) -> Text:
    return Text("images_too_many", {"limit": MAX_IMAGES, "count": len(flood)})


def keep_attached(kept: list[Passage] | None, new: list[Passage] | None) -> list[Passage]:
    """The session's attached passages (a graph-state reducer): new files join, a file sent again
    is not doubled, and past `MAX_ATTACHED_PASSAGES` the oldest go."""
    merged = {p["id"]: p for p in [*(kept or []), *(new or [])]}
    return list(merged.values())[-MAX_ATTACHED_PASSAGES:]


def best_attached(query: str, attached: Sequence[Passage], k: int, paths: Sequence[str] | None = None) -> list[Passage]:
    """The `k` attached passages that match `query` best (BM25 over the attached chunks, with the
    analyzer the offline back-end uses), each with its score; none that share no term with it."""
    wanted = term_set(query)
    pool = [p for p in attached if not paths or p["path"] in paths]
    if not wanted or not pool or k <= 0:
        return []
    counts = [Counter(terms("\n".join((p["title"], p["heading"], p["text"])))) for p in pool]
    average = sum(sum(c.values()) for c in counts) / len(counts) or 1.0
    frequency = Counter(term for c in counts for term in wanted if term in c)
    scored = []
    for p, c in zip(pool, counts, strict=True):
        length = sum(c.values())
        score = 0.0
        for term in wanted & c.keys():
            idf = math.log(1 + (len(pool) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            score += idf * c[term] * 2.2 / (c[term] + 1.2 * (0.25 + 0.75 * length / average))
        if score > 0:
            scored.append(Passage(**{**p, "score": round(score, 4)}))
    return sorted(scored, key=lambda p: -p["score"])[:k]


def points_at_attachment(question: str) -> bool:
    """Whether the question is about the file sent ("the attachment", "this document", "附件")."""
    return bool(_POINTS_AT_FILE.search(question))


def without_pointing(question: str) -> str:
    """The question without the words that point at the file: what to look for in it."""
    return " ".join(_POINTS_AT_FILE.sub(" ", question).split())


def from_the_files(query: str, attached: Sequence[Passage], k: int, paths: Sequence[str] | None) -> list[Passage]:
    """For a question that points at the files: their passages that match what it asks about, or,
    when nothing matches ("summarise the attachment"), the opening passages of the file sent last."""
    found = best_attached(without_pointing(query), attached, k, paths)
    if found or not attached:
        return found
    latest = attached[-1]["path"]
    return [Passage(**{**p, "score": 1.0}) for p in attached if p["path"] == latest][:k]


def with_attached(hits: list[Passage], attached: list[Passage], k: int) -> list[Passage]:
    """Evidence from both, the attached passages weighed like the knowledge base's: their scores
    scaled so that the best attached passage scores as the best hit (and goes before it — the
    person sent the file for this conversation); then every passage by score."""
    if not attached:
        return hits[:k]
    best = attached[0]["score"]
    scale = (hits[0]["score"] / best) if hits and best > 0 else 1.0
    # The best attached passages get the best hit's own score: scaled, a float may fall an ulp short.
    mine = [
        Passage(**{**p, "score": hits[0]["score"] if hits and p["score"] >= best else p["score"] * scale})
        for p in attached
    ]
    return sorted([*mine, *hits], key=lambda p: (-p["score"], not p["source"].startswith(SOURCE_PREFIX)))[:k]
