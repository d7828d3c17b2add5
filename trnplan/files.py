"""Files written so that they hold the old text or the new, never a part; the one place that writes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from trnplan.errors import InputError


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `path` so that it holds the old text or the new, never a part: write a temporary file in the
    same folder, flush and fsync it, rename it over `path` (atomic), then fsync the folder.

    The temporary file is `.NAME.PID.XXXXXX.tmp`. A process killed mid-write (SIGKILL, power loss) may
    leave one behind, hidden and never read as a spec or plan; the next write of the same file removes
    those whose writer is gone (or that are over an hour old), so stray files do not pile up.
    """
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {_blocked(p) or exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            # mkstemp makes 0600 files: keep the mode of the file replaced, else what the umask allows.
            try:
                mode = p.stat().st_mode & 0o7777
            except OSError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)  # by name: os.fchmod is POSIX-only before Python 3.13
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            what = "is a folder" if p.is_dir() else exc.strerror or exc
            raise InputError(f"{p}: cannot write: {what}") from None
        raise
    _fsync_dir(p.parent)
    _remove_stale_temps(p)


def check_writable(path: str | Path) -> None:
    """Raise the InputError `write_text_atomic` would, early, when a file stands where `path`'s folder
    should be or `path` is a folder: a plan that took minutes to solve then fails at once instead."""
    p = Path(path)
    blocked = _blocked(p)
    if blocked or p.is_dir():
        raise InputError(f"{p}: cannot write: {blocked or 'is a folder'}")


def _blocked(p: Path) -> str | None:
    """'plans is a file, not a folder' when a file stands where `p`'s folder should be."""
    for parent in p.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else f"{parent} is a file, not a folder"
    return None


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


STALE_TEMP_SECONDS = 3600


def _remove_stale_temps(p: Path) -> None:
    """Remove `.NAME.PID.*.tmp` left by writers of `p` that were killed: their PID is gone, or the file is
    over an hour old (another host's writer, a PID since reused, a name without a PID)."""
    import glob
    import time

    now = time.time()
    for stale in p.parent.glob(f".{glob.escape(p.name)}.*.tmp"):
        pid = stale.name[len(p.name) + 2 :].split(".", 1)[0]
        try:
            if now - stale.stat().st_mtime > STALE_TEMP_SECONDS or (pid.isdigit() and not _alive(int(pid))):
                stale.unlink()
        except OSError:
            continue


def _alive(pid: int) -> bool:
    """Whether process `pid` exists on this host (outside POSIX, assume it does: only the age counts)."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by another user
    return True
