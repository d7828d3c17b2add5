"""A sweep's rows summed up: the objective's (and TCO's) distribution, how often each site's choice is
made, and which input matters: for a grid, a tornado of TCO low to high per varied input; for Monte Carlo
draws, the inputs ranked by SALib (`trnplan.sweep.ranking`; a mean over the runs in each quarter of one
input's draws measures the other inputs as much as that one)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trnplan.sweep.ranking import rank_inputs
from trnplan.sweep.rows import Row

SOLVED = ("optimal", "feasible")
GRID_METHOD = (
    "mean TCO of the runs at the input's lowest and at its highest value; other inputs averaged over the grid"
)


def _quartiles(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    if len(ordered) == 1:
        q1 = median = q3 = ordered[0]
    else:
        q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return {"min": ordered[0], "q1": q1, "median": median, "q3": q3, "max": ordered[-1]}


@dataclass(frozen=True)
class Bar:
    """One input of the tornado: TCO (mean over the runs) with it at its low and at its high end."""

    path: str
    low: float
    high: float
    tco_low: float
    tco_high: float

    @property
    def swing(self) -> float:
        return abs(self.tco_high - self.tco_low)


def _mean_tco(rows: list[Row]) -> float | None:
    tcos = [r["tco_usd"] for r in rows if r["tco_usd"] is not None]
    return statistics.fmean(tcos) if tcos else None


def _bar(path: str, low_rows: list[Row], high_rows: list[Row], low: float, high: float) -> Bar | None:
    tco_low, tco_high = _mean_tco(low_rows), _mean_tco(high_rows)
    if tco_low is None or tco_high is None:
        return None
    return Bar(path, low, high, tco_low, tco_high)


def grid_tornado(rows: list[Row], paths: list[str]) -> list[Bar]:
    """Per varied path: mean TCO of the runs at its lowest value, and of those at its highest (every other
    input averaged over the grid)."""
    bars = []
    for path in paths:
        values = [r["set"][path] for r in rows if isinstance(r["set"].get(path), (int, float))]
        if len(set(values)) < 2:
            continue
        low, high = min(values), max(values)
        bar = _bar(path, [r for r in rows if r["set"].get(path) == low],
                   [r for r in rows if r["set"].get(path) == high], low, high)
        if bar:
            bars.append(bar)
    return sorted(bars, key=lambda b: (-b.swing, b.path))


def summarize(rows: list[Row], paths: list[str], *, sampled: bool, total: int) -> dict[str, Any]:
    """The summary as data (what `--format json` prints)."""
    rows = sorted(rows, key=lambda r: r["run"])
    solved = [r for r in rows if r["status"] in SOLVED]
    statuses = Counter(r["status"] for r in rows)
    choices: dict[str, Counter[str]] = {}
    for row in solved:
        for site, made in row["choices"].items():
            choices.setdefault(site, Counter()).update(made)
    objectives = [r["objective"] for r in solved if r["objective"] is not None]
    summary: dict[str, Any] = {
        "runs": total,
        "finished": len(rows),
        "status": dict(sorted(statuses.items())),
        "objective": _quartiles(objectives) if objectives else None,
        "tco_usd": _quartiles([r["tco_usd"] for r in solved]) if solved else None,
        "choices": {
            site: [{"choice": c, "runs": n, "share": n / len(solved)} for c, n in sorted(
                counts.items(), key=lambda kv: (-kv[1], kv[0]))]
            for site, counts in sorted(choices.items())
        },
    }
    if sampled:
        summary["sensitivity"] = rank_inputs(solved, paths)
    else:
        summary["tornado"] = {
            "method": GRID_METHOD,
            "inputs": [
                {"path": b.path, "low": b.low, "high": b.high, "tco_low_usd": b.tco_low,
                 "tco_high_usd": b.tco_high, "swing_usd": b.tco_high - b.tco_low}
                for b in grid_tornado(solved, paths)
            ],
        }
    return summary
