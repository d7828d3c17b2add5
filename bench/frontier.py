"""Issue 17: what an exact dynamic program over the sites costs, against the MILP's own proof.

    python bench/frontier.py --sizes 200 --seeds 0,1 --compare      # ~10 min
    python bench/frontier.py --sizes 50 --seeds 0 --max-milps 5000   # a quick look

A single-period portfolio whose only coupling row is its demand (the generator's: FP8 PFLOPs, min TCO)
is, once the MIP start has its Lagrangian bound LB and gap G (`trnplan.optimize.start`),

    min sum_s f_s(F_s)  subject to  sum_s F_s >= D

where f_s(F) is site s's least cost for at least F of the demand among its plans within its reduced-cost
row (every plan no dearer than the start keeps those rows: `reduced_cost_rows`). So:

1. The walk: per site, f_s's breakpoints, each by one MILP on the site's block (`optimize.blocks`) with
   its reduced-cost row and fixed-off modes: min cost subject to F >= t, proven at gap 0; then
   t = F* + 1. F counts whole quanta (the demand coefficients' common divisor), so no breakpoint is
   stepped over; HiGHS's "infeasible" and solve errors are asked again with presolve off
   (`confirm_infeasible`: the walk meets HiGHS 1.16.0's presolve fault too).
2. The program: Pareto states (F, cost) site by site, each pruned when its cost plus the Lagrangian bound
   of the sites left (their least reduced cost + the demand's dual x what is still missing) exceeds the
   start's objective. The least cost among states meeting D is the optimum, proven.

Reports per instance: G, MILPs and breakpoints, the walk's and the program's seconds (after the start),
the program's optimum, and with `--compare` trnplan's own solve of the same portfolio in a fresh process
(bench/scale.py's worker: seconds, status, TCO) and the difference of the two optima. A measurement,
never asserted in tests; nothing here is used by `trnplan optimize`.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def quantum(coefficients: list[float]) -> float | None:
    """The largest q with every coefficient a whole multiple of it (to 1e-9), or None."""
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


class Walk:
    """One site's f_s, breakpoint by breakpoint."""

    def __init__(
        self, pricing: Any, s: int, state: dict[str, Any], fixed_off: set[str], q: float, window: float
    ) -> None:
        import highspy
        import numpy as np

        from trnplan.optimize.blocks import block_highs
        from trnplan.optimize.columns import reduced_costs

        coupling, duals = state["coupling"], state["duals"]
        self.least = min(state["bounds"][s].values())
        rc = reduced_costs(pricing, s, coupling, duals)
        h = block_highs(pricing.block, integer=True)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-9)
        for v in pricing.block.columns:
            if v.name in fixed_off:
                h.changeColBounds(pricing.block.position[v.name], 0.0, 0.0)
        nz = [i for i, x in enumerate(rc) if x]
        h.addRow(-highspy.kHighsInf, self.least + window, len(nz), np.array(nz, dtype=np.int32),
                 np.array([rc[i] for i in nz]))
        self.terms = [(p, round(c / q)) for p, c in coupling.terms[0].get(s, [])]
        h.addRow(-highspy.kHighsInf, highspy.kHighsInf, len(self.terms),
                 np.array([p for p, _ in self.terms], dtype=np.int32),
                 np.array([float(c) for _, c in self.terms]))
        self.row = h.getNumRow() - 1
        self.cost = np.array(pricing.cost)
        h.changeColsCost(len(self.cost), np.arange(len(self.cost), dtype=np.int32), self.cost)
        self.h = h
        self.points: list[tuple[int, float]] = []
        self.milps = 0

    def run(self, budget: list[int]) -> bool:
        """Walk to the end; False if a MILP ends unproven or the shared budget runs out."""
        import highspy
        import numpy as np

        from trnplan.optimize.solve import confirm_infeasible

        h, ok = self.h, highspy.HighsModelStatus
        t = -highspy.kHighsInf
        while True:
            if budget[0] <= 0:
                return False
            h.changeRowBounds(self.row, t, highspy.kHighsInf)
            h.run()
            self.milps += 1
            budget[0] -= 1
            if h.getModelStatus() not in (ok.kOptimal, ok.kInfeasible):  # e.g. kSolveError in presolve
                h.setOptionValue("presolve", "off")
                h.run()
                h.setOptionValue("presolve", "choose")
            confirm_infeasible(h)
            status = h.getModelStatus()
            if status == ok.kInfeasible:
                return True
            if status != ok.kOptimal:
                return False
            x = np.array(h.getSolution().col_value)
            f = int(round(sum(c * x[p] for p, c in self.terms)))
            self.points.append((f, float(self.cost @ x)))
            t = f + 0.5


