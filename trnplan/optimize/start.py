"""A primal heuristic: a near-optimal plan to hand HiGHS as a MIP start, and what it proves about the
optimum. It never decides what is optimal.

Sites couple only through a few rows (demand, supply caps, budgets; `Model.coupling`), so:

1. Duals of those rows from the LP relaxation of the whole model (capacity cuts included).
2. Column generation: each site's own MILP (`trnplan.optimize.blocks`; a phased model's site over the
   whole window) priced by the duals gives that site's best plan at those prices; the plans found so far
   are the columns of a restricted master LP (one "pick one plan" row per site, the coupling rows, an
   artificial shortfall with a large cost so it is never infeasible), re-solved for new duals. A few
   rounds, until no site prices out; the duals kept are those of the round with the best Lagrangian
   bound.
3. Per site and fabric mode, the best plan at those duals, for the columns an integer plan needs; their
   MILP bounds give the Lagrangian bound LB.
4. The restricted master as a MILP (one binary per site and mode) gives a plan that meets the coupling
   rows; polish: the whole model with each site's fabric mode fixed to that plan's (and the unit counts
   of each site it took one plan of whole), solved as a MILP. Then, in the modes that can still hold a
   plan no dearer than that one, the best plans at twice the duals, and the master and polish again.
   The better of the two plans is the start, of objective UB.
5. What the bound proves, for the solve from the start: with G = UB - LB, a mode whose cheapest plan
   costs more than G above the site's best is fixed off, and each site's reduced cost is held within G
   of its least (`reduced_cost_rows`): both keep every plan no dearer than the start, so every optimum.

HiGHS checks a start's feasibility itself and proves optimality from scratch, so a start changes how
fast the proof comes, never what is proven. Every solve here runs on one thread with a fixed seed and
node (not time) limits; sites are priced on PRICE_THREADS threads, each on its own HiGHS instance, and
the results are taken in site order, so the start, and the search that follows it, are the same on
every run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import pulp

from trnplan.optimize.blocks import SiteBlock, block_highs, new_highs, site_blocks
from trnplan.optimize.model import Model

MAX_ROUNDS = 4
PRICE_NODES = 2000
PRICE_THREADS = min(2, os.cpu_count() or 1)  # pricing threads (each HiGHS instance itself runs on one)
T = TypeVar("T")
MODE_PRICES = (1.0, 2.0)
POLISH_NODES = 500
ARTIFICIAL = 1e4  # per unit of a coupling row's shortfall, in the objective's own units (scaled)


@dataclass
class Coupling:
    """The coupling rows in HiGHS's terms: bounds, and each site's terms (block position, coefficient)."""

    names: list[str]
    lower: list[float]
    upper: list[float]
    terms: list[dict[int, list[tuple[int, float]]]]  # row -> site -> [(position, coef)]


@dataclass
class Column:
    values: list[float]
    cost: float
    usage: list[float]
    mode: Any  # the fabric mode the plan uses (None: the empty site)


@dataclass
class Pricing:
    """One site's pricing MILP and its columns."""

    block: SiteBlock
    highs: Any
    cost: list[float]
    columns: list[Column] = field(default_factory=list)


def full_highs(prob: pulp.LpProblem, *, mip: bool) -> Any:
    """The whole PuLP model as a HiGHS model, built the way PuLP builds it (so var.index is its column)."""
    solver = pulp.HiGHS(msg=False, threads=1, random_seed=0, mip=mip)
    h = new_highs()
    prob.solverModel = h
    solver.buildSolverModel(prob)
    return h


def coupling_rows(model: Model, blocks: list[SiteBlock]) -> Coupling:
    owner = {v.name: (s, b.position[v.name]) for s, b in enumerate(blocks) for v in b.columns}
    out = Coupling([], [], [], [])
    rows = {c.name: c for c in model.prob.constraints()}
    for name in model.coupling:
        row = rows[name]
        rhs = -float(row.constant)
        out.names.append(name)
        out.lower.append(rhs if row.sense in (0, 1) else -math.inf)
        out.upper.append(rhs if row.sense in (0, -1) else math.inf)
        by_site: dict[int, list[tuple[int, float]]] = {}
        for var, coef in row.items():
            s, pos = owner[var.name]
            by_site.setdefault(s, []).append((pos, float(coef)))
        out.terms.append(by_site)
    return out


