"""Plans at a git revision: `REV:path` refs read with `git show`, and the plan files a folder holds there.

The one module of trnplan that runs a subprocess, so `trnplan diff main:plans/x.yaml plans/x.yaml` needs
no checkout. git runs with LC_ALL=C because its messages are matched to explain a failure.

Which is which: an argument of the form `REV:path` is always read from git, even when a file of that
literal name exists, so a pull request cannot commit a file named `origin/main:plans/x.yaml` and forge
its own base. A file whose name holds a colon is named as a path: `./REV:odd.yaml`, or an absolute path;
a Windows drive path (`C:\\plans\\x.yaml`, `C:/plans/x.yaml`) is a path too.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from trnplan.errors import InputError, UsageError
from trnplan.plan.file import MAX_PLAN_BYTES, PlanNotFoundError, parse_plan, read_plan
from trnplan.plan.model import Plan
from trnplan.specs.readfile import human_size

__all__ = ["PlanNotFoundError", "git_show", "is_git_ref", "plan_names_at", "read_plan_ref"]

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def is_git_ref(ref: str) -> bool:
    """Whether `ref` names a plan in git (`REV:path`) rather than a file: it holds a colon and does not
    start like a path (`./`, `../`, `/`, `~`, a Windows drive)."""
    if ":" not in ref or _DRIVE.match(ref):
        return False
    return not ref.startswith(("./", "../", "/", "~", ".\\", "..\\", "\\"))


def read_plan_ref(ref: str, *, cwd: str | Path | None = None) -> Plan:
    """Read a plan from a file path, or from git as `REV:path` (`main:plans/x.yaml`, `HEAD~1:plans/x.yaml`).

    `REV:path` is read from git whether or not a file of that literal name exists (see the module
    docstring); name such a file `./REV:path`. A git path is relative to the repository root
    (`REV:./x.yaml` for the current folder), as with `git show`. Raises PlanNotFoundError when there is no
    such file or no such path at the revision, InputError for every other failure (no git, not a
    repository, unknown revision, not a plan), naming the ref.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    if not is_git_ref(ref):
        path = Path(ref)  # not expanduser(): the shell expands ~, and ~nobody would raise
        return read_plan(path if path.is_absolute() or cwd is None else base / path)
    rev, _, rel = ref.partition(":")
    if rev.startswith("-"):
        raise InputError(f"{ref}: a git revision cannot start with '-'")
    if not rel:
        raise InputError(f"{ref}: no path after the revision (write REV:path, e.g. main:plans/x.yaml)")
    try:
        text = git_show(ref, rev, rel, base)
    except InputError as exc:
        literal = Path(ref) if Path(ref).is_absolute() else base / ref
        if os.path.lexists(literal) and f"./{ref}" not in str(exc):
            raise type(exc)(f"{exc} (to read the file of that name, write ./{ref})") from None
        raise
    return parse_plan(text, source=ref)


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
    """The text of file `rel` at revision `rev` (`ref` is how the user wrote it, for messages).

    `git cat-file blob` takes an object name only: `git show REV:path` would fall back to reading it as a
    pathspec when a file of that literal name exists (and show a commit instead), and would run textconv.
    """
    try:
        proc = _git(["cat-file", "blob", f"{rev}:{rel}"], cwd, max_stdout=MAX_PLAN_BYTES)
    except FileNotFoundError:
        raise InputError(
            f"{ref}: no such file, and git is not installed to read it from a revision"
        ) from None
    except OSError as exc:
        raise InputError(f"{ref}: cannot run git: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise _show_failure(ref, rev, rel, cwd, proc)
    return _plan_text(ref, rev, proc.stdout)


def _git(args: list[str], cwd: Path, max_stdout: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git; with `max_stdout`, stop it once it has printed more than that (the output is then
    max_stdout + 1 bytes long), so a huge blob is refused without being held in memory."""
    env = {**os.environ, "LC_ALL": "C"}  # git's messages are matched; keep them in English
    if max_stdout is None:
        return subprocess.run(["git", *args], capture_output=True, cwd=cwd, check=False, env=env)
    with subprocess.Popen(
        ["git", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        out = proc.stdout.read(max_stdout + 1)
        if len(out) > max_stdout:
            proc.kill()
            proc.wait()
            return subprocess.CompletedProcess(proc.args, 0, out, b"")
        err = proc.stderr.read()
        return subprocess.CompletedProcess(proc.args, proc.wait(), out, err)


def _show_failure(
    ref: str, rev: str, rel: str, cwd: Path, proc: subprocess.CompletedProcess[bytes]
) -> InputError:
    """Why `git cat-file blob REV:path` failed, in the user's terms."""
    err = proc.stderr.decode("utf-8", "replace").strip()
    low = err.lower()
    if "not a git repository" in low:
        return InputError(f"{ref}: no such file, and {cwd} is not in a git repository to read it from")
    if "does not exist in" in low or "exists on disk, but not in" in low:
        return PlanNotFoundError(f"{ref}: no file '{rel}' at revision '{rev}'")
    if "bad file" in low:  # a tree (or a submodule) at that path
        return InputError(f"{ref}: is a directory at revision '{rev}', not a plan file")
    if "invalid object name" in low or "unknown revision" in low or "bad revision" in low:
        return InputError(f"{ref}: unknown git revision '{rev}' (for a file of that name, write ./{ref})")
    first = err.splitlines()[0] if err else f"git exited with {proc.returncode}"
    return InputError(f"{ref}: cannot read it from git: {first}")


def _plan_text(ref: str, rev: str, data: bytes) -> str:
    """The bytes `git show` printed, as plan text: not too large, not a tree listing, UTF-8."""
    if len(data) > MAX_PLAN_BYTES:
        size, limit = human_size(len(data)), human_size(MAX_PLAN_BYTES)
        raise InputError(f"{ref}: file is {size}, over the {limit} limit for a plan file")
    if data.startswith(b"tree "):
        raise InputError(f"{ref}: is a directory at revision '{rev}', not a plan file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{ref}: not a plan file (not UTF-8 text)") from None
