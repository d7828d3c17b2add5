"""A sweep's rows (`trnplan sweep --out RESULTS.jsonl`) read for a report, and summed up the way `trnplan
sweep` sums them (`trnplan.sweep.summary.summarize`).

The rows do not say whether they came from a grid, an exact tornado or Monte Carlo draws, nor how many
runs the sweep had: the rows are a tornado when they have its shape (`trnplan.sweep.tornado.is_tornado`),
a grid when the runs cover the product of the varied inputs' values exactly; anything else is read as
draws. The sweep's size is its highest run number plus one.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

from trnplan.errors import InputError, visible
from trnplan.sweep.rows import Row, read_rows_and_torn_line
from trnplan.sweep.summary import summarize
from trnplan.sweep.tornado import METHOD as TORNADO_METHOD
from trnplan.sweep.tornado import is_tornado, tornado_summary

MAX_SWEEP_BYTES = 256 * 1024 * 1024
"""Largest sweep file read: a row takes some 400 bytes, so this is over half a million runs."""


def _finite(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and math.isfinite(value))


def _row_problem(row: Row) -> str | None:
    if not isinstance(row.get("status"), str):
        return "no status"
    for key in ("tco_usd", "capex_usd", "objective"):
        if not _finite(row.get(key)):
            return f"{key} is not a finite number"
    if row["status"] in ("optimal", "feasible") and row.get("tco_usd") is None:
        return "a solved run without tco_usd"
    choices = row.get("choices")
    if not isinstance(choices, dict) or not all(
        isinstance(made, list) and all(isinstance(c, str) for c in made) for made in choices.values()
    ):
        return "choices is not {SITE: [CHOICE, ...]}"
    if not all(isinstance(k, str) and _finite(v) for k, v in row["set"].items() if not isinstance(v, str)):
        return "set holds a value that is not a finite number"
    for key in ("scenario", "base_inputs_digest"):
        if key in row and not isinstance(row[key], str):
            return f"{key} is not a string"
    return None


def read_sweep(path: Path) -> tuple[list[Row], str | None]:
    """The rows of a sweep's `--out` file, checked to hold what a summary reads (InputError otherwise), and
    a warning when its last line is incomplete (a sweep stopped while writing it): that run is not read,
    as `trnplan sweep` itself does not count it, but the reader is told where it is."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(visible(f"{path}: cannot read the sweep: {exc.strerror or exc}")) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(visible(f"{path}: cannot read the sweep: not a regular file"))
    if info.st_size > MAX_SWEEP_BYTES:
        raise InputError(visible(f"{path}: the sweep file is over {MAX_SWEEP_BYTES // 2**20} MiB"))
    rows, _whole, line = read_rows_and_torn_line(path)
    torn = None
    if line is not None:
        torn = visible(f"{path}:{line}:1: the last line is incomplete (a sweep stopped while writing it?): "
                       "that run is not read")
    for number, row in sorted(rows.items()):
        problem = _row_problem(row)
        if problem:
            raise InputError(
                visible(f"{path}: run {number}: {problem}; is this the --out of a trnplan sweep?"))
    if not rows:
        raise InputError(torn or visible(f"{path}: the sweep file holds no runs"))
    return [rows[n] for n in sorted(rows)], torn


def sweep_of_plan(rows: list[Row], scenario: str, digest: str, path: Path) -> str | None:
    """Refuse the rows of another scenario's sweep (InputError); a warning when they were run on other
    specs than the plan's (its `inputs_digest` is not their `base_inputs_digest`): the spread is then of
    another catalog's runs. Rows without the two fields (from before they existed) are not checked."""
    scenarios = sorted({str(r["scenario"]) for r in rows if "scenario" in r})
    if scenarios and scenarios != [scenario]:
        raise InputError(visible(
            f"{path}: the sweep is of scenario {', '.join(scenarios)} and the plan of {scenario}; give a "
            f"sweep of the plan's scenario (trnplan sweep {scenario} ... --out FILE.jsonl)"))
    digests = {r["base_inputs_digest"] for r in rows if "base_inputs_digest" in r}
    if digests and digests != {digest}:
        return visible(f"{path}: the sweep was run on other specs than the plan (their inputs_digest "
                       "differs): its spread is not around this plan's figures")
    return None


def varied(rows: list[Row]) -> list[str]:
    """The inputs the sweep varied: every path any run sets, sorted."""
    return sorted({p for r in rows for p in r["set"]})


def is_grid(rows: list[Row], paths: list[str]) -> bool:
    """Whether the runs are a whole grid: each distinct, together the product of every input's values."""
    distinct = {tuple(repr(r["set"].get(p)) for p in paths) for r in rows}
    product = math.prod(len({repr(r["set"].get(p)) for r in rows}) for p in paths)
    return len(distinct) == len(rows) == product


def sweep_summary(rows: list[Row], objective_kind: str | None) -> dict[str, Any]:
    """The summary `trnplan sweep --format json` prints, from the rows alone; a tornado's rows (`sweep
    --tornado`) give its exact bars as the summary's tornado."""
    paths = varied(rows)
    total = max(r["run"] for r in rows) + 1
    if is_tornado(rows):
        exact = tornado_summary(rows)
        summary = summarize(rows, [], sampled=False, total=total)
        summary["base_tco_usd"] = exact["base_tco_usd"]
        summary["tornado"] = {"method": TORNADO_METHOD, "inputs": [
            {"path": b["input"], **{k: b[k] for k in ("low", "high", "tco_low_usd", "tco_high_usd",
                                                       "swing_usd", "choices_changed")}}
            for b in exact["tornado"]]}
    else:
        summary = summarize(rows, paths, sampled=not is_grid(rows, paths), total=total)
    summary["objective_kind"] = objective_kind or ""
    return summary
