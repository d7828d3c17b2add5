"""A primal heuristic: a near-optimal plan to hand HiGHS as a MIP start, and what it proves about the
optimum. It never decides what is optimal.

Sites couple only through a few rows (demand, supply caps, budgets; `Model.coupling`), so:

1. Duals of those rows from the LP relaxation of the whole model (capacity cuts included).
2. Column generation: each site's own MILP (`blocks`; a phased model's site over the
   whole window) priced by the duals gives that site's best plan at those prices; the plans found so far
   are the columns of a restricted master LP (one "pick one plan" row per site, the coupling rows, an
   artificial shortfall with a large cost so it is never infeasible), re-solved for new duals. A few
   rounds, until no site prices out; the duals kept are those of the round with the best Lagrangian
   bound.
3. Per site and fabric mode, the best plan at those duals, for the columns an integer plan needs; their
   MILP bounds give the Lagrangian bound LB.
4. The restricted master as a MILP (one binary per site and mode) gives a plan that meets the coupling
   rows; polish: the whole model with each site's fabric mode fixed to that plan's (and, in a
   single-period model, the unit counts of each site it took one plan of whole), solved as a MILP. Then,
   in the modes that can still hold a plan no dearer than that one, the best plans at twice the duals,
   and the master and polish (counts free, from the first plan, only for plans that beat it) again
   (not when a gap is asked for and the bound of step 3 proves the first plan within it: `proves`).
   The better plan is the start, of objective UB.
5. What the bound proves, for the solve from the start: with G = UB - LB, a mode whose cheapest plan
   costs more than G above the site's best is fixed off, and each site's reduced cost is held within G
   of its least (`reduced_cost_rows`): both keep every plan no dearer than the start, so every optimum.

HiGHS checks a start's feasibility itself and proves optimality from scratch, so a start changes how
fast the proof comes, never what is proven. Every solve here runs on one thread with a fixed seed and
node (not time) limits, and the column generation (`columns`) takes its sites' results
in site order whatever its threads do, so the start, and the search that follows it, are the same on
every run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pulp

from trnplan.optimize.accelerate.blocks import site_blocks
from trnplan.optimize.accelerate.columns import (
    Column,
    Coupling,
    Pricing,
    clip_duals,
    coupling_rows,
    generate,
    lagrangian_bound,
    margin_columns,
    master,
    mode_columns,
    new_pricings,
    reduced_costs,
)
from trnplan.optimize.highs import HighsModel, keep_within
from trnplan.optimize.model import Model
from trnplan.optimize.progress import check_time, current_deadline

POLISH_NODES = 500

def _polish(
    model: Model,
    full: HighsModel,
    pricings: list[Pricing],
    chosen: list[Choice],
    fix: bool,
    start: list[float] | None = None,
) -> list[float] | None:
    """The whole model with each site's fabric mode fixed to the chosen one, as a MILP (node-limited),
    from `start` when given.

    With `fix`, a site the master gave one plan whole also has its integer counts fixed to that plan's,
    so only the sites it mixed plans at are searched (much faster at scale); if that finds no plan, the
    counts are freed again and only the modes stay fixed. `mip_start` polishes a single-period model that
    way first (the plan whose gap prunes the twice-the-duals columns), then with the counts free from
    that plan. A model with periods is polished with its counts free only (fixed purchases over the
    window gave dearer starts; bench/README.md)."""
    import highspy

    h, col = full.h, full.col
    integer = [i for i, v in enumerate(full.columns) if v.cat == pulp.LpInteger]
    for i in integer:
        h.changeColIntegrality(i, highspy.HighsVarType.kInteger)
    for pr, (mode, _plan) in zip(pricings, chosen, strict=True):
        for m, var in pr.block.modes.items():
            on = 1.0 if m == mode else 0.0
            h.changeColBounds(col[var.name], on, on)
    h.setOptionValue("mip_max_nodes", POLISH_NODES)
    h.setOptionValue("mip_rel_gap", 0.0)
    fixed: list[tuple[int, float, float]] = []  # (column, its bounds before)
    if fix:
        lp = h.getLp()
        lowers, uppers = lp.col_lower_, lp.col_upper_  # each read of either copies the whole column list
        kinds = set(integer)
        for pr, (_mode, plan) in zip(pricings, chosen, strict=True):
            for var, x in zip(pr.block.columns, plan.values if plan else [], strict=False):
                i = col[var.name]
                if i in kinds:  # a count within HiGHS's integrality tolerance of a whole number
                    fixed.append((i, lowers[i], uppers[i]))
                    h.changeColBounds(i, float(round(x)), float(round(x)))
    if start is not None:
        import numpy as np

        h.setSolution(len(start), np.arange(len(start), dtype=np.int32), np.array(start, dtype=float))
    values = _run_polish(h)
    for i, lower, upper in fixed:  # HiGHS drops its solution when the model changes: read it first
        h.changeColBounds(i, lower, upper)
    if values is None and fixed:
        values = _run_polish(h)
    return values


def _run_polish(h: Any) -> list[float] | None:
    keep_within(h, current_deadline())
    h.run()
    if h.getInfo().primal_solution_status != 2:
        return None
    return [float(x) for x in h.getSolution().col_value]


@dataclass
class Start:
    """A MIP start and the fabric modes no plan at least as good as it can use (fixed off for its solve)."""

    values: dict[str, float]
    objective: float  # the start's objective, minimised in HiGHS's terms
    bound: float  # a proven lower bound on the optimum (Lagrangian, from the pricing MILPs)
    fix_off: list[Any] = field(default_factory=list)  # y variables
    rows: list[tuple[list[tuple[str, float]], float]] = field(default_factory=list)  # `solve`'s bounds
    prices: Prices | None = None  # what the bound rests on, when it is complete (`optimize.frontier`)


@dataclass
class Prices:
    """The pricing state the start's bound and rows come from: each site's pricing MILP and block, the
    coupling rows, their duals, each site's least reduced cost per mode, and G = UB - LB."""

    pricings: list[Pricing]
    coupling: Coupling
    duals: list[float]
    bounds: list[dict[Any, float]]
    gap: float


