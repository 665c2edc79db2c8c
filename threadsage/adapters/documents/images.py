"""Images sent with a question (screenshots, mostly): their text read by OCR, offline.

People ask about screenshots of error messages more than about any other attachment. The text
is read by RapidOCR (PP-OCRv4 detection and recognition, Chinese and English, whose ONNX models
ship inside the `rapidocr_onnxruntime` package: nothing is downloaded) and then treated as an
attached document's text. This runs only in a reader process (`reader_process`), never in the
bot: an image's decoding and OCR are costly, and a hostile one must not hold the event loop.

The caps are checked on the header, before a pixel is decoded: a PNG of a few kilobytes may
declare 100,000×100,000 pixels (tens of gigabytes decoded).
"""

from __future__ import annotations

import io
import warnings
from functools import cache
from typing import Any

from PIL import Image, UnidentifiedImageError

from threadsage.adapters.documents.sections import Section, UnreadableDocument

IMAGE_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}
IMAGE_SUFFIXES = {*IMAGE_TYPES.values(), ".jpeg"}
MAX_PIXELS = 40_000_000  # a 4K screen is 8.3 Mpx, a phone photo 12-50: what fits in a reader's memory
MIN_SIDE = 8  # smaller is an icon, not something with text on it
Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow's own guard, for any image opened in this process


class ImageTooLarge(UnreadableDocument):
    """An image over `MAX_PIXELS`: refused from its header, never decoded."""


class NoTextInImage(UnreadableDocument):
    """An image that was read and holds no text OCR could find."""


def is_image(name: str) -> bool:
    return name.lower().endswith(tuple(IMAGE_SUFFIXES))


def media_type_of(name: str) -> str:
    """The media type of an image by its name's suffix (`is_image`), whatever its sender said."""
    suffix = name.lower().rsplit(".", 1)[-1]
    return "image/jpeg" if suffix == "jpeg" else next(t for t, s in IMAGE_TYPES.items() if s == f".{suffix}")


def parse_image(data: bytes, fallback_title: str) -> tuple[str, list[Section]]:
    """The text OCR reads in an image (GIF: its first frame), one line per line found, as one
    section titled by the file's name."""
    image = _opened(data)
    try:
        image.seek(0)
        pixels = image.convert("RGB")
    except (OSError, ValueError, SyntaxError) as exc:  # truncated or corrupt past the header
        raise UnreadableDocument("not a readable image") from exc
    lines = [line for line in _ocr(pixels) if line.strip()]
    if not lines:
        raise NoTextInImage("no text in the image")
    return fallback_title, [Section((), "\n".join(lines))]


def _opened(data: bytes) -> Image.Image:
    """The image, its header read and its size checked; no pixel decoded yet."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageTooLarge(f"more than {MAX_PIXELS:,} pixels") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise UnreadableDocument("not a readable image") from exc
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise ImageTooLarge(f"{width}×{height} pixels, more than {MAX_PIXELS:,}")
    if min(width, height) < MIN_SIDE:
        raise NoTextInImage("too small to hold text")
    return image


def _ocr(image: Image.Image) -> list[str]:
    """The lines of text found, top to bottom (RapidOCR's order)."""
    found, _ = load_ocr()(image)
    return [str(line[1]) for line in found or []]


@cache
def load_ocr() -> Any:
    """The OCR engine, loaded once per reader (about two seconds) and kept. One thread per model:
    the readers are processes, and the bot's other work needs the other cores."""
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
