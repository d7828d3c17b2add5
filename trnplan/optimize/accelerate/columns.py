"""Column generation over the site blocks, for `start`: each site's pricing MILP at
the coupling rows' duals, its plans as the columns of a restricted master (an LP for new duals, a MILP
for a plan that meets the coupling rows), and the Lagrangian bound the pricing MILPs prove.

Every solve runs on one thread with a fixed seed and node (not time) limits; sites are priced on
PRICE_THREADS threads, each on its own HiGHS instance, and results are taken in site order, so the
columns, duals and bounds are the same on every run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from trnplan.optimize.accelerate.blocks import SiteBlock, block_highs
from trnplan.optimize.highs import confirm_infeasible, keep_within, new_highs
from trnplan.optimize.model import Model
from trnplan.optimize.progress import OutOfTime, check_time, current_deadline

MAX_ROUNDS = 4
PRICE_NODES = 2000
PRICE_THREADS = min(2, os.cpu_count() or 1)  # pricing threads (each HiGHS instance itself runs on one)
T = TypeVar("T")
MODE_PRICES = (1.0, 2.0)
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


def reduced_costs(pricing: Pricing, s: int, coupling: Coupling, duals: list[float]) -> list[float]:
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

    The MILP stops at PRICE_NODES nodes (near-ties at some duals can take a long search); its dual bound
    is still a valid lower bound, and its incumbent still a plan of the site."""
    import highspy
    import numpy as np

    cost = reduced_costs(pricing, s, coupling, duals)
    h = pricing.highs
    h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), np.array(cost, dtype=float))
    h.run()
    confirm_infeasible(h)  # an "infeasible" fixes the mode off: asked twice
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


def master(pricings: list[Pricing], coupling: Coupling, *, integer: bool) -> tuple[Any, list[list[int]]]:
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
    return clip_duals(coupling, list(h.getSolution().row_dual)[n_sites : n_sites + len(coupling.names)])


def clip_duals(coupling: Coupling, row_dual: list[float]) -> list[float]:
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
    deadline = current_deadline()  # read here: the pool's threads do not see the caller's context

    def timed(pr: Pricing, s: int) -> T:
        if deadline is not None and deadline.expired:
            raise OutOfTime("the start heuristic (pricing each site)")
        keep_within(pr.highs, deadline)
        return work(pr, s)

    if PRICE_THREADS <= 1 or len(pricings) < 2:
        return [timed(pr, s) for s, pr in enumerate(pricings)]
    with ThreadPoolExecutor(max_workers=PRICE_THREADS) as pool:
        return list(pool.map(timed, pricings, range(len(pricings))))


def generate(pricings: list[Pricing], coupling: Coupling, duals: list[float]) -> list[float]:
    """Rounds of pricing and master LP until no site prices out (or MAX_ROUNDS). Returns the duals whose
    Lagrangian bound was the best of the rounds (the master's last duals need not be: column generation
    converges slowly, and on phased models its early duals bound far worse than the LP's)."""
    import highspy

    best = (-math.inf, duals)
    for _round in range(MAX_ROUNDS):
        check_time("the start heuristic (column generation)")
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
        h, _index = master(pricings, coupling, integer=False)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        duals = _duals(h, len(pricings), coupling)
    return best[1]


def mode_columns(pricings: list[Pricing], coupling: Coupling, duals: list[float]) -> list[dict[Any, float]]:
    """Each site's best plan at the duals in each of its fabric modes (and with none): the "fill a cheap
    tier" plans that pricing alone (all or nothing at a price) never proposes. Returns per site {mode or
    None: a lower bound on the reduced cost of any plan in that mode at the duals}; a mode whose MILP gave
    no bound is left out."""
    return _each_site(partial(_site_modes, coupling=coupling, duals=duals), pricings)


def margin_columns(
    pricings: list[Pricing],
    coupling: Coupling,
    duals: list[float],
    bounds: list[dict[Any, float]],
    gap: float,
) -> None:
    """In every mode that can hold a plan no dearer than the first start (its bound within `gap` of the
    site's best), the best plans at higher prices: the fills an integer plan needs at the margin (without
    them starts come out dearer and proofs slower; bench/README.md). A mode further off is fixed off
    anyway, so its columns could only make the master choose a plan dearer than that start."""

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


def new_pricings(
    blocks: list[SiteBlock], costs: list[list[float]], coupling: Coupling, *, lean: bool = False
) -> list[Pricing]:
    """Each site's pricing MILP, from its columns' costs in the whole model; `lean`: with
    `blocks.SMALL_MIP_OPTIONS`."""
    pricings = []
    for s, (block, cost) in enumerate(zip(blocks, costs, strict=True)):
        pr = Pricing(block, block_highs(block, integer=True, lean=lean), cost)
        pr.highs.setOptionValue("mip_rel_gap", 1e-6)
        pr.highs.setOptionValue("mip_max_nodes", PRICE_NODES)
        pr.columns.append(_column(pr, s, coupling, [0.0] * len(block.columns)))  # the empty site
        pricings.append(pr)
    return pricings


def lagrangian_bound(coupling: Coupling, duals: list[float], site_min: list[float]) -> float:
    """pi' b + sum over sites of min reduced cost: no plan of the model costs less."""
    total = sum(site_min)
    for k, d in enumerate(duals):
        if d > 0:
            total += d * coupling.lower[k]
        elif d < 0:
            total += d * coupling.upper[k]
    return total