def fix_off(pricings: list[Pricing], bounds: list[dict[Any, float]], gap: float) -> list[Any]:
    """Modes whose cheapest plan at the duals costs more than G above the site's best: any plan using one
    costs more than the start (c x >= LB + its excess over the site's best), so it is never optimal."""
    out = []
    for pr, site in zip(pricings, bounds, strict=True):
        best = min(site.values())
        out += [pr.block.modes[m] for m in sorted(site, key=str) if m is not None and site[m] - best > gap]
    return out


Choice = tuple[Any, "Column | None"]
"""A site's fabric mode in the master MILP's solution, and its plan when the master took one whole."""


def _choose(pricings: list[Pricing], index: list[list[int]], x: list[float]) -> list[Choice]:
    """Each site's fabric mode in the master MILP's solution (at most one mode has weight), and the plan
    it gives weight 1 (None where it mixes plans)."""
    chosen: list[Choice] = []
    for pr, ids in zip(pricings, index, strict=True):
        weight = {c.mode: 0.0 for c in pr.columns if c.mode is not None}
        whole = None
        for c, i in zip(pr.columns, ids, strict=True):
            if c.mode is not None:
                weight[c.mode] += x[i]
            if x[i] > 1 - 1e-9:
                whole = c
        best = max(sorted(weight), key=lambda m: weight[m], default=None)
        chosen.append((best if best is not None and weight[best] > 1e-9 else None, whole))
    return chosen


def gap_of(objective: float, bound: float) -> float:
    """G = UB - LB, with a margin for rounding (inf without a bound)."""
    return objective - bound + 1e-7 * max(1.0, abs(objective)) + 1e-6


def _integer_plan(
    model: Model,
    full: HighsModel,
    pricings: list[Pricing],
    coupling: Coupling,
    costs: list[float],
    seen: list[Any],
    fix: bool,
    start: tuple[list[float], float] | None = None,
) -> tuple[list[float], float] | None:
    """The restricted master as a MILP, polished: a plan of the whole model and its objective, or None
    (also when the master chose what it chose in an earlier call, listed in `seen`: the polish would
    give the same plan again).

    From a `start` (its values and objective) the polish looks only for plans that beat it (HiGHS's
    `objective_bound`), which stops it early where none does."""
    h, index = master(pricings, coupling, integer=True)
    if h.getInfo().primal_solution_status != 2:
        return None
    chosen = _choose(pricings, index, list(h.getSolution().col_value))
    key = [fix, *((mode, None if plan is None or not fix else plan.values) for mode, plan in chosen)]
    if key in seen:
        return None
    seen.append(key)
    if start is not None:  # HiGHS stops where its bound shows no plan beats the start's
        full.h.setOptionValue("objective_bound", start[1])
    values = _polish(model, full, pricings, chosen, fix, start[0] if start else None)
    full.h.setOptionValue("objective_bound", math.inf)
    if values is None:
        return None
    return values, sum(c * x for c, x in zip(costs, values, strict=True))


def relative_gap(model: Model, objective: float, bound: float) -> float:
    """The relative gap between a plan's objective and a bound, both minimised in HiGHS's terms (the
    problem's constant left out), as HiGHS measures it: (plan - bound) / |plan|, the constant put back."""
    constant = float(model.prob.objective.constant)
    plan = objective + constant
    return (plan - (bound + constant)) / max(abs(plan), 1e-12)