def _column(pricing: Pricing, s: int, coupling: Coupling, values: list[float]) -> Column:
    cost = sum(c * x for c, x in zip(pricing.cost, values, strict=True))
    usage = [sum(c * values[p] for p, c in rows.get(s, [])) for rows in coupling.terms]
    modes = pricing.block.modes
    on = [m for m, v in modes.items() if values[pricing.block.position[v.name]] > 0.5]
    return Column(values, cost, usage, on[0] if on else None)


def _reduced_costs(pricing: Pricing, s: int, coupling: Coupling, duals: list[float]) -> list[float]:
    """The site's costs less the duals' share of its coupling terms (HiGHS's minimising sense)."""
    cost = list(pricing.cost)
    for k, rows in enumerate(coupling.terms):
        for p, c in rows.get(s, []):
            cost[p] -= duals[k] * c
    return cost


def _price(
    pricing: Pricing, s: int, coupling: Coupling, duals: list[float]
) -> tuple[float, list[float]] | None:
    """Solve the site's MILP at the duals: (a lower bound on its reduced cost, its best plan or [] when it
    found none); an infeasible site gives (inf, []); None when the MILP ends with no bound to trust.

    The MILP stops at PRICE_NODES nodes (a near-tie at some duals took one 200-site run 36 s and 370,000
    nodes); its dual bound is still a valid lower bound, and its incumbent still a plan of the site."""
    import highspy
    import numpy as np

    cost = _reduced_costs(pricing, s, coupling, duals)
    h = pricing.highs
    h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), np.array(cost, dtype=float))
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return math.inf, []
    info = h.getInfo()
    found = info.primal_solution_status == 2
    bound = float(info.mip_dual_bound)
    if status == highspy.HighsModelStatus.kOptimal:
        bound = min(float(info.objective_function_value), bound)
    elif status != highspy.HighsModelStatus.kSolutionLimit or not math.isfinite(bound):
        return None
    return bound, [float(v) for v in h.getSolution().col_value] if found else []


def _master(pricings: list[Pricing], coupling: Coupling, *, integer: bool) -> tuple[Any, list[list[int]]]:
    """The restricted master over the columns so far, solved; returns it and each site's λ columns.

    As an LP: convex weights λ of each site's plans. As a MILP: a binary per site and fabric mode, and
    the weights of a mode's plans sum to at most that binary, so each site picks one mode and any mix of
    that mode's plans: the mode choice is integer, the fill within a mode is left to the polish."""
    import highspy
    import numpy as np

    h = new_highs()
    index: list[list[int]] = []
    for pr in pricings:
        start = h.getNumCol()
        ids = list(range(start, start + len(pr.columns)))
        index.append(ids)
        h.addVars(len(ids), np.zeros(len(ids)), np.ones(len(ids)))
        h.changeColsCost(len(ids), np.array(ids, dtype=np.int32), np.array([c.cost for c in pr.columns]))
        h.addRow(1.0, 1.0, len(ids), np.array(ids, dtype=np.int32), np.ones(len(ids)))
    for k in range(len(coupling.names)):
        idx = [i for ids in index for i in ids]
        val = [c.usage[k] for pr in pricings for c in pr.columns]
        if coupling.lower[k] > -math.inf:  # an artificial shortfall, so that the master is never infeasible
            idx.append(h.getNumCol())
            val.append(1.0)
            h.addVar(0.0, highspy.kHighsInf)
            h.changeColCost(idx[-1], ARTIFICIAL)
        h.addRow(_finite(coupling.lower[k]), _finite(coupling.upper[k]), len(idx), idx, val)
    if integer:
        for pr, ids in zip(pricings, index, strict=True):
            _mode_binaries(h, pr, ids)
    h.run()
    return h, index


def _finite(x: float) -> float:
    import highspy

    return max(-highspy.kHighsInf, min(highspy.kHighsInf, x))


