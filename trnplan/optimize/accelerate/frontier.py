"""An exact proof for large portfolios whose sites couple through the demand alone: each site's frontier
walked by small MILPs, then a dynamic program over the sites (issue 17).

A single-period min-TCO model whose only coupling row is one demand (say FP8 PFLOPs >= D) is

    min sum_s f_s(F_s)  subject to  sum_s F_s >= D

with f_s(F) site s's least cost for at least F of the demand. Every plan no dearer than the MIP start
keeps each site within its reduced-cost row (`start.reduced_cost_rows`: rc_s <= least_s + G), so f_s
is only needed over the plans within that row, and there it is a step function with few steps:

1. The walk: per site, f_s's breakpoints, each by one MILP on the site's block with its reduced-cost
   row, the start's fixed-off modes and a threshold row: min cost subject to F >= t, proven at gap 0;
   the next t is the plan's F plus one quantum (the demand coefficients' common divisor: F is counted
   in whole quanta, so no breakpoint is stepped over). Sites are walked on PRICE_THREADS threads, each
   on its own HiGHS instance; each walk depends on its site alone, so the breakpoints are the same
   whatever the threads do. HiGHS's "infeasible" is asked twice
   (`confirm_infeasible`), a solve error is asked again with presolve off, and anything else unproven
   ends the walk: no proof, HiGHS's own search follows as before.
2. The program: Pareto states (F, cost) site by site (fewest breakpoints first), each dropped when its
   cost plus the Lagrangian bound of the sites left exceeds the start's objective; the cheapest state
   that meets D is the optimum, and the breakpoints it is made of are the plan.

Windows: a first walk within W = min(G, FIRST_WINDOW x the start's objective); its optimum z is proven
when every plan no dearer than z keeps each site within that window (z - LB <= W, with the start's
rounding margin); else a second walk within z - LB (G if the first found no plan), which then holds by
construction (z is a plan, so no dearer than the start). The walk's cost grows about in proportion to
its window, so after a first walk of more than 6 MILPs a site, a second one predicted past the budget
(the first's MILPs beyond two a site, x the windows' ratio) is not begun; a start whose G exceeds
WIDE_START first windows is not walked at all (the first walk could prove only a start far above the
optimum): HiGHS's search decides. Why W, WIDE_START and the thresholds are what they are: bench/README.md,
"Why the optimizer's thresholds are what they are".

Exact: every plan of a site within its row is dominated by a breakpoint (no less F, no more cost), so
the program's optimum is no dearer than any plan within the rows, i.e. than the optimum; and it is a
plan (each site's breakpoint is a plan of its block, all rows but the demand are a site's own, and the
demand is met in whole quanta). The assembled plan is checked against every row of the model before it
is used. Each walk MILP is proven to HiGHS's absolute gap of 1e-9 (the objective is in M USD), so the
optimum is exact to a dollar over 200 sites, as HiGHS's own proof is to the dollar on the whole model.

Only from FRONTIER_MIN_SITES sites (below, HiGHS's search is faster than the walk). The walk stops
past WALK_MILPS_PER_SITE MILPs a site on average (deterministically: the sum of each site's own walk,
whatever the threads do), then HiGHS's search.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from trnplan.optimize import progress
from trnplan.optimize.accelerate.blocks import block_highs
from trnplan.optimize.accelerate.columns import PRICE_THREADS
from trnplan.optimize.accelerate.start import Prices, Start, gap_of, reduced_cost_rows
from trnplan.optimize.highs import PROGRESS_STEP_S, confirm_infeasible, set_time_left
from trnplan.optimize.model import Model

FRONTIER_MIN_SITES = 150
WALK_MILPS_PER_SITE = 60
FIRST_WINDOW = 5e-6  # of the start's objective: the first walk's window (see the module's docstring)
WIDE_START = 10.0  # no walk when G exceeds this many first windows (see the module's docstring)
WALK_GAP = 1e-9  # each walk MILP's absolute gap, in the objective's units (M USD)


def quantum(coefficients: list[float]) -> float | None:
    """The largest q that every coefficient is a whole multiple of (to 1e-9 relative), at most six
    decimal digits deep; None if there is none (then no walk: F could not be counted exactly)."""
    for digits in range(7):
        scale = 10**digits
        whole = [round(c * scale) for c in coefficients]
        pairs = zip(coefficients, whole, strict=True)
        if all(abs(c * scale - w) <= 1e-9 * max(1.0, abs(c * scale)) for c, w in pairs):
            g = 0
            for w in whole:
                g = math.gcd(g, abs(w))
            return float(Fraction(g, scale)) if g else None
    return None


@dataclass
class Budget:
    """MILPs left to the walk (shared by the threads) and its deadline."""

    left: int
    until: float = math.inf
    spent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> bool:
        with self.lock:
            self.left -= 1
            self.spent += 1
            return self.left >= 0 and time.perf_counter() < self.until

    def stop(self) -> None:
        with self.lock:
            self.until = -math.inf


@dataclass
class Walk:
    """One site's breakpoints: (F in quanta, cost, the block's values)."""

    highs: Any
    terms: list[tuple[int, int]]  # (block position, demand coefficient in quanta)
    cost: Any  # numpy array: the site's costs
    threshold: int  # the threshold row's index
    least: float
    points: list[tuple[int, float, list[float]]] = field(default_factory=list)


def _walks(prices: Prices, start: Start, q: float, window: float) -> list[Walk]:
    """Each site's walk MILP: its block, the start's fixed-off modes, its reduced-cost row at `window`
    (`reduced_cost_rows`, the rows the solve from the start gets at G) and the threshold row."""
    import highspy
    import numpy as np

    owner = {v.name: s for s, pr in enumerate(prices.pricings) for v in pr.block.columns}
    rows: dict[int, list[tuple[list[tuple[str, float]], float]]] = {}
    made = reduced_cost_rows(prices.pricings, prices.coupling, prices.duals, prices.bounds, window)
    for terms, upper in made:
        rows.setdefault(owner[terms[0][0]], []).append((terms, upper))
    off = {v.name for v in start.fix_off}
    walks = []
    for s, pr in enumerate(prices.pricings):
        block = pr.block
        h = block_highs(block, integer=True, lean=True)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", WALK_GAP)
        for v in block.columns:
            if v.name in off:
                h.changeColBounds(block.position[v.name], 0.0, 0.0)
        for terms, upper in rows.get(s, []):
            idx = np.array([block.position[name] for name, _ in terms], dtype=np.int32)
            h.addRow(-highspy.kHighsInf, upper, len(terms), idx, np.array([c for _, c in terms], dtype=float))
        demand = [(p, round(c / q)) for p, c in prices.coupling.terms[0].get(s, [])]
        idx = np.array([p for p, _ in demand], dtype=np.int32)
        coefs = np.array([float(c) for _, c in demand])
        h.addRow(-highspy.kHighsInf, highspy.kHighsInf, len(demand), idx, coefs)
        cost = np.array(pr.cost, dtype=float)
        h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), cost)
        walks.append(Walk(h, demand, cost, h.getNumRow() - 1, min(prices.bounds[s].values())))
    return walks


def _walk_all(walks: list[Walk], budget: Budget) -> bool:
    """Every site's walk on PRICE_THREADS threads (each its own HiGHS instance); False as soon as one
    fails (the rest stop at their next MILP). Ctrl-C stops them all the same way, then is re-raised; in
    a session that keeps the best plan it is noted instead (`progress.interrupted()`): no proof."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=PRICE_THREADS)
    try:
        futures = [pool.submit(_run, w, budget) for w in walks]
        pending = set(futures)
        while pending:  # short waits, where Ctrl-C lands at once
            done, pending = concurrent.futures.wait(pending, timeout=PROGRESS_STEP_S)
            if any(f.exception() is not None or not f.result() for f in done):
                budget.stop()  # one walk failed: no proof, so the others stop too
        return all(f.result() for f in futures)
    except KeyboardInterrupt:
        budget.stop()  # the walks end at their next MILP; `finally` waits for them
        session = progress.current()
        if session is None or not session.keep_best_on_interrupt:
            raise
        session.interrupted = True
        return False
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run(walk: Walk, budget: Budget) -> bool:
    """Walk the site to its last breakpoint; False when the budget runs out or a MILP ends unproven."""
    import highspy
    import numpy as np

    h, status = walk.highs, highspy.HighsModelStatus
    t = -highspy.kHighsInf
    while True:
        if not budget.take():
            return False
        h.changeRowBounds(walk.threshold, t, highspy.kHighsInf)
        if budget.until < math.inf:  # HiGHS's clock starts again at each run: give it what is left
            set_time_left(h, budget.until - time.perf_counter())
        h.run()
        if h.getModelStatus() not in (status.kOptimal, status.kInfeasible):  # e.g. a solve error in presolve
            h.setOptionValue("presolve", "off")
            h.run()
            h.setOptionValue("presolve", "choose")
        confirm_infeasible(h)
        if h.getModelStatus() == status.kInfeasible:
            return True  # nothing within the row has F >= t
        if h.getModelStatus() != status.kOptimal:
            return False
        x = [float(v) for v in h.getSolution().col_value]
        f = int(round(sum(c * x[p] for p, c in walk.terms)))
        walk.points.append((f, float(walk.cost @ np.array(x)), x))
        t = f + 0.5


