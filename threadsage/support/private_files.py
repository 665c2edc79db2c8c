"""Files only the bot's own user may read: the data directory (0700) and what threadsage keeps in
it (0600) — conversations, votes, the generated button secret, the Milvus Lite files holding every
category's chunks, the git checkouts. The modes are set exactly, whatever the umask; a data
directory that already exists with wider modes (a Docker volume, say) is tightened at start
(`tighten`), and one holding what another user owns and others may read is refused."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """`path` as a directory, created 0700 when missing (missing parents the usual way). One that
    exists is left as the operator made it."""
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir(mode=DIRECTORY_MODE)
        except FileExistsError:
            return path  # another process made it a moment ago
        path.chmod(DIRECTORY_MODE)  # mkdir's mode is the umask's to narrow
    return path


def private_file(path: Path) -> Path:
    """`path` created empty with mode 0600 unless it exists. SQLite opens it as it is and gives
    its journal files (-wal, -shm) the mode of the database file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return path
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def write_once(path: Path, content: bytes) -> None:
    """Create `path` holding `content` with mode 0600, unless it exists. The file appears whole or
    not at all — written aside, then hard-linked into place, which fails if another process got
    there first — so processes starting together all read the same, complete content."""
    fd, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), FILE_MODE)
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(aside, path)
    finally:
        os.unlink(aside)


def replace_whole(path: Path, content: bytes) -> None:
    """Write `path` (mode 0600) so that a reader sees the old content or the new, never half of
    it: written aside, then renamed over it."""
    fd, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), FILE_MODE)
            file.write(content)
        os.replace(aside, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise


class NotPrivate(PermissionError):
    """The data directory holds something the bot cannot make private."""


def tighten(root: Path) -> None:
    """Everything under `root` (links not followed) that the bot's user owns made 0700 (folders)
    or 0600 (files); `NotPrivate`, naming it, for anything another user owns that others than its
    owner may read. Milvus Lite and git create their files with the umask's modes."""
    if not root.is_dir():
        return
    me = os.getuid()
    for folder, folders, files in os.walk(root):
        for name in [".", *folders, *files]:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                continue
            wanted = DIRECTORY_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE
            if info.st_uid == me:
                if stat.S_IMODE(info.st_mode) != wanted:
                    path.chmod(wanted)
            elif info.st_mode & 0o077:
                raise NotPrivate(
                    f"{path} belongs to another user (uid {info.st_uid}) and others may read it: "
                    f"give the data directory to this user (uid {me}) or empty it"
                )
