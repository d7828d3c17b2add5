"""Phased portfolios: time to a proof of the phased MILP, its variants, and the single-period model.

    python bench/phased.py                              # 10x4, 10x8, 25x4, 50x4 (sites x quarters), seed 0
    python bench/phased.py --cases 10x8 --seeds 0,1 --limit 120 --models today,plain
    python bench/phased.py --cases 10x8 --models start --highs-seeds 0,1,2,3
    python bench/phased.py --cases 10x8,25x8,50x8,25x16 --models today --gaps 0.0001,0 --base /tmp/base

For each case, in one run and one after the other on the same generated portfolio
(`trnplan.testkit.portfolio.phased_portfolio_specs`: quarterly periods from 2027-01, demand ramping to
the full demand, a third of the halls opening late, a quarter growing), each of `--models`:
  today   the phased model as `trnplan optimize` builds it (per-period capacity cuts; from 100 sites the
          MIP start of `trnplan.optimize.accelerate.start` on window-long site blocks; from 300
          site-periods, the first plan of `trnplan.optimize.accelerate.relaxed`)
  plain   without issue 17's machinery (`cuts=False, start=False`: the first version's model, per period)
  start   today's with the MIP start forced on, whatever the number of sites
  nostart today's with the MIP start off, whatever the number of sites (the capacity cuts kept)
  single  the single-period model of its last period alone (`single_of`: the same sites at their last
          figures, the last demand), as `trnplan optimize` builds it
Reports seconds to proof at each of `--gaps` (default gap 0 only; `--gaps 0.0001,0` gives the time to a
plan proven within 1e-4 and the time to a proof), or the limit, model sizes, each model's time over
today's, and on today's model (HiGHS seed 0) the targets of issues 17 and 35 where the case has one
(`PHASED_TARGETS`: 10 x 8 proven in under 30 s; 25 x 8, 50 x 8 and 25 x 16 within 1e-4 in under 30, 60 and
120 s), met or missed and by how much.
With `--base DIR` (a checkout of another commit: `git worktree add DIR COMMIT`), the *today* model is also
solved in that tree, in a fresh process, one after the other with today's (also in a fresh process then):
the row `base` and the ratio base / today, side by side in one run.
With `--highs-seeds`, each model is solved once per HiGHS random seed (`trnplan.optimize.highs.HIGHS_SEED`;
trnplan itself always uses 0; shown as MODEL@SEED): the same model, another search; a line per model
says whether the seeds that proved found the same optimum.
With `--highs-options K=V[;K=V...]`, today's model is solved with these HiGHS options on top of
trnplan's (`trnplan.optimize.solve.HIGHS_OPTIONS`, every HiGHS instance of its process: in this one, or
with `--base` in today's fresh process, the base's keeping its own), e.g. `parallel=on;threads=2` for
HiGHS's parallel tree search (every instance of a process must then ask for the same threads).
Timings are printed, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

VARIANTS = {
    "today": {},
    "plain": {"cuts": False, "start": False},
    "start": {"start": True},
    "nostart": {"start": False},
    "single": {},
}


def solve_case(data: dict[str, Any], limit: float, gap: float = 0.0, **build: Any) -> dict[str, Any]:
    from trnplan.optimize import build_model, solve_objective
    from trnplan.testkit.portfolio import load_portfolio

    catalog = load_portfolio(data)
    (scenario_id,) = catalog.scenarios
    began = time.perf_counter()
    model = build_model(catalog, scenario_id, **build)
    built = time.perf_counter() - began
    result, _decisions, _ = solve_objective(model, "highs", limit, gap=gap)
    variables = model.prob.variables()
    return {
        "seconds": time.perf_counter() - began,
        "build_s": built,
        "status": result.status.value,
        "gap": result.mip_gap,
        "objective": result.objective,
        "variables": len(variables),
        "integers": sum(1 for v in variables if v.cat == "Integer"),
        "rows": len(model.prob.constraints),
    }


def _agreement(model: str, runs: list[dict[str, Any]]) -> str:
    """Whether the proven runs of one model (one per HiGHS seed) found the same optimum."""
    proven = sorted({round(r["objective"], 6) for r in runs if r["status"] == "optimal"})
    if not proven:
        return f"  {model}: no seed proved an optimum"
    if len(proven) == 1:
        return f"  {model}: every proving seed has the optimum {proven[0]:.4f}"
    return f"  {model}: **the seeds' optima differ**: {', '.join(f'{v:.4f}' for v in proven)}"


def in_tree(tree: Path, case: str, gap: float, limit: float, seed: int, options: str = "") -> dict[str, Any]:
    """The *today* model of `case` (the portfolio of `seed`) solved to `gap` by the trnplan of `tree`, in a
    fresh process (bench/gap.py's worker: the tree's own build and search, one deadline of `limit` s), with
    the HiGHS `options` (`K=V;K=V`) on top of trnplan's."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("gap.py")), "--worker", case, str(gap), str(limit),
         str(seed), options],
        capture_output=True, text=True, env=env,
    )
    crashed = {"seconds": float("nan"), "status": "crashed", "gap": None, "error": proc.stderr[-300:]}
    row = dict(json.loads(proc.stdout.strip().splitlines()[-1])) if proc.returncode == 0 else crashed
    return {**row, "variables": 0, "integers": 0, "rows": 0}