def program(
    walks: list[Walk], demand: float, dual: float, q: float, upper: float
) -> tuple[float | None, int]:
    """The Pareto program over sites (fewest breakpoints first): (optimum or None, peak states)."""
    import numpy as np

    order = sorted(range(len(walks)), key=lambda i: len(walks[i].points))
    least = [walks[i].least for i in order]
    rest = np.concatenate([np.cumsum(least[::-1])[::-1], [0.0]])
    need = demand / q
    limit = upper + 1e-7 * abs(upper)
    f, c = np.zeros(1), np.zeros(1)
    peak = 1
    for k, i in enumerate(order):
        pts = np.array(walks[i].points, dtype=float).reshape(-1, 2)
        f2 = (f[:, None] + pts[None, :, 0]).ravel()
        c2 = (c[:, None] + pts[None, :, 1]).ravel()
        keep = c2 + rest[k + 1] + dual * q * np.maximum(0.0, need - f2) <= limit
        f2, c2 = f2[keep], c2[keep]
        o = np.lexsort((c2, -f2))
        f2, c2 = f2[o], c2[o]
        cheaper = c2 < np.concatenate([[np.inf], np.minimum.accumulate(c2)[:-1]]) - 1e-9
        f, c = f2[cheaper], c2[cheaper]
        peak = max(peak, f.size)
    met = c[f >= need - 1e-6]
    return (float(met.min()) if met.size else None), peak