def program(walks: list[Walk], need: float, dual: float, upper: float) -> tuple[float, list[int]] | None:
    """The Pareto program: (the optimum, each site's breakpoint index), or None if no state meets `need`
    (the demand in quanta). `dual` is the demand's dual per quantum; a state is dropped when its cost
    plus the sites left's least reduced costs plus dual x what it still misses exceeds `upper`.

    Deterministic: candidates are enumerated state by breakpoint, sorted stably by (-F, cost), and the
    first of equal ones is kept; the optimum is the first cheapest state that meets the demand."""
    import numpy as np

    order = sorted(range(len(walks)), key=lambda i: (len(walks[i].points), i))
    least = [walks[i].least for i in order]
    rest = np.concatenate([np.cumsum(least[::-1])[::-1], [0.0]])
    limit = upper + 1e-7 * max(1.0, abs(upper))
    f, c = np.zeros(1), np.zeros(1)
    layers: list[tuple[Any, Any]] = []
    for k, i in enumerate(order):
        pts = walks[i].points
        pf = np.array([p[0] for p in pts], dtype=float)
        pc = np.array([p[1] for p in pts], dtype=float)
        f2, c2 = (f[:, None] + pf[None, :]).ravel(), (c[:, None] + pc[None, :]).ravel()
        parent = np.repeat(np.arange(f.size), pf.size)
        point = np.tile(np.arange(pf.size), f.size)
        keep = c2 + rest[k + 1] + dual * np.maximum(0.0, need - f2) <= limit
        f2, c2, parent, point = f2[keep], c2[keep], parent[keep], point[keep]
        o = np.lexsort((c2, -f2))
        f2, c2, parent, point = f2[o], c2[o], parent[o], point[o]
        cheaper = c2 < np.concatenate([[np.inf], np.minimum.accumulate(c2)[:-1]]) - 1e-12
        f, c = f2[cheaper], c2[cheaper]
        layers.append((parent[cheaper], point[cheaper]))
        if f.size == 0:
            return None
    met = np.nonzero(f >= need - 1e-6)[0]
    if met.size == 0:
        return None
    j = int(met[np.argmin(c[met])])
    value = float(c[j])
    chosen = [0] * len(walks)
    for k in range(len(order) - 1, -1, -1):
        parent, point = layers[k]
        chosen[order[k]] = int(point[j])
        j = int(parent[j])
    return value, chosen


