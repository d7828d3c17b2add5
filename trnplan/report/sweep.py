"""A sweep's rows (`trnplan sweep --out RESULTS.jsonl`) read for a report, and summed up the way `trnplan
sweep` sums them (`trnplan.sweep.summary.summarize`).

The rows do not say whether they came from a grid, an exact tornado or Monte Carlo draws, nor how many
runs the sweep had: the rows are a tornado when they have its shape (`trnplan.sweep.tornado.is_tornado`),
a grid when the runs cover the product of the varied inputs' values exactly; anything else is read as
draws. The sweep's size is its highest run number plus one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from trnplan.errors import InputError, visible
from trnplan.sweep.rows import MAX_ROW_INPUTS, Row, read_sweep_file
from trnplan.sweep.summary import summarize
from trnplan.sweep.tornado import METHOD as TORNADO_METHOD
from trnplan.sweep.tornado import is_tornado, tornado_summary

MAX_VALUES = 20_000_000
"""Most `set` values a summary reads (runs x inputs varied): the tornado sorts every run once per input."""


def read_sweep(path: Path) -> tuple[list[Row], str | None]:
    """The rows of a sweep's `--out` file, checked to hold what a summary reads (InputError otherwise:
    `trnplan.sweep.rows.row_problem`, and at most MAX_VALUES values over all runs and inputs), and a
    warning when its last line is incomplete (a sweep stopped while writing it): that run is not read, as
    `trnplan sweep` itself does not count it, but the reader is told where it is."""
    read = read_sweep_file(path)
    torn = None
    if read.torn_line is not None:
        torn = visible(f"{path}:{read.torn_line}:1: the last line is incomplete (a sweep stopped while "
                       "writing it?): that run is not read")
    if not read.rows:
        raise InputError(torn or visible(f"{path}: the sweep file holds no runs"))
    rows = [read.rows[n] for n in sorted(read.rows)]
    inputs = len(varied(rows))
    if inputs > MAX_ROW_INPUTS or inputs * len(rows) > MAX_VALUES:
        raise InputError(visible(
            f"{path}: {len(rows):,} runs varying {inputs:,} inputs: more than a summary reads (at most "
            f"{MAX_ROW_INPUTS:,} inputs, {MAX_VALUES:,} values in all); is this the --out of a trnplan "
            "sweep?"))
    return rows, torn


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


def numeric(rows: list[Row], paths: list[str]) -> list[str]:
    """The paths every run that sets sets to a number (not true/false): the ones a tornado can order."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    return [p for p in paths if all(number(r["set"][p]) for r in rows if p in r["set"])]


def sweep_summary(rows: list[Row], objective_kind: str | None) -> dict[str, Any]:
    """The summary `trnplan sweep --format json` prints, from the rows alone; a tornado's rows (`sweep
    --tornado`) give its exact bars as the summary's tornado; otherwise the tornado is over the inputs set
    to numbers (text, true/false or null has no low and high end)."""
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
        summary = summarize(rows, numeric(rows, paths), sampled=not is_grid(rows, paths), total=total)
    summary["objective_kind"] = objective_kind or ""
    return summary
