"""A reader process: parses the files `reading.ReaderPool` hands it, one at a time, within a
memory limit it sets on itself before it reads anything.

Run as `python -m threadsage.adapters.documents.reader_process <memory MB> [images]` (`images`:
load the OCR engine before saying it is ready). A request on stdin
is one JSON line (`{"name": …, "size": n}`) and the file's n bytes (once ready, it says
`{"ready": true}`); the answer on stdout is one
JSON line: `{"title": …, "sections": [[headings, text], …]}` or `{"unreadable": reason}`,
`{"too_long": reason}`, `{"too_costly": "memory"}`, and for images `{"too_large": reason}`,
`{"no_text": reason}`. JSON, not pickle: a parser subverted by a
hostile file must not be able to run code in the bot by what it answers. The time limit is the
pool's (it kills the process); the process also ends when its parent is gone.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from typing import Any, BinaryIO

from threadsage.adapters.documents.images import ImageTooLarge, NoTextInImage, load_ocr
from threadsage.adapters.documents.loaders import DocumentTooLong, parse_bytes
from threadsage.adapters.documents.sections import UnreadableDocument

MB = 1024 * 1024


def answer(data: bytes, name: str) -> dict[str, Any]:
    """What the reader says about one file."""
    try:
        title, sections = parse_bytes(data, name)
    except DocumentTooLong as exc:
        return {"too_long": str(exc)}
    except ImageTooLarge as exc:
        return {"too_large": str(exc)}
    except NoTextInImage as exc:
        return {"no_text": str(exc)}
    except UnreadableDocument as exc:
        return {"unreadable": str(exc)}
    except MemoryError:
        return {"too_costly": "memory"}
    except RecursionError:
        return {"unreadable": "nested too deeply"}
    return {"title": title, "sections": [[list(s.heading_path), s.text] for s in sections]}


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests until the pool closes stdin."""
    while header := requests.readline():
        request = json.loads(header)
        data = requests.read(int(request["size"]))
        reply = answer(data, str(request["name"]))
        del data
        answers.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
        answers.flush()


def _end_with_parent(parent: int) -> None:
    """A reader left behind by a parent that died (mid-way through a hostile file) ends itself."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def main() -> None:
    limit = int(sys.argv[1]) * MB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    threading.Thread(target=_end_with_parent, args=(os.getppid(),), daemon=True).start()
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes where stderr goes, never into the answers
    # The parsers (pypdf, python-docx) were loaded with this module, before the first request:
    if sys.argv[2:] == ["images"]:
        load_ocr()
    answers.write(b'{"ready": true}\n')  # the deadline of the first file starts after this
    answers.flush()
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
