"""Files written so that they hold the old text or the new, never a part; the one place that writes.

Where trnplan writes (`optimize --out`, `--plans`, `schema --out`): only where a regular file is, or where
nothing is. A directory, FIFO, socket or device at the path is an error (exit 3), and so is a symlink: the
link is not followed and not replaced, so a link committed as `plans/x.yaml -> /etc/passwd` (or a
`--out /dev/stdout`) can neither redirect a write nor be clobbered; name the link's target instead.
Links in the folders above the file are followed as usual. A replaced file keeps its mode, and no file
written has the setuid, setgid or world-write bit (SAFE_MODE_MASK is taken off).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from trnplan.errors import InputError, visible

SAFE_MODE_MASK = 0o6002
"""Mode bits a written file never has: setuid, setgid, writable by others."""


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `path` so that it holds the old text or the new, never a part: write a temporary file in the
    same folder, flush and fsync it, rename it over `path` (atomic), then fsync the folder.

    `path` must be a regular file or not exist: a directory, FIFO, socket, device or symlink there is an
    InputError naming it, before anything is written (symlinks are refused, not followed: see the module
    docstring). The new file keeps the mode of the file it replaces, else gets what the umask allows,
    without the SAFE_MODE_MASK bits (setuid, setgid, world-write) either way.

    The temporary file is `.NAME.PID.XXXXXX.tmp`. A process killed mid-write (SIGKILL, power loss) may
    leave one behind, hidden and never read as a spec or plan; the next write of the same file removes
    those whose writer is gone (or that are over an hour old), so stray files do not pile up.
    """
    p = Path(path)
    mode = _target_mode(p)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {_blocked(p) or exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
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
    should be, or `path` is a folder, a symlink, a FIFO, socket or device: a plan that took minutes to
    solve then fails at once instead."""
    p = Path(path)
    blocked = _blocked(p)
    if blocked:
        raise InputError(f"{p}: cannot write: {blocked}")
    _target_mode(p)


def _target_mode(p: Path) -> int:
    """The mode to write `p` with; InputError when what is at `p` is not a regular file."""
    try:
        info = os.lstat(p)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask & ~SAFE_MODE_MASK
    except ValueError as exc:  # a NUL in the name
        raise InputError(f"{visible(str(p))}: cannot write: {exc}") from None
    except OSError as exc:
        if p.is_dir():
            raise InputError(f"{p}: cannot write: is a folder") from None
        raise InputError(f"{p}: cannot write: {_blocked(p) or exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        target = visible(os.readlink(p))
        raise InputError(
            f"{p}: cannot write: is a symlink (to {target}); trnplan does not write through links: "
            "name the file it points to, or remove the link"
        )
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{p}: cannot write: is a folder")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{p}: cannot write: not a regular file (a pipe, socket or device?); trnplan writes only "
            "regular files"
        )
    return stat.S_IMODE(info.st_mode) & ~SAFE_MODE_MASK


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
