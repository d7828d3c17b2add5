"""Which drawn input matters: a Monte Carlo sweep's inputs ranked by a global method (SALib's first-order
Sobol indices estimated from the given sample, `SALib.analyze.delta` with `method="sobol"`, with bootstrap
confidence intervals), and whether the sample is large enough to tell them apart.

The index S1 of an input is the share of the TCO's variance its value alone explains (a drawn month read as
months since year 0). Inputs are ranked
by S1; an input is told apart from the next when its interval lies wholly above the next one's (the last
one's above 0). When not even the first input is told apart, the sample is too small to rank them.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import math
import re
import warnings
from typing import Any

from trnplan.catalog.base import MONTH_PATTERN
from trnplan.catalog.ranges import as_number
from trnplan.sweep.rows import Row

MIN_RUNS = 10
"""Fewer solved runs than this are not ranked at all: each bootstrap resample would hold a handful."""
RESAMPLES = 100
CONF_LEVEL = 0.95
METHOD = (
    "first-order Sobol index S1 of TCO per input, estimated from the draws (SALib delta.analyze, "
    f"method sobol), {CONF_LEVEL:.0%} confidence by {RESAMPLES} bootstrap resamples"
)
INSTALL_HINT = 'ranking the inputs needs SALib: pip install "trnplan[dask]"'


def _figure(value: float) -> float:
    """Six significant figures: the same text whatever the last bits of the arithmetic."""
    return float(f"{value:.6g}")


def _numeric(value: Any) -> float | None:
    """A drawn value as a number: a month (YYYY-MM) as months since year 0; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, str) and not re.fullmatch(MONTH_PATTERN, value):
        return None
    return as_number(value)


def _too_few(n: int, why: str) -> dict[str, Any]:
    return {"method": METHOD, "runs": n, "inputs": [], "ranked": 0,
            "warning": f"too few samples to rank the inputs: {why}; draw more (--sample N)"}


def rank_inputs(rows: list[Row], paths: list[str], seed: int = 0) -> dict[str, Any]:
    """The inputs ranked by S1 (largest first) with their intervals, how many leading inputs the sample
    tells apart (`ranked`), and a warning when it tells none apart (or cannot rank at all)."""
    solved = [r for r in rows if r.get("tco_usd") is not None and all(
        _numeric(r["set"].get(p)) is not None for p in paths)]
    n = len(solved)
    if n < MIN_RUNS:
        return _too_few(n, f"{n} solved runs, at least {MIN_RUNS} are needed")
    tcos = [r["tco_usd"] for r in solved]
    if max(tcos) - min(tcos) <= 1e-9 * max(1.0, abs(max(tcos))):
        return {"method": METHOD, "runs": n, "inputs": [], "ranked": 0,
                "warning": "TCO is the same in every run: no input moves it"}
    try:
        np = importlib.import_module("numpy")
        delta = importlib.import_module("SALib.analyze.delta")
    except ImportError:
        return {"method": METHOD, "runs": n, "inputs": [], "ranked": 0, "warning": INSTALL_HINT}
    x = np.array([[_numeric(r["set"][p]) for p in paths] for r in solved])
    y = np.array(tcos, dtype=float)
    bounds = [[float(x[:, j].min()), float(x[:, j].max())] for j in range(len(paths))]
    problem = {"num_vars": len(paths), "names": list(paths), "bounds": bounds}
    # SALib draws its resamples from numpy's global generator and seeds it only for a truthy seed (`if
    # seed:`), so seed 0 would leave the intervals to chance: seed it here, whatever the seed, and give the
    # caller's global state back untouched.
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            found = delta.analyze(problem, x, y, num_resamples=RESAMPLES, conf_level=CONF_LEVEL, seed=None,
                                  method="sobol")
    finally:
        np.random.set_state(state)
    inputs: list[dict[str, Any]] = []
    for j, path in enumerate(paths):
        s1, conf = float(found["S1"][j]), float(found["S1_conf"][j])
        if math.isfinite(s1) and math.isfinite(conf):
            inputs.append({"path": path, "s1": _figure(s1), "s1_conf": _figure(conf)})
    inputs.sort(key=lambda i: (-i["s1"], i["path"]))
    ranked = 0
    for i, item in enumerate(inputs):
        below = inputs[i + 1]["s1"] + inputs[i + 1]["s1_conf"] if i + 1 < len(inputs) else 0.0
        item["told_apart"] = item["s1"] - item["s1_conf"] > below
        if item["told_apart"] and ranked == i:
            ranked = i + 1
    out: dict[str, Any] = {"method": METHOD, "runs": n, "inputs": inputs, "ranked": ranked}
    if ranked == 0:
        out["warning"] = ("too few samples to rank the inputs: the first input's interval overlaps the next "
                          f"one's ({n} solved runs); draw more (--sample N)")
    return out