def proves(model: Model, objective: float, bound: float, gap: float) -> bool:
    """Whether a plan of `objective` is proven within the relative `gap` by the Lagrangian `bound` (min_tco
    only: the figures are the minimised costs; a gap of 0 asks for a proof no bound here gives)."""
    if gap <= 0 or model.scenario.objective != "min_tco":
        return False
    return 0 <= relative_gap(model, objective, bound) <= gap


def mip_start(model: Model, gap: float = 0.0) -> Start | None:
    """A feasible plan of the model's current objective and the modes it rules out, or None. With a `gap`,
    a first plan the bound already proves within it is the start: step 4's second master and polish, which
    look for a better one, are skipped (the search is then skipped too: `accelerate`)."""
    import highspy

    if model.elastic or not model.sites:
        return None
    prob = model.prob
    check_time("the start heuristic")
    full = HighsModel(prob, mip=False)
    full.h.run()
    if full.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    check_time("the start heuristic")
    blocks = site_blocks(model)
    coupling = coupling_rows(model, blocks)
    dual = list(full.h.getSolution().row_dual)
    index_of = {c.name: i for i, c in enumerate(prob.constraints())}
    duals = clip_duals(coupling, [float(dual[index_of[name]]) for name in coupling.names])
    costs = list(full.h.getLp().col_cost_)
    site_costs = [[float(costs[full.col[v.name]]) for v in block.columns] for block in blocks]
    pricings = new_pricings(blocks, site_costs, coupling, lean=not model.multi)
    duals = generate(pricings, coupling, duals)
    check_time("the start heuristic")
    bounds = mode_columns(pricings, coupling, duals)
    complete = all(len(site) == len(pr.block.modes) + 1 for pr, site in zip(pricings, bounds, strict=True))
    bound = -math.inf
    if complete:
        bound = lagrangian_bound(coupling, duals, [min(site.values()) for site in bounds])
    seen: list[Any] = []
    fix = not model.multi
    check_time("the start heuristic")
    first = _integer_plan(model, full, pricings, coupling, costs, seen, fix)
    check_time("the start heuristic")
    again = None
    if not (complete and first is not None and proves(model, first[1], bound, gap)):
        margin = math.inf if first is None else gap_of(first[1], bound)
        margin_columns(pricings, coupling, duals, bounds, margin)
        again = _integer_plan(model, full, pricings, coupling, costs, seen, False, first)
    plans = [p for p in (first, again) if p is not None]
    if not plans:
        return None
    values, objective = min(plans, key=lambda p: p[1])
    start = Start({v.name: values[i] for i, v in enumerate(full.columns)}, objective, bound)
    if complete:
        gap = gap_of(objective, bound)
        start.fix_off = fix_off(pricings, bounds, gap)
        start.rows = reduced_cost_rows(pricings, coupling, duals, bounds, gap)
        start.prices = Prices(pricings, coupling, duals, bounds, gap)
    return start


def reduced_cost_rows(
    pricings: list[Pricing],
    coupling: Coupling,
    duals: list[float],
    bounds: list[dict[Any, float]],
    gap: float,
) -> list[tuple[list[tuple[str, float]], float]]:
    """Per site, `reduced cost of its plan <= its least reduced cost + G`.

    For any plan x, c x = sum_s rc_s(x_s) + pi'(A x) >= sum_s rc_s(x_s) + pi'b (the duals have the signs
    that make pi'(A x - b) >= 0 on a plan that meets the coupling rows), and rc_s(x_s) >= min_s (the
    pricing MILPs' bounds). A plan no dearer than the start (c x <= LB + G, LB = pi'b + sum_s min_s) so
    has sum_s (rc_s(x_s) - min_s) <= G, each term >= 0: each site's own row holds. Every optimum keeps
    them; what they cut off is dearer than the start. G carries a margin for rounding (see mip_start)."""
    rows = []
    for s, (pr, site) in enumerate(zip(pricings, bounds, strict=True)):
        least = min(site.values())
        if not math.isfinite(least):
            continue
        cost = reduced_costs(pr, s, coupling, duals)
        terms = [(v.name, c) for v, c in zip(pr.block.columns, cost, strict=True) if c]
        if terms:
            rows.append((terms, least + gap))
    return rows


@contextmanager
def tightened(start: Start | None) -> Iterator[None]:
    """The start's fixings applied to the model's variables for one solve, then undone."""
    saved = [(v, v.upBound) for v in (start.fix_off if start else [])]
    for v, _ub in saved:
        v.upBound = 0
    try:
        yield
    finally:
        for v, ub in saved:
            v.upBound = ub