def measure(sites: int, seed: int, max_milps: int, first_window: float) -> dict[str, Any]:
    from trnplan.load import load_specs
    from trnplan.optimize import build_model, start
    from trnplan.optimize.columns import PRICE_THREADS
    from trnplan.optimize.model import MONEY_SCALE, set_objective
    from trnplan.testkit.portfolio import write_portfolio

    with tempfile.TemporaryDirectory() as tmp:
        scenario_id = write_portfolio(sites, Path(tmp), seed)
        catalog = load_specs([tmp])
    model = build_model(catalog, scenario_id)
    set_objective(model, model.scenario.objective)
    state: dict[str, Any] = {}
    rows = start.reduced_cost_rows

    def keep(pricings: Any, coupling: Any, duals: Any, bounds: Any, gap: float) -> Any:
        # the one call that hands over all the start's pricing state (pricings, duals, bounds, G)
        state.update(pricings=pricings, coupling=coupling, duals=duals, bounds=bounds, gap=gap)
        return rows(pricings, coupling, duals, bounds, gap)

    start.reduced_cost_rows = keep  # type: ignore[assignment]
    began = time.perf_counter()
    plan = start.mip_start(model)
    start_s = time.perf_counter() - began
    out: dict[str, Any] = {"sites": sites, "seed": seed, "start_s": start_s}
    one_demand = bool(state) and len(state["coupling"].names) == 1 and state["coupling"].upper[0] == math.inf
    if plan is None or not one_demand:
        return {**out, "status": "not one demand row"}
    coupling = state["coupling"]
    q = quantum([c for rows_ in coupling.terms[0].values() for _, c in rows_])
    if q is None:
        return {**out, "status": "no common quantum"}
    fixed_off = {v.name for v in plan.fix_off}
    out.update(gap=state["gap"], quantum=q, upper_usd=plan.objective / MONEY_SCALE,
               bound_usd=plan.bound / MONEY_SCALE, milps=0, walk_s=0.0, dp_s=0.0, stages=0)
    window = state["gap"] * first_window
    while True:
        # Walk within `window`; the program's optimum z over those breakpoints is proven when every plan
        # cheaper than z keeps each site within it (z - LB, with the start's rounding margin, <= window);
        # else walk again within z - LB, which then holds by construction.
        out["stages"] += 1
        walks = [Walk(pr, s, state, fixed_off, q, window) for s, pr in enumerate(state["pricings"])]
        budget = [max_milps - out["milps"]]
        began = time.perf_counter()
        with ThreadPoolExecutor(PRICE_THREADS) as pool:
            done = list(pool.map(Walk.run, walks, [budget] * len(walks)))
        counts = [len(w.points) for w in walks]
        out["milps"] += sum(w.milps for w in walks)
        out["walk_s"] += time.perf_counter() - began
        out.update(points=sum(counts), median_points=statistics.median(counts), max_points=max(counts))
        if not all(done):
            return {**out, "status": "walk stopped (budget or an unproven MILP)"}
        began = time.perf_counter()
        optimum, peak = program(walks, coupling.lower[0], state["duals"][0], q, plan.objective)
        out.update(dp_s=out["dp_s"] + time.perf_counter() - began, peak_states=peak)
        need = start._gap(optimum, plan.bound) if optimum is not None else state["gap"]
        if optimum is not None and need <= window:
            return {**out, "status": "optimal", "optimum_usd": optimum / MONEY_SCALE}
        if window >= state["gap"]:
            return {**out, "status": "no state meets the demand"}
        window = min(state["gap"], need)


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| sites | seed | G (M USD) | stages | MILPs | breakpoints (median / max) | start s | walk s | DP s "
        "| DP optimum (USD) | optimum - LB (M USD) | trnplan s | trnplan status | DP - trnplan (USD) |\n"
        "|---:|---:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|---|--:|\n"
    )
    lines = []
    for r in rows:
        t = r.get("trnplan", {})
        proven = "optimum_usd" in r
        cells = [
            str(r["sites"]),
            str(r["seed"]),
            f"{r['gap']:.3f}" if "gap" in r else "-",
            str(r.get("stages", "-")),
            str(r.get("milps", "-")),
            f"{r.get('median_points', '-')} / {r.get('max_points', '-')}",
            f"{r['start_s']:.1f}",
            f"{r['walk_s']:.1f}" if "walk_s" in r else "-",
            f"{r['dp_s']:.2f}" if "dp_s" in r else "-",
            f"{r['optimum_usd']:,.2f}" if proven else r["status"],
            f"{(r['optimum_usd'] - r['bound_usd']) * 1e-6:.3f}" if proven else "-",
            f"{t['seconds']:.1f}" if "seconds" in t else "-",
            t.get("status", "-"),
            f"{r['optimum_usd'] - t['tco_usd']:.2f}" if proven and "tco_usd" in t else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="200")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--max-milps", type=int, default=30_000, help="stop a walk past this many MILPs in all")
    p.add_argument("--first-window", type=float, default=1.0,
                   help="walk first within this share of G, then within what the program's optimum needs")
    p.add_argument("--compare", action="store_true", help="also trnplan's own solve, in a fresh process")
    p.add_argument("--limit", type=float, default=120.0, help="seconds for trnplan's solve (--compare)")
    args = p.parse_args()
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for seed in [int(s) for s in args.seeds.split(",")]:
            row = measure(n, seed, args.max_milps, args.first_window)
            if args.compare:
                import scale

                row["trnplan"] = scale.run(n, seed, "new", args.limit, "")
            print(f"{n} sites seed {seed}: {row['status']}", file=sys.stderr, flush=True)
            rows.append(row)
    print(table(rows))


if __name__ == "__main__":
    main()