def applicable(model: Model, start: Start | None) -> float | None:
    """The demand's quantum when the proof applies to this model and start (see the module), else None."""
    prices = start.prices if start is not None else None
    if (
        prices is None
        or model.multi
        or model.elastic
        or model.scenario.objective != "min_tco"
        or len(model.sites) < FRONTIER_MIN_SITES
        or len(prices.coupling.names) != 1
        or prices.coupling.upper[0] != math.inf
        or not all(math.isfinite(min(b.values())) for b in prices.bounds)
    ):
        return None
    blocks = [pr.block for pr in prices.pricings]
    if sum(len(b.columns) for b in blocks) != len(model.prob.variables()):
        return None  # a variable outside every site
    if sum(len(b.rows) for b in blocks) + 1 != len(model.prob.constraints()):
        return None  # a row that is neither a site's own nor the demand
    return quantum([c for rows in prices.coupling.terms[0].values() for _, c in rows])


@dataclass
class Proof:
    """The optimum the program proves and its plan (every variable's value, by name)."""

    objective: float
    values: dict[str, float]
    milps: int
    windows: list[float]


def first_window(start: Start) -> float:
    """The first walk's window: min(G, FIRST_WINDOW x the start's objective)."""
    gap = start.prices.gap if start.prices is not None else math.inf
    return min(gap, FIRST_WINDOW * abs(start.objective))


