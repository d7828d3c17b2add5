"""Issue 35: `optimize` of a large phased portfolio with its alternatives, under one time limit: when the
plan was ready, what each alternative reached, the whole call's seconds and the process's peak memory,
today's tree side by side with another (`--base`), in one run.

    python bench/alternatives.py --base /tmp/trnplan-base                  # 50 x 8, 3 alternatives, 600 s
    python bench/alternatives.py --cases 25x8,50x8 --limit 300 --alternatives 2
    python bench/alternatives.py --limit 0                                 # no time limit: as it ends

Each case runs in a fresh process per tree, one after the other, on the same generated phased portfolio
(`phased_portfolio_specs`, seed 0; `Sx1`: the single-period portfolio of S sites, `portfolio_specs`),
through `trnplan.optimize.optimize` as `trnplan optimize --gap 0.0001 --time-limit LIMIT` calls it
(`--gap 0`: as without `--gap`; the progress session's stages give the time the plan took, the LP bounds of
the alternatives' choices included: the first alternative's stage begins after them). Peak memory is
the worker process's `ru_maxrss`. Timings are printed, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def worker(case: str, k: int, limit: float, gap: float) -> dict[str, Any]:
    """One `optimize` call in this process (the tree on sys.path)."""
    from trnplan.optimize import optimize, progress
    from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs, portfolio_specs

    sites, quarters = (int(x) for x in case.split("x"))
    data = phased_portfolio_specs(sites, quarters, 0) if quarters > 1 else portfolio_specs(sites, seed=0)
    catalog = load_portfolio(data)
    (scenario_id,) = catalog.scenarios
    began = time.perf_counter()
    plan_ready: list[float] = []

    def heard(p: Any) -> None:
        if p.stage.startswith("alternative") and not plan_ready:
            plan_ready.append(time.perf_counter() - began)

    with progress.watch(heard):
        solution = optimize(catalog, scenario_id, alternatives=k, gap=gap, time_limit=limit or None)
    seconds = time.perf_counter() - began
    alternatives = [{"without": a.without, "status": a.result.status.value, "gap": a.result.mip_gap,
                     "stopped": a.result.termination.value} for a in solution.alternatives]
    return {
        "seconds": seconds,
        "plan_s": plan_ready[0] if plan_ready else seconds,
        "status": solution.result.status.value,
        "gap": solution.result.mip_gap,
        "alternatives": alternatives,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_case(tree: Path, case: str, k: int, limit: float, gap: float) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", case, str(k), str(limit), str(gap)],
        capture_output=True, text=True, env=env,
    )
    if proc.returncode != 0:
        return {"seconds": float("nan"), "status": f"exit {proc.returncode}", "error": proc.stderr[-300:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _alternatives(row: dict[str, Any], gap: float) -> str:
    parts = []
    for a in row.get("alternatives", []):
        # proven: optimal, within the plan's gap, or within its own (HiGHS ended "optimal" at its gap)
        done = a["status"] == "optimal" or a["stopped"] == "optimal"
        reached = "proven" if done or (a["gap"] is not None and a["gap"] <= gap) else (
            "-" if a["gap"] is None else f"{a['gap']:.4%}")
        if reached not in ("proven", "-") and a.get("stopped"):
            reached += f" ({a['stopped']})"
        parts.append(f"{a['without']}: {a['status']} {reached}")
    return "; ".join(parts) or "none"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        case, k, limit, gap = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
        print(json.dumps(worker(case, k, limit, gap)))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="50x8")
    p.add_argument("--alternatives", type=int, default=3)
    p.add_argument("--limit", type=float, default=600.0, help="seconds for the whole call (0: none)")
    p.add_argument("--gap", type=float, default=1e-4)
    p.add_argument("--base", type=Path, help="a checkout of the commit to compare with")
    args = p.parse_args()
    trees = [("today", REPO)] + ([("base", args.base.resolve())] if args.base else [])
    for case in args.cases.split(","):
        for name, tree in trees:
            row = run_case(tree, case, args.alternatives, args.limit, args.gap)
            if "error" in row:
                print(f"{case} {name}: {row['status']}: {row['error']}", flush=True)
                continue
            plan_gap = "-" if row["gap"] is None else f"{row['gap']:.4%}"
            print(f"{case} {name}: plan {row['status']} ({plan_gap}) at {row['plan_s']:.1f} s; whole call "
                  f"{row['seconds']:.1f} s; peak {row['peak_mib']:,.0f} MiB", flush=True)
            print(f"    alternatives: {_alternatives(row, args.gap)}", flush=True)


if __name__ == "__main__":
    main()