def reached(row: dict[str, Any], gap: float) -> bool:
    """Whether a solve ended proven within `gap` (gap 0: proven optimal)."""
    if row["status"] == "optimal":
        return True
    return gap > 0 and row["status"] == "feasible" and row["gap"] is not None and row["gap"] <= gap


def main() -> None:
    import importlib

    from trnplan.testkit.portfolio import PHASED_TARGETS, phased_portfolio_specs, single_of, time_verdict

    highs_module = importlib.import_module("trnplan.optimize.highs")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="10x4,10x8,25x4,50x4", help="SITESxQUARTERS, comma-separated")
    p.add_argument("--seeds", default="0")
    p.add_argument("--limit", type=float, default=120.0, help="seconds per solve")
    p.add_argument("--models", default="today,plain,start,single", help=", ".join(VARIANTS))
    p.add_argument("--highs-seeds", default="0", help="HiGHS seeds per model (0 is trnplan's)")
    p.add_argument("--gaps", default="0", help="relative gaps to prove, comma-separated (0: optimal)")
    p.add_argument("--base", type=Path, help="a checkout of the commit to compare today's model with")
    p.add_argument("--highs-options", default="", help="K=V[;K=V]: HiGHS options on top of trnplan's")
    args = p.parse_args()
    if args.highs_options:  # every HiGHS instance of the process today's model is solved in (parsed here:
        from phased_probe import parse_options  # a mistake stops the run before anything is solved)

        sys.modules["trnplan.optimize.solve"].HIGHS_OPTIONS.update(parse_options(args.highs_options))
    models = args.models.split(",")
    gaps = [float(g) for g in args.gaps.split(",")]
    head = (
        f"{'case':>5} {'seed':>4} {'target':>6} {'model':>8} {'status':>10} {'gap':>8} {'seconds':>7} "
        f"{'vars':>5} {'ints':>5} {'rows':>5} {'/ today':>7}"
    )
    print(head)
    print("-" * len(head))
    for case in args.cases.split(","):
        sites, quarters = (int(x) for x in case.split("x"))
        for seed, aim in ((int(s), g) for s in args.seeds.split(",") for g in gaps):
            data = phased_portfolio_specs(sites, quarters, seed)
            rows: dict[str, dict[str, Any]] = {}
            runs = [(m, int(k)) for m in models for k in args.highs_seeds.split(",")]
            if args.base is not None and "today" in models:  # both trees in fresh processes, in turn
                runs = [("today", -1), ("base", -1)] + [r for r in runs if r != ("today", 0)]
            for name, highs_seed in runs:
                label = name if highs_seed <= 0 else f"{name}@{highs_seed}"
                if highs_seed < 0:
                    today_tree = name == "today"
                    tree = Path(__file__).resolve().parents[1] if today_tree else args.base.resolve()
                    options = args.highs_options if today_tree else ""
                    rows[label] = row = in_tree(tree, case, aim, args.limit, seed, options)
                else:
                    highs_module.HIGHS_SEED = highs_seed
                    case_data = single_of(data) if name == "single" else data
                    rows[label] = row = solve_case(case_data, args.limit, aim, **VARIANTS[name])
                gap = "-" if row["gap"] is None else f"{row['gap']:.4%}"
                today = rows.get("today")
                ratio = f"{row['seconds'] / today['seconds']:7.2f}" if today else ""
                sizes = (f"{row['variables']:5d} {row['integers']:5d} {row['rows']:5d}" if row["variables"]
                         else f"{'-':>5} {'-':>5} {'-':>5}")  # a tree's worker does not report them
                status = "no plan" if row["status"] == "no_solution" else row["status"]
                print(
                    f"{case:>5} {seed:>4} {aim:>6g} {label:>8} {status:>10} {gap:>8} "
                    f"{row['seconds']:7.1f} {sizes} {ratio}",
                    flush=True,
                )
                if "error" in row:  # a tree's worker that failed: the end of what it said
                    said = row["error"].strip().splitlines() or ["(nothing on stderr)"]
                    print(f"{'':20}{said[-1][:60]}", flush=True)
                target = PHASED_TARGETS.get((sites, quarters, aim)) if label == "today" else None
                if target is not None:  # on its own line: the table stays within 80 columns
                    verdict = time_verdict(target, row["seconds"], reached(row, aim))
                    print(f"{'':20}target {verdict}", flush=True)
            if "," in args.highs_seeds:
                for name in models:
                    print(_agreement(name, [r for label, r in rows.items() if label.split("@")[0] == name]))


if __name__ == "__main__":
    main()
