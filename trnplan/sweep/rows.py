"""The rows a sweep keeps: one JSON object per run, one line each, appended as runs finish.

A row holds at least `run`, `set`, `status`, `tco_usd`, `capex_usd`, `objective` and `choices`
(`{SITE: ["FORM/COOLING/SCALE-UP/SCALE-OUT", ...]}`), and whose sweep it is: `scenario`, and
`base_inputs_digest`, the `inputs_digest` of the scenario's specs with the sweep's `--specs` and `--set`
but before the run's own values (a plan `trnplan optimize` makes from the same specs records the same
digest). A rerun resumes only rows of the same scenario and specs, and `trnplan report --sweep` takes only
the plan's scenario's. Rows without the two (written before they existed) are read as before. A killed
sweep can leave a torn last line (no line break): it is dropped, and that run is solved again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from trnplan.errors import InputError

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


def _row(line: bytes, where: str) -> Row:
    try:
        row = json.loads(line)
    except ValueError:
        row = None
    if not (isinstance(row, dict) and isinstance(row.get("run"), int) and isinstance(row.get("set"), dict)):
        raise InputError(f"{where}: not a sweep row (a JSON object with run and set); "
                         "is this the --out of a sweep? use another file")
    return row


def read_rows(path: Path) -> tuple[dict[int, Row], int]:
    """The rows already in `path` by run (none when it does not exist), and the byte length of its whole
    lines: a torn last line (a killed sweep's) is not counted, and is cut off before appending."""
    rows, whole, _torn = read_rows_and_torn_line(path)
    return rows, whole


def read_rows_and_torn_line(path: Path) -> tuple[dict[int, Row], int, int | None]:
    """`read_rows`, and the line number of a torn last line that holds more than blanks (None if none)."""
    if not path.exists():
        return {}, 0, None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    whole = data.rfind(b"\n") + 1
    rows: dict[int, Row] = {}
    for number, line in enumerate(data[:whole].splitlines(), start=1):
        if line.strip():
            row = _row(line, f"{path}:{number}")
            rows[row["run"]] = row
    torn = data.count(b"\n", 0, whole) + 1 if data[whole:].strip() else None
    return rows, whole, torn


class RowFile:
    """Appends whole rows to a sweep's `--out`, each flushed as it is written; a torn last line left by a
    killed run is cut off first."""

    def __init__(self, path: Path, keep: int) -> None:
        self.path = path
        if path.exists() and path.stat().st_size != keep:
            os.truncate(path, keep)
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def write(self, row: Row) -> None:
        self._file.write(json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def check_resumable(
    rows: dict[int, Row], runs: list[Run], path: Path, scenario: str, base_digest: str
) -> None:
    """Refuse a `--out` that holds rows of another sweep: a run number beyond it, a different set, another
    scenario, or other specs (a row's `base_inputs_digest`)."""
    by_number = {r.run: r for r in runs}
    again = "give another --out, or delete the file to start over"
    for number, row in sorted(rows.items()):
        run = by_number.get(number)
        if row.get("scenario", scenario) != scenario:
            raise InputError(
                f"{path}: run {number} there is of scenario {str(row['scenario'])!r}, not {scenario!r}; "
                + again
            )
        if row.get("base_inputs_digest", base_digest) != base_digest:
            raise InputError(
                f"{path}: run {number} there was solved on other specs (they, --specs or --set changed "
                f"since); {again}"
            )
        if run is None or json.loads(json.dumps(run.set)) != row["set"]:
            raise InputError(
                f"{path}: run {number} there is not run {number} of this sweep (another --vary, --sample or "
                f"--seed?); {again}"
            )