def _mode_binaries(h: Any, pr: Pricing, ids: list[int]) -> None:
    """u[m] binary per fabric mode, sum over a mode's plans of λ <= u[m], sum of u <= 1."""
    import highspy

    modes = sorted({c.mode for c in pr.columns if c.mode is not None})
    binaries = []
    for mode in modes:
        u = h.getNumCol()
        h.addVar(0.0, 1.0)
        h.changeColIntegrality(u, highspy.HighsVarType.kInteger)
        binaries.append(u)
        lam = [i for i, c in zip(ids, pr.columns, strict=True) if c.mode == mode]
        h.addRow(-highspy.kHighsInf, 0.0, len(lam) + 1, lam + [u], [1.0] * len(lam) + [-1.0])
    if binaries:
        h.addRow(-highspy.kHighsInf, 1.0, len(binaries), binaries, [1.0] * len(binaries))


def _duals(h: Any, n_sites: int, coupling: Coupling) -> list[float]:
    """The master's duals of the coupling rows."""
    return _clip(coupling, list(h.getSolution().row_dual)[n_sites : n_sites + len(coupling.names)])


def _clip(coupling: Coupling, row_dual: list[float]) -> list[float]:
    """Duals with the sign a Lagrangian bound needs (>= rows >= 0, <= rows <= 0)."""
    out = []
    for k, y in enumerate(row_dual):
        lo_only = coupling.upper[k] == math.inf
        hi_only = coupling.lower[k] == -math.inf
        out.append(max(0.0, y) if lo_only else min(0.0, y) if hi_only else float(y))
    return out


def _add(pr: Pricing, s: int, coupling: Coupling, values: list[float]) -> bool:
    """Add a site plan as a column unless the site has it already."""
    if any(all(abs(a - b) <= 1e-7 for a, b in zip(c.values, values, strict=True)) for c in pr.columns):
        return False
    pr.columns.append(_column(pr, s, coupling, values))
    return True


def _each_site(work: Callable[[Pricing, int], T], pricings: list[Pricing]) -> list[T]:
    """`work(pricing, s)` for every site, in site order, on up to PRICE_THREADS threads.

    Each site has its own HiGHS instance (one thread, fixed seed) and highspy releases the GIL while it
    solves, so sites price in parallel; each result depends on its site alone, and the caller takes them
    in site order, so the outcome is the same whatever the threads do."""
    if PRICE_THREADS <= 1 or len(pricings) < 2:
        return [work(pr, s) for s, pr in enumerate(pricings)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=PRICE_THREADS) as pool:
        return list(pool.map(work, pricings, range(len(pricings))))


def _generate(pricings: list[Pricing], coupling: Coupling, duals: list[float]) -> list[float]:
    """Rounds of pricing and master LP until no site prices out (or MAX_ROUNDS). Returns the duals whose
    Lagrangian bound was the best of the rounds (the master's last duals need not be: column generation
    converges slowly, and on phased models its early duals bound far worse than the LP's)."""
    import highspy

    best = (-math.inf, duals)
    for _round in range(MAX_ROUNDS):
        priced = _each_site(partial(_price, coupling=coupling, duals=duals), pricings)
        if all(found is not None for found in priced):
            bound = lagrangian_bound(coupling, duals, [found[0] for found in priced if found is not None])
            if bound > best[0]:
                best = (bound, duals)
        new = 0
        for s, (pr, found) in enumerate(zip(pricings, priced, strict=True)):
            if found is not None and found[1] and _add(pr, s, coupling, found[1]):
                new += 1
        if not new:
            break
        h, _index = _master(pricings, coupling, integer=False)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        duals = _duals(h, len(pricings), coupling)
    return best[1]


def _mode_columns(pricings: list[Pricing], coupling: Coupling, duals: list[float]) -> list[dict[Any, float]]:
    """Each site's best plan at the duals in each of its fabric modes (and with none): the "fill a cheap
    tier" plans that pricing alone (all or nothing at a price) never proposes. Returns per site {mode or
    None: a lower bound on the reduced cost of any plan in that mode at the duals}; a mode whose MILP gave
    no bound is left out."""
    return _each_site(partial(_site_modes, coupling=coupling, duals=duals), pricings)


