"""Plans at a git revision: `REV:path` refs read with `git show`, and the plan files a folder holds there.

The one module of trnplan that runs a subprocess, so `trnplan diff main:plans/x.yaml plans/x.yaml` needs
no checkout. git runs with LC_ALL=C because its messages are matched to explain a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from trnplan.errors import InputError, UsageError
from trnplan.plan.file import MAX_PLAN_BYTES, parse_plan, read_plan
from trnplan.plan.model import Plan

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


class PlanNotFoundError(InputError):
    """The ref names no plan: no such file, or no such path at that git revision."""


def read_plan_ref(ref: str, *, cwd: str | Path | None = None) -> Plan:
    """Read a plan from a file path, or from git as `REV:path` (`main:plans/x.yaml`, `HEAD~1:plans/x.yaml`).

    An existing file wins over the git reading, so `C:\\plans\\x.yaml` is a path. A git path is relative
    to the repository root (`REV:./x.yaml` for the current folder), as with `git show`. Raises
    PlanNotFoundError when there is no such file or no such path at the revision, InputError for every
    other failure (no git, not a repository, unknown revision, not a plan), naming the ref.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    path = Path(ref) if Path(ref).is_absolute() else base / ref
    if path.exists() or ":" not in ref or _DRIVE.match(ref):
        if not path.exists():
            raise PlanNotFoundError(f"{ref}: no such plan file")
        return read_plan(path if cwd is not None else ref)
    rev, _, rel = ref.partition(":")
    if rev.startswith("-"):
        raise InputError(f"{ref}: a git revision cannot start with '-'")
    if not rel:
        raise InputError(f"{ref}: no path after the revision (write REV:path, e.g. main:plans/x.yaml)")
    return parse_plan(git_show(ref, rev, rel, base), source=ref)


def plan_names_at(rev: str, plans_dir: str, cwd: Path) -> list[str]:
    """File names of the plans committed at `rev` in `plans_dir` (none when the folder is not there)."""
    try:
        proc = _git(["ls-tree", "--name-only", f"{rev}^{{tree}}", "--", f"{plans_dir.rstrip('/')}/"], cwd)
    except OSError as exc:
        raise UsageError(f"base revision '{rev}': cannot run git: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(
            f"base revision '{rev}': {err[0] if err else 'git ls-tree failed'} "
            "(in CI, check out with fetch-depth: 0)"
        )
    names = [Path(line).name for line in proc.stdout.decode("utf-8").splitlines()]
    return sorted(n for n in names if n.endswith(".yaml"))


def git_show(ref: str, rev: str, rel: str, cwd: Path) -> str:
    """The text of file `rel` at revision `rev` (`ref` is how the user wrote it, for messages)."""
    try:
        proc = _git(["show", "--no-textconv", f"{rev}:{rel}"], cwd)
    except FileNotFoundError:
        raise InputError(
            f"{ref}: no such file, and git is not installed to read it from a revision"
        ) from None
    except OSError as exc:
        raise InputError(f"{ref}: cannot run git: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise _show_failure(ref, rev, rel, cwd, proc)
    return _plan_text(ref, rev, proc.stdout)


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args],
        capture_output=True,
        cwd=cwd,
        check=False,
        env={**os.environ, "LC_ALL": "C"},  # git's messages are matched; keep them in English
    )


def _show_failure(
    ref: str, rev: str, rel: str, cwd: Path, proc: subprocess.CompletedProcess[bytes]
) -> InputError:
    """Why `git show REV:path` failed, in the user's terms."""
    err = proc.stderr.decode("utf-8", "replace").strip()
    low = err.lower()
    if "not a git repository" in low:
        return InputError(f"{ref}: no such file, and {cwd} is not in a git repository to read it from")
    if "does not exist in" in low or "exists on disk, but not in" in low:
        return PlanNotFoundError(f"{ref}: no file '{rel}' at revision '{rev}'")
    if "invalid object name" in low or "unknown revision" in low or "bad revision" in low:
        return InputError(f"{ref}: unknown git revision '{rev}' (and no such file)")
    first = err.splitlines()[0] if err else f"git exited with {proc.returncode}"
    return InputError(f"{ref}: cannot read it from git: {first}")


def _plan_text(ref: str, rev: str, data: bytes) -> str:
    """The bytes `git show` printed, as plan text: not too large, not a tree listing, UTF-8."""
    if len(data) > MAX_PLAN_BYTES:
        raise InputError(f"{ref}: {len(data)} bytes is too large for a plan file")
    if data.startswith(b"tree "):
        raise InputError(f"{ref}: is a directory at revision '{rev}', not a plan file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{ref}: not a plan file (not UTF-8 text)") from None
