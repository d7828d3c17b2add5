"""Per-site capacity cuts: valid inequalities that tighten the LP relaxation, never the set of plans.

The LP relaxation mixes a fraction of a cheap small fabric mode's binary with a large one's, so it prices
big sites too cheaply. For each site s, each fabric mode m = (scale-out switch o, tiers t) and each
measure q (FP8 PFLOPs always; chips and HBM TB when demanded), a small LP over the site's own rows
(`blocks`) with y[s,m] = 1 and every other mode off gives W[s,m,q], the most of q the
site can hold in mode m; W0[s,q] is the same with no mode on. One row per site and measure:

    sum_i q_i n[s,i] <= W0[s,q] + sum_m (W[s,m,q] - W0[s,q]) y[s,m]

Exact: at most one mode is on (one_fabric), so at any integer point the right-hand side is the LP
maximum of that very mode, which no plan exceeds. Each W is taken a hair high (relative 1e-9 plus 1e-6)
so that LP tolerances can never cut a plan off; an LP that does not end optimal or infeasible gives no
cut for that site (no cut is always valid). Infeasible means no plan uses the mode: W = 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trnplan.optimize.accelerate.blocks import SiteBlock, block_highs, site_blocks
from trnplan.optimize.highs import confirm_infeasible
from trnplan.optimize.model import Model, lin, name
from trnplan.optimize.progress import check_time

MEASURES = ("fp8_pflops", "chips", "hbm_tb", "effective_fp8_pflops")


def measures(model: Model) -> list[str]:
    """FP8 PFLOPs always (the demand or the objective of most scenarios); chips / HBM where demanded;
    effective FP8 PFLOPs (each option's `effective_fp8_pflops`) when the scenario names a workload."""
    scenario = model.scenario
    wanted = {"fp8_pflops"} | {q for q in ("chips", "hbm_tb") if getattr(scenario.demand, q) is not None}
    if scenario.workload is not None:
        wanted.add("effective_fp8_pflops")
    return [q for q in MEASURES if q in wanted]


def _margin(w: float) -> float:
    return w + abs(w) * 1e-9 + 1e-6


def mode_maxima(block: SiteBlock, q: str) -> tuple[float, dict[tuple[str, int], float]] | None:
    """(W0, {mode: W}) of one site and measure, or None when an LP ends neither optimal nor infeasible."""
    import highspy
    import numpy as np

    sm = block.site
    h = block_highs(block, integer=False)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    n_idx = np.array([block.position[v.name] for v in sm.n], dtype=np.int32)
    h.changeColsCost(len(n_idx), n_idx, np.array([float(getattr(o, q)) for o in sm.options]))
    modes = sorted(sm.y)
    y_idx = {m: block.position[sm.y[m].name] for m in modes}
    out: dict[tuple[str, int], float] = {}
    w0 = 0.0
    for mode in [None, *modes]:
        for m, i in y_idx.items():
            on = 1.0 if m == mode else 0.0
            h.changeColBounds(i, on, on)
        if h.run() == highspy.HighsStatus.kError:
            return None
        confirm_infeasible(h)  # an "infeasible" makes W = 0: asked twice
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kOptimal:
            value = _margin(float(h.getInfo().objective_function_value))
        elif status == highspy.HighsModelStatus.kInfeasible:
            value = 0.0
        else:
            return None
        if mode is None:
            w0 = value
        else:
            out[mode] = value
    return w0, out


def add_capacity_cuts(model: Model, rows: Iterable[Any] | None = None) -> int:
    """Add the per-site capacity cuts to the model; returns how many rows were added. `rows`: the rows
    its site blocks may hold (`blocks.site_blocks`; default all of the problem's)."""
    if model.elastic:
        return 0
    try:
        import highspy  # noqa: F401  (the cuts' LPs; without HiGHS, e.g. --solver cbc alone: no cuts)
    except ImportError:
        return 0
    added = 0
    for block in site_blocks(model, rows):
        check_time("adding capacity cuts")
        sm = block.site
        if not sm.options or not sm.y:
            continue
        for q in measures(model):
            if not any(getattr(o, q) for o in sm.options):
                continue
            maxima = mode_maxima(block, q)
            if maxima is None:
                continue
            w0, by_mode = maxima
            pairs: list[tuple[Any, float]] = [
                (v, float(getattr(o, q))) for v, o in zip(sm.n, sm.options, strict=True)
            ]
            pairs += [(sm.y[m], -(w - w0)) for m, w in sorted(by_mode.items())]
            scale = 1.0 / max([w0, *by_mode.values(), 1.0])  # coefficients at most 1: kinder numerics
            model.prob += lin((v, c * scale) for v, c in pairs) <= w0 * scale, name("capcut", sm.tag, q)
            added += 1
    return added