def too_wide(start: Start) -> bool:
    """G past WIDE_START first windows: the walk is not begun (see the module's docstring)."""
    return start.prices is not None and start.prices.gap > WIDE_START * first_window(start)


def prove(model: Model, start: Start | None, time_limit: float | None = None) -> Proof | None:
    """The proof of the module's docstring, or None (not applicable, out of budget or time, an unproven
    MILP, or a plan that does not check; no walk at all from a start `too_wide`): then HiGHS's search
    decides, as without it."""
    q = applicable(model, start)
    if q is None or start is None or start.prices is None or too_wide(start):
        return None
    prices = start.prices
    until = time.perf_counter() + time_limit if time_limit is not None else math.inf
    budget = Budget(WALK_MILPS_PER_SITE * len(model.sites), until)
    need = prices.coupling.lower[0] / q
    window = first_window(start)
    windows: list[float] = []
    while True:
        floor = 2 * len(prices.pricings)  # a walk's least: one breakpoint and the end, per site
        grown = floor + max(0, budget.spent - floor) * window / windows[-1] if windows else 0
        if budget.spent > 3 * floor and grown > budget.left:
            return None  # a first walk of more than 6 MILPs a site: the second would outgrow the budget
        windows.append(window)
        walks = _walks(prices, start, q, window)
        if not _walk_all(walks, budget):
            return None
        found = program(walks, need, prices.duals[0] * q, start.objective)
        # within G every plan no dearer than the start is covered: the optimum, whatever rounding says
        if found is not None and (window >= prices.gap or gap_of(found[0], start.bound) <= window):
            values = {
                v.name: w.points[k][2][i]
                for pr, w, k in zip(prices.pricings, walks, found[1], strict=True)
                for i, v in enumerate(pr.block.columns)
            }
            if not _meets_every_row(model, values):
                return None
            return Proof(found[0], values, budget.spent, windows)
        if window >= prices.gap:
            return None
        window = prices.gap if found is None else min(prices.gap, gap_of(found[0], start.bound))


def _meets_every_row(model: Model, values: dict[str, float]) -> bool:
    """The assembled plan against every row and bound of the model (to 1e-6, relative to the row's size)."""
    for v in model.prob.variables():
        x = values[v.name]
        below = v.lowBound is not None and x < v.lowBound - 1e-6
        if below or (v.upBound is not None and x > v.upBound + 1e-6):
            return False
    for row in model.prob.constraints():
        terms = [(coef, values[var.name]) for var, coef in row.items()]
        lhs = sum(c * x for c, x in terms) + float(row.constant)
        scale = 1e-6 * max(1.0, abs(float(row.constant)), *(abs(c * x) for c, x in terms))
        if (row.sense >= 0 and lhs < -scale) or (row.sense <= 0 and lhs > scale):
            return False
    return True