def _margin_columns(
    pricings: list[Pricing],
    coupling: Coupling,
    duals: list[float],
    bounds: list[dict[Any, float]],
    gap: float,
) -> None:
    """In every mode that can hold a plan no dearer than the first start (its bound within `gap` of the
    site's best), the best plans at higher prices: the fills an integer plan needs at the margin (without
    them a 25-site portfolio's start came out 0.23% dearer and its proof 5x slower). A mode further off
    is fixed off anyway, so its columns could only make the master choose a plan dearer than that start:
    at 200 sites, about half the modes."""

    def work(pr: Pricing, s: int) -> None:
        best = min(bounds[s].values(), default=math.inf)
        near = [m for m, b in bounds[s].items() if m is not None and math.isfinite(b) and b - best <= gap]
        for mode in sorted(near):
            _only(pr, mode)
            for scale in MODE_PRICES[1:]:
                priced = _price(pr, s, coupling, [d * scale for d in duals])
                if priced is not None and priced[1]:
                    _add(pr, s, coupling, priced[1])
        _only(pr, ANY_MODE)

    _each_site(work, pricings)


ANY_MODE = object()
"""`_only`'s "every mode free"."""


def _only(pr: Pricing, mode: Any) -> None:
    """Hold the site's pricing MILP to one fabric mode (None: no fabric; ANY_MODE: free again)."""
    for m, v in pr.block.modes.items():
        i = pr.block.position[v.name]
        if mode is ANY_MODE:
            pr.highs.changeColBounds(i, 0.0, float(v.upBound if v.upBound is not None else math.inf))
        else:
            on = 1.0 if m == mode else 0.0
            pr.highs.changeColBounds(i, on, on)


def _site_modes(pr: Pricing, s: int, coupling: Coupling, duals: list[float]) -> dict[Any, float]:
    site: dict[Any, float] = {}
    for mode in [None, *sorted(pr.block.modes)]:
        _only(pr, mode)
        priced = _price(pr, s, coupling, duals)
        if priced is None:
            continue
        site[mode] = priced[0]
        if priced[1]:
            _add(pr, s, coupling, priced[1])
    _only(pr, ANY_MODE)
    return site


def _pricings(model: Model, blocks: list[SiteBlock], full: Any, coupling: Coupling) -> list[Pricing]:
    costs = list(full.getLp().col_cost_)
    pricings = []
    for s, block in enumerate(blocks):
        cost = [float(costs[v.index]) for v in block.columns]
        pr = Pricing(block, block_highs(block, integer=True), cost)
        pr.highs.setOptionValue("mip_rel_gap", 1e-6)
        pr.highs.setOptionValue("mip_max_nodes", PRICE_NODES)
        pr.columns.append(_column(pr, s, coupling, [0.0] * len(block.columns)))  # the empty site
        pricings.append(pr)
    return pricings


def _polish(model: Model, full: Any, pricings: list[Pricing], chosen: list[Choice]) -> list[float] | None:
    """The whole model with each site's fabric mode fixed to the chosen one, as a MILP (node-limited).

    In a single-period model, a site the master gave one plan whole also has its integer counts fixed to
    that plan's, so only the sites it mixed plans at are searched: at 200 sites that MILP takes 0.04 s,
    against 8 s with every site's counts free (HiGHS's root work on the whole model), for a start a few
    $M dearer of $200B. If it finds no plan, the counts are freed again and only the modes stay fixed.
    A phased model keeps every count free: there the fixed plans (each site's purchases over the window)
    left a 10-site x 8-quarter start 0.12% dearer, and its proof no longer came in 120 s (79 s before)."""
    import highspy

    integer = [v.index for v in model.prob.variables() if v.cat == pulp.LpInteger]
    for i in integer:
        full.changeColIntegrality(i, highspy.HighsVarType.kInteger)
    for pr, (mode, _plan) in zip(pricings, chosen, strict=True):
        for m, var in pr.block.modes.items():
            on = 1.0 if m == mode else 0.0
            full.changeColBounds(var.index, on, on)
    full.setOptionValue("mip_max_nodes", POLISH_NODES)
    full.setOptionValue("mip_rel_gap", 0.0)
    lp = full.getLp()
    lower, upper = list(lp.col_lower_), list(lp.col_upper_)
    kinds = set(integer)
    fixed = []
    for pr, (_mode, plan) in zip(pricings, chosen, strict=True):
        if plan is None or model.periods:
            continue
        for var, x in zip(pr.block.columns, plan.values, strict=True):
            if var.index in kinds:
                full.changeColBounds(var.index, x, x)
                fixed.append(var.index)
    values = _run_polish(full)
    for i in fixed:  # HiGHS drops its solution when the model changes: read first, then free the counts
        full.changeColBounds(i, lower[i], upper[i])
    if values is None and fixed:
        values = _run_polish(full)
    return values


