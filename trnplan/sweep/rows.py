"""The rows a sweep keeps: one JSON object per run, one line each, appended as runs finish.

A row holds at least `run`, `set`, `status`, `tco_usd`, `capex_usd`, `objective` and `choices`
(`{SITE: ["FORM/COOLING/SCALE-UP/SCALE-OUT", ...]}`), and whose sweep it is: `scenario`, and
`base_inputs_digest`, the `inputs_digest` of the scenario's specs with the sweep's `--specs` and `--set`
but before the run's own values (a plan `trnplan optimize` makes from the same specs records the same
digest). A rerun resumes only rows of the same scenario and specs, and `trnplan report --sweep` takes only
the plan's scenario's. Rows without the two (written before they existed) are read as before.

Both read rows through the same checks (`row_problem`: types, finite numbers within MAX_FIGURE, and caps
on the size of a file, a line, a row's inputs and choices), so a forged or edited file is refused at its
line, never summed. A killed sweep can leave a torn last line (no line break): a resumed sweep cuts it off
and solves that run again, but only when it is the start of a row of this sweep; any other text there (a
file that is not a sweep's) is refused, not cut.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from trnplan.errors import InputError, visible
from trnplan.specs.readfile import Unreadable, read_regular

if TYPE_CHECKING:
    from trnplan.plan.model import Plan
    from trnplan.sweep.grid import Run

Row = dict[str, Any]


def plan_row(run: Run, plan: Plan) -> Row:
    """The row of a run that produced a plan."""
    choices: dict[str, list[str]] = {}
    for site_id, site in sorted(plan.sites.items()):
        made = sorted(
            {f"{d.form}/{d.cooling}/{d.scale_up_switch}/{site.scale_out.switch}" for d in site.deployments}
        )
        if made:
            choices[site_id] = made
    objective = plan.objective.value if plan.objective is not None else None
    row: Row = {
        "run": run.run, "set": run.set, "status": plan.status, "tco_usd": plan.totals.tco_usd,
        "capex_usd": plan.totals.capex_usd, "objective": objective, "choices": choices,
    }
    if plan.totals.effective_fp8_pflops is not None:  # a scenario with a workload: what it delivers
        row["effective_fp8_pflops"] = plan.totals.effective_fp8_pflops
        row["usd_per_effective_pflop_hour"] = plan.totals.usd_per_effective_pflop_hour
    return row


def failed_row(run: Run, status: str, message: str) -> Row:
    """The row of a run with no plan: infeasible, invalid (its overrides break the specs), or error."""
    return {
        "run": run.run, "set": run.set, "status": status, "tco_usd": None, "capex_usd": None,
        "objective": None, "choices": {}, "message": message,
    }


def stamped(row: Row, scenario: str, base_digest: str) -> Row:
    """The row with whose sweep it is: the scenario and the digest of the sweep's specs before the run's
    own values."""
    return {**row, "scenario": scenario, "base_inputs_digest": base_digest}


MAX_SWEEP_BYTES = 256 * 1024 * 1024
"""Largest sweep file read (a `--out` resumed, a `report --sweep`): some 2 KiB a row for MAX_RUNS rows."""
MAX_RUNS = 100_000
"""Most runs a sweep has (a grid's product, `--sample N`), and the highest run number a row may carry + 1:
at a second a solve, a day and more on a few dozen cores."""
MAX_LINE_BYTES = 1024 * 1024
"""Longest line read as a row: a row of a 2,000-site portfolio takes some 150 KiB."""
MAX_ROW_INPUTS = 1_000
"""Most inputs (`set` paths) one row sets: every ranged field a scenario can use."""
MAX_ROW_CHOICES = 10_000
"""Most choices (site, FORM/COOLING/SCALE-UP/SCALE-OUT) one row makes: a few per site of 2,000."""
MAX_TEXT = 10_000
"""Longest text a row's `set` value, `status`, `scenario` or digest may be (a `message` is not bounded
but by the line)."""
MAX_FIGURE = 1e15
"""Largest magnitude of a number in a row (as in a plan file: money stops at 1e13 USD, a cent still exact;
sums over every row stay far from overflowing)."""
STATUSES = ("optimal", "feasible", "infeasible", "invalid", "error", "failed")
"""A row's status: a plan (optimal, feasible), none (infeasible; invalid: its overrides break the specs;
error: the solver failed; failed: its worker died, or the task failed on Dask: solved again on a rerun)."""
SOLVED = ("optimal", "feasible")
FIGURES = ("tco_usd", "capex_usd", "objective", "effective_fp8_pflops", "usd_per_effective_pflop_hour")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _figure(value: Any) -> bool:
    """A number a row may hold: finite and within MAX_FIGURE."""
    return _number(value) and math.isfinite(value) and abs(value) <= MAX_FIGURE


def _set_problem(values: Any) -> str | None:
    if not isinstance(values, dict):
        return "set is not {PATH: VALUE}"
    if len(values) > MAX_ROW_INPUTS:
        return f"set holds {len(values):,} inputs, more than the {MAX_ROW_INPUTS:,} a run may vary"
    for path, value in values.items():
        if len(path) > MAX_TEXT:
            return f"set holds a path over {MAX_TEXT:,} characters"
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                return f"set holds a value over {MAX_TEXT:,} characters"
        elif not (value is None or isinstance(value, bool) or _figure(value)):
            return (f"set holds a value that is not a finite number within {MAX_FIGURE:.0e}, "
                    "text, true/false or null")
    return None


def _choices_problem(choices: Any) -> str | None:
    shape = "choices is not {SITE: [CHOICE, ...]}"
    if not isinstance(choices, dict):
        return shape
    made = 0
    for site, picked in choices.items():
        if not isinstance(picked, list) or not all(isinstance(c, str) for c in picked):
            return shape
        made += len(picked)
        if made > MAX_ROW_CHOICES:
            return f"choices holds over {MAX_ROW_CHOICES:,} choices, more than a run makes"
        if len(site) > MAX_TEXT or any(len(c) > MAX_TEXT for c in picked):
            return f"choices holds a name over {MAX_TEXT:,} characters"
    return None


def _head_problem(row: dict[str, Any]) -> str | None:
    """The run number and status."""
    run = row.get("run")
    if not (isinstance(run, int) and not isinstance(run, bool)):
        return "no run number"
    if not 0 <= run < MAX_RUNS:
        return f"run {run} is not a run number (0 to {MAX_RUNS - 1:,})"
    status = row.get("status")
    if not isinstance(status, str):
        return "no status"
    if status not in STATUSES:
        return f"status {visible(status[:40])!r} is not one of {', '.join(STATUSES)}"
    return None


def _figures_problem(row: dict[str, Any]) -> str | None:
    for key in FIGURES:
        if key in row and not (row[key] is None or _figure(row[key])):
            return f"{key} is not a finite number within {MAX_FIGURE:.0e}"
    for key in ("tco_usd", "capex_usd", "objective"):
        if key not in row:
            return f"no {key}"
    if row["status"] in SOLVED and row["tco_usd"] is None:
        return "a solved run without tco_usd"
    return None


def _texts_problem(row: dict[str, Any]) -> str | None:
    for key in ("scenario", "base_inputs_digest", "message"):
        if key in row and not isinstance(row[key], str):
            return f"{key} is not a string"
        if key in row and key != "message" and len(row[key]) > MAX_TEXT:
            return f"{key} is over {MAX_TEXT:,} characters"
    return None


def row_problem(row: Any) -> str | None:
    """What keeps `row` from being a sweep row a summary (or a resumed sweep) can read, or None: the shape
    and types of every field, numbers finite and within MAX_FIGURE, and the caps above."""
    if not isinstance(row, dict):
        return "not a JSON object"
    return (_head_problem(row) or _set_problem(row.get("set")) or _figures_problem(row)
            or _choices_problem(row.get("choices")) or _texts_problem(row))


@dataclass
class RowsRead:
    """The rows of a sweep file by run (a later row of a run replaces an earlier one), the byte length of
    its whole lines, and its torn last line (no line break at its end: a killed sweep's), if any: where it
    starts (line number) and its bytes."""

    rows: dict[int, Row]
    whole: int
    torn_line: int | None
    torn: bytes


def read_row_lines(handle: BinaryIO, path: Path | str) -> RowsRead:
    """Read the rows of an open sweep file, each through `row_problem` (InputError at the first bad one,
    located `FILE:LINE:1`); at most MAX_SWEEP_BYTES, lines of at most MAX_LINE_BYTES."""
    rows: dict[int, Row] = {}
    whole = 0
    number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return RowsRead(rows, whole, None, b"")
        number += 1
        if whole + len(line) > MAX_SWEEP_BYTES:
            raise InputError(visible(f"{path}: the sweep file is over {MAX_SWEEP_BYTES // 2**20} MiB"))
        if not line.endswith(b"\n"):
            if len(line) > MAX_LINE_BYTES:
                raise InputError(visible(
                    f"{path}:{number}:1: a line over {MAX_LINE_BYTES // 2**20} MiB is not a sweep row; is "
                    "this the --out of a trnplan sweep?"))
            return RowsRead(rows, whole, number if line.strip() else None, line)
        whole += len(line)
        if line.strip():
            row = _row(line, f"{path}:{number}:1")
            rows[row["run"]] = row


def _row(line: bytes, where: str) -> Row:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        raise InputError(visible(f"{where}: not a sweep row (a JSON object with run and set); is this the "
                                 "--out of a trnplan sweep?")) from None
    problem = row_problem(row)
    if problem:
        numbered = isinstance(row, dict) and _head_problem({**row, "status": "optimal"}) is None
        run = f"run {row['run']}: " if numbered else ""
        raise InputError(visible(f"{where}: {run}{problem}; is this the --out of a trnplan sweep?"))
    return cast(Row, row)


def read_sweep_file(path: Path) -> RowsRead:
    """The rows of the sweep file at `path` (symlinks followed: it is only read), a regular file of at most
    MAX_SWEEP_BYTES; InputError otherwise."""
    try:
        data = read_regular(path, MAX_SWEEP_BYTES)
    except Unreadable as exc:
        if exc.kind == Unreadable.TOO_LARGE:
            raise InputError(visible(f"{path}: the sweep file is over {MAX_SWEEP_BYTES // 2**20} MiB")
                             ) from None
        raise InputError(visible(f"{path}: cannot read the sweep: {exc.message}")) from None
    return read_row_lines(io.BytesIO(data), path)


_OPEN_FLAGS = (os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
AGAIN = "give another --out, or delete the file to start over"


def _cannot(path: Path, exc: OSError) -> InputError:
    if exc.errno == errno.ELOOP:
        what = "is a symlink; trnplan does not write through links: name the file it points to"
    elif exc.errno == errno.EISDIR:
        what = "is a folder"
    else:
        what = exc.strerror or str(exc)
    return InputError(visible(f"{path}: cannot write the sweep's rows: {what}"))


class RowFile:
    """A sweep's `--out`, opened once without following a link and kept open for the whole sweep: what is
    read is what is appended to, whatever is put at the name meanwhile. A file that does not exist yet is
    created (never through a link, never over a file that appeared meanwhile) when the first rows can
    come: a sweep that cannot start leaves no file behind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._failed = False
        self.read = RowsRead({}, 0, None, b"")
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _cannot(path, exc) from None
        except ValueError as exc:  # a NUL in the name
            raise InputError(visible(f"{path}: cannot write the sweep's rows: {exc}")) from None
        self._file = os.fdopen(fd, "r+b")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise InputError(visible(f"{path}: cannot write the sweep's rows: not a regular file"))
            if info.st_size > MAX_SWEEP_BYTES:
                raise InputError(visible(
                    f"{path}: the sweep file is over {MAX_SWEEP_BYTES // 2**20} MiB; {AGAIN}"))
            os.set_blocking(fd, True)
            self.read = read_row_lines(self._file, path)
        except BaseException:
            self.close()
            raise

    def check_torn(self, digest: str) -> None:
        """Refuse a last line without a line break unless it is the start of a row of this sweep (a
        killed sweep's torn row, cut off before appending): any other text is not a sweep's, and is kept."""
        torn = self.read.torn
        if not torn.strip():
            return
        start = ('{"base_inputs_digest": "' + digest + '", ').encode()
        if not (start.startswith(torn) or torn.startswith(start)):
            raise InputError(visible(
                f"{self.path}:{self.read.torn_line}:1: the last line has no line break and is not the "
                f"start of a row of this sweep (a sweep stopped while writing it); {AGAIN}"))

    def start(self) -> None:
        """Ready to append: cut off a torn last line (through the open file), or create the file."""
        if self._file is None:
            try:
                fd = os.open(self.path, _CREATE_FLAGS, 0o666)
            except FileExistsError:
                raise InputError(visible(
                    f"{self.path}: cannot write the sweep's rows: a file appeared there while the sweep "
                    "started; give another --out")) from None
            except OSError as exc:
                raise _cannot(self.path, exc) from None
            self._file = os.fdopen(fd, "wb")
            return
        self._file.truncate(self.read.whole)
        self._file.seek(self.read.whole)

    def write(self, row: Row) -> None:
        """Append `row`; a failed write (a full disk) is an InputError naming the file and the reason."""
        assert self._file is not None, "RowFile.start() first"
        text = json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        try:
            self._file.write(text.encode("utf-8"))
            self._file.flush()
        except OSError as exc:
            self._failed = True
            raise InputError(f"{visible(str(self.path))}: cannot write the sweep's rows: "
                             f"{exc.strerror or exc}; the rows written so far are kept, and the sweep "
                             "resumes from them") from None

    def close(self) -> None:
        """Close the file; after a failed write, what is left in the buffer is dropped (the row is torn,
        and cut off when the sweep resumes)."""
        if self._file is None:
            return
        try:
            self._file.close()
        except OSError as exc:
            if not self._failed:
                raise InputError(f"{visible(str(self.path))}: cannot write the sweep's rows: "
                                 f"{exc.strerror or exc}") from None
        finally:
            self._file = None


def check_resumable(
    rows: dict[int, Row], runs: Sequence[Run], path: Path, scenario: str, base_digest: str
) -> None:
    """Refuse a `--out` that holds rows of another sweep: a run number beyond it, a different set, another
    scenario, or other specs (a row's `base_inputs_digest`)."""
    for number, row in sorted(rows.items()):
        run = runs[number] if number < len(runs) else None
        if row.get("scenario", scenario) != scenario:
            raise InputError(visible(
                f"{path}: run {number} there is of scenario {str(row['scenario'])!r}, not {scenario!r}; "
                + AGAIN
            ))
        if row.get("base_inputs_digest", base_digest) != base_digest:
            raise InputError(visible(
                f"{path}: run {number} there was solved on other specs (they, --specs or --set changed "
                f"since); {AGAIN}"
            ))
        if run is None or json.loads(json.dumps(run.set)) != row["set"]:
            raise InputError(visible(
                f"{path}: run {number} there is not run {number} of this sweep (another --vary, --sample or "
                f"--seed?); {AGAIN}"
            ))
