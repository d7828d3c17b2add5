"""An exact tornado: the base plan, then one re-solve at each ranged input's low and one at its high end,
every other input at its base value. A bar is the TCO of those two re-solves (what `trnplan optimize
--set PATH=END` gives, to the cent) and whether either one's choices differ from the base plan's.

The runs are numbered: 0 is the base plan (it sets nothing), 2k+1 and 2k+2 the k-th input's low and high
end; that shape is how a report tells a tornado's rows from a grid's or a sample's.
"""

from __future__ import annotations

import json
from typing import Any

from trnplan.catalog import Catalog
from trnplan.errors import UsageError
from trnplan.sweep.grid import Ranged, Run, ranged_fields
from trnplan.sweep.rows import Row

SOLVED = ("optimal", "feasible")
METHOD = "exact re-solves at each input's low and high end, every other input at its base value"


def tornado_inputs(catalog: Catalog, scenario_id: str) -> tuple[list[Ranged], list[str]]:
    """The ranged inputs the scenario can use, and the paths of those it cannot (sorted)."""
    used = ranged_fields(catalog, scenario_id)
    paths = {f.path for f in used}
    unused = sorted(f.path for f in ranged_fields(catalog) if f.path not in paths)
    if not used:
        raise UsageError(
            f"--tornado: no input scenario '{scenario_id}' can use has a range "
            "(ranges: {FIELD: [LOW, HIGH]})"
            + (f"; ranged but unused: {', '.join(unused)}" if unused else "")
        )
    return used, unused


def _end(field: Ranged, value: Any) -> Any:
    """A range end as the run sets it: a month as itself, a whole number rounded."""
    return round(value) if field.integer and not field.month else value


def tornado_runs(fields: list[Ranged]) -> list[Run]:
    """Run 0 (the base plan), then each input at its low end and at its high end."""
    runs = [Run(0, {}, ())]
    for k, field in enumerate(fields):
        for i, value in enumerate((field.low, field.high)):
            end = _end(field, value)
            runs.append(Run(2 * k + 1 + i, {field.path: end}, (f"{field.path}={json.dumps(end)}",)))
    return runs


def is_tornado(rows: list[Row]) -> bool:
    """Whether rows have a tornado's shape: run 0 sets nothing, runs 2k+1 and 2k+2 set one and the same
    input each."""
    by_run = {r["run"]: r for r in rows}
    if 0 not in by_run or by_run[0]["set"] or len(rows) < 2:
        return False
    for number, row in by_run.items():
        if number == 0:
            continue
        twin = by_run.get(number + 1 if number % 2 else number - 1)
        if len(row["set"]) != 1 or (twin is not None and set(twin["set"]) != set(row["set"])):
            return False
    return True


def _tco(row: Row | None) -> float | None:
    return row["tco_usd"] if row is not None and row["status"] in SOLVED else None


def tornado_summary(rows: list[Row], unused: list[str] | None = None) -> dict[str, Any]:
    """The tornado as data (what `sweep --tornado --format json` prints): the base TCO, a bar per input
    whose two ends are solved (widest swing first), the inputs whose ends failed, and the unused ones."""
    by_run = {r["run"]: r for r in rows}
    base = by_run.get(0)
    base_choices = base["choices"] if base is not None else None
    bars, failed = [], []
    for number in sorted(n for n in by_run if n % 2 == 1):
        low_row, high_row = by_run[number], by_run.get(number + 1)
        (path, low), = low_row["set"].items()
        tco_low, tco_high = _tco(low_row), _tco(high_row)
        if high_row is None or tco_low is None or tco_high is None:
            statuses = [r["status"] for r in (low_row, high_row) if r is not None]
            failed.append({"input": path, "status": statuses})
            continue
        bars.append({
            "input": path, "low": low, "high": high_row["set"][path], "tco_low_usd": tco_low,
            "tco_high_usd": tco_high, "swing_usd": tco_high - tco_low,
            "choices_changed": base_choices is not None
            and (low_row["choices"] != base_choices or high_row["choices"] != base_choices),
        })
    bars.sort(key=lambda b: (-abs(b["swing_usd"]), b["input"]))
    summary: dict[str, Any] = {
        "method": METHOD,
        "base_tco_usd": _tco(base),
        "tornado": bars,
        "unused": sorted(unused or []),
    }
    if failed:
        summary["failed"] = failed
    return summary