def _run_polish(full: Any) -> list[float] | None:
    full.run()
    if full.getInfo().primal_solution_status != 2:
        return None
    return [float(x) for x in full.getSolution().col_value]


@dataclass
class Start:
    """A MIP start and the fabric modes no plan at least as good as it can use (fixed off for its solve)."""

    values: dict[str, float]
    objective: float  # the start's objective, minimised in HiGHS's terms
    bound: float  # a proven lower bound on the optimum (Lagrangian, from the pricing MILPs)
    fix_off: list[Any] = field(default_factory=list)  # y variables
    rows: list[tuple[list[tuple[str, float]], float]] = field(default_factory=list)  # `solve`'s bounds


def lagrangian_bound(coupling: Coupling, duals: list[float], site_min: list[float]) -> float:
    """pi' b + sum over sites of min reduced cost: no plan of the model costs less."""
    total = sum(site_min)
    for k, d in enumerate(duals):
        if d > 0:
            total += d * coupling.lower[k]
        elif d < 0:
            total += d * coupling.upper[k]
    return total


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


def _gap(objective: float, bound: float) -> float:
    """G = UB - LB, with a margin for rounding (inf without a bound)."""
    return objective - bound + 1e-7 * max(1.0, abs(objective)) + 1e-6


def _integer_plan(
    model: Model, full: Any, pricings: list[Pricing], coupling: Coupling, costs: list[float], seen: list[Any]
) -> tuple[list[float], float] | None:
    """The restricted master as a MILP, polished: a plan of the whole model and its objective, or None
    (also when the master chose what it chose in an earlier call, listed in `seen`: the polish would
    give the same plan again)."""
    master, index = _master(pricings, coupling, integer=True)
    if master.getInfo().primal_solution_status != 2:
        return None
    chosen = _choose(pricings, index, list(master.getSolution().col_value))
    key = [(mode, None if plan is None else plan.values) for mode, plan in chosen]
    if key in seen:
        return None
    seen.append(key)
    values = _polish(model, full, pricings, chosen)
    if values is None:
        return None
    return values, sum(c * x for c, x in zip(costs, values, strict=True))


def mip_start(model: Model) -> Start | None:
    """A feasible plan of the model's current objective and the modes it rules out, or None."""
    import highspy

    if model.elastic or not model.sites:
        return None
    prob = model.prob
    full = full_highs(prob, mip=False)
    full.run()
    if full.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    blocks = site_blocks(model)
    coupling = coupling_rows(model, blocks)
    dual = list(full.getSolution().row_dual)
    index_of = {c.name: c.index for c in prob.constraints()}
    duals = _clip(coupling, [float(dual[index_of[name]]) for name in coupling.names])
    pricings = _pricings(model, blocks, full, coupling)
    duals = _generate(pricings, coupling, duals)
    bounds = _mode_columns(pricings, coupling, duals)
    costs = list(full.getLp().col_cost_)
    complete = all(len(site) == len(pr.block.modes) + 1 for pr, site in zip(pricings, bounds, strict=True))
    bound = -math.inf
    if complete:
        bound = lagrangian_bound(coupling, duals, [min(site.values()) for site in bounds])
    seen: list[Any] = []
    first = _integer_plan(model, full, pricings, coupling, costs, seen)
    _margin_columns(pricings, coupling, duals, bounds, math.inf if first is None else _gap(first[1], bound))
    plans = [p for p in (first, _integer_plan(model, full, pricings, coupling, costs, seen)) if p is not None]
    if not plans:
        return None
    values, objective = min(plans, key=lambda p: p[1])
    start = Start({v.name: values[v.index] for v in prob.variables()}, objective, bound)
    if complete:
        gap = _gap(objective, bound)
        start.fix_off = fix_off(pricings, bounds, gap)
        start.rows = reduced_cost_rows(pricings, coupling, duals, bounds, gap)
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
        cost = _reduced_costs(pr, s, coupling, duals)
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
