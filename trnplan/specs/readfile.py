"""Read an input file the one way trnplan reads spec and plan files: a regular file only, at most a cap of
bytes, never blocking.

The name is checked with stat() first, so a pipe, socket, device or directory (also behind a symlink:
`plans/x.yaml -> /dev/zero`) is refused without being opened; then the file is opened with O_NONBLOCK and
O_NOCTTY (if it was swapped for a FIFO meanwhile, the open does not wait for a writer) and the open
descriptor is fstat()ed again: it must still be a regular file, the same one, within the cap. The read
stops at cap + 1 bytes, so a file that grows while it is read is refused too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class Unreadable(Exception):
    """Why a file cannot be read as input: `kind` is one of MISSING, BROKEN_LINK, LOOP, DIRECTORY, SPECIAL,
    TOO_LARGE, OTHER; `message` says it in words (without the file name); `size` is set for TOO_LARGE."""

    MISSING = "missing"
    BROKEN_LINK = "broken symlink"
    LOOP = "symlink loop"
    DIRECTORY = "directory"
    SPECIAL = "not a regular file"
    TOO_LARGE = "too large"
    OTHER = "other"

    def __init__(self, kind: str, message: str, size: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.size = size


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
"""Open without waiting for a FIFO's writer, without taking a terminal as controlling tty, in binary."""
_NOT_REGULAR = "not a regular file (a pipe, socket or device?)"


def human_size(n: int) -> str:
    """A byte count for messages: 512 bytes, 3.5 KiB, 30.0 MiB."""
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MiB"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} bytes"


def _refuse_mode(mode: int) -> Unreadable | None:
    if stat.S_ISDIR(mode):
        return Unreadable(Unreadable.DIRECTORY, "is a directory")
    if not stat.S_ISREG(mode):
        return Unreadable(Unreadable.SPECIAL, _NOT_REGULAR)
    return None


def _os_failure(path: str | Path, exc: OSError) -> Unreadable:
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return Unreadable(Unreadable.BROKEN_LINK, "broken symlink")
        return Unreadable(Unreadable.MISSING, "file not found")
    if exc.errno == errno.ELOOP:
        return Unreadable(Unreadable.LOOP, "symlink loop (too many levels of symbolic links)")
    if exc.errno == errno.EISDIR:
        return Unreadable(Unreadable.DIRECTORY, "is a directory")
    return Unreadable(Unreadable.OTHER, f"cannot read: {exc.strerror or exc}")


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed), at most `max_bytes` of them; raises
    `Unreadable` for anything else, before reading a byte of it."""
    try:
        before = os.stat(path)
    except OSError as exc:
        raise _os_failure(path, exc) from None
    except ValueError as exc:  # a NUL in the name
        raise Unreadable(Unreadable.OTHER, f"cannot read: {exc}") from None
    refused = _refuse_mode(before.st_mode)
    if refused is None and before.st_size > max_bytes:
        refused = Unreadable(Unreadable.TOO_LARGE, "too large", before.st_size)
    if refused is not None:
        raise refused
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise _os_failure(path, exc) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        refused = _refuse_mode(info.st_mode)
        if refused is None and (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
            refused = Unreadable(Unreadable.OTHER, "the file was replaced while it was being read")
        if refused is None and info.st_size > max_bytes:
            refused = Unreadable(Unreadable.TOO_LARGE, "too large", info.st_size)
        if refused is not None:
            raise refused
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise Unreadable(Unreadable.OTHER, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew since fstat()
        raise Unreadable(Unreadable.TOO_LARGE, "too large")
    return data
