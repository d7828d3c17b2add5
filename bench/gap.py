"""Issue 35: time to a plan proven within 1e-4 and to a proof (gap 0), and `trnplan optimize` with its
alternatives, today's tree side by side with another (the starting commit's), in one run.

    python bench/gap.py --base /tmp/trnplan-base                 # every case, both trees
    python bench/gap.py --base /tmp/trnplan-base --cases 10x8,25x8 --limit 120
    python bench/gap.py --cases life,50x1                        # today's tree only

`--base DIR` is a checkout of the commit to compare with (`git worktree add DIR COMMIT`). Each case runs
in a fresh process per tree, one after the other, on the same generated portfolio:
  SxQ    the phased portfolio of S sites over Q quarters (`phased_portfolio_specs`, seed 0), built as
         `trnplan optimize` builds it and solved within 1e-4 and to gap 0, each under `--limit` seconds
         (one deadline for building, the start heuristic and the search). A tree without `--gap` is given
         the same target through HiGHS's own `mip_rel_gap`.
  Sx1    the single-period portfolio of S sites (`portfolio_specs`), to gap 0 (`--single-gaps`: others).
  life   `python -m trnplan optimize trn3-life --alternatives 3` end to end (median of `--repeat`).
Prints seconds, status and the gap reached per tree, the ratio base / today, and issue 35's targets met
or missed and by how much (judged on today's tree). Timings are printed, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

TARGETS: dict[tuple[str, float], float] = {
    ("life", 0.0): 5.0,
    ("10x8", 0.0): 30.0,
    ("25x8", 1e-4): 30.0,
    ("50x8", 1e-4): 60.0,
    ("25x16", 1e-4): 120.0,
    ("50x1", 0.0): 10.0,
    ("200x1", 0.0): 60.0,
}
"""(case, gap): seconds, issue 35's targets."""


def worker(case: str, gap: float, limit: float, seed: int = 0, options: str = "") -> dict[str, Any]:
    """One solve in this process (the tree on sys.path): seconds, status, gap reached, objective; `seed` is
    the generated portfolio's; `options` (`K=V;K=V`, bench/phased.py's `--highs-options`): HiGHS options
    on top of trnplan's for every HiGHS instance of this process."""
    import inspect

    from phased_probe import parse_options

    from trnplan.optimize import build_model, progress, solve_objective
    from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs, portfolio_specs

    sites, quarters = (int(x) for x in case.split("x"))
    phased = quarters > 1
    data = phased_portfolio_specs(sites, quarters, seed) if phased else portfolio_specs(sites, seed=seed)
    catalog = load_portfolio(data)
    (scenario_id,) = catalog.scenarios
    sys.modules["trnplan.optimize.solve"].HIGHS_OPTIONS.update(parse_options(options))
    kwargs: dict[str, Any] = {}
    if "gap" in inspect.signature(solve_objective).parameters:
        kwargs["gap"] = gap
    else:  # a tree without --gap: HiGHS's own option, the same target
        module = sys.modules["trnplan.optimize.solve"]
        module.HIGHS_OPTIONS["mip_rel_gap"] = gap
    began = time.perf_counter()
    deadline = progress.Deadline(limit)
    limited = getattr(progress, "limited", None)
    if limited is not None:
        with limited(deadline):
            model = build_model(catalog, scenario_id)
            result, _decisions, _ = solve_objective(model, "highs", deadline, **kwargs)
    else:
        model = build_model(catalog, scenario_id)
        result, _decisions, _ = solve_objective(model, "highs", deadline, **kwargs)
    return {
        "seconds": time.perf_counter() - began,
        "status": result.status.value,
        "gap": result.mip_gap,
        "objective": result.objective,
    }


def run_case(tree: Path, case: str, gap: float, limit: float, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if case == "life":
        times = []
        status = "?"
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(repeat):
                began = time.perf_counter()
                proc = subprocess.run(
                    [sys.executable, "-m", "trnplan", "optimize", "trn3-life", "--alternatives", "3",
                     "--out", str(Path(tmp) / "life.yaml"), "--specs", str(tree / "specs")],
                    capture_output=True, text=True, env=env, cwd=tmp,
                )
                times.append(time.perf_counter() - began)
                status = "optimal" if proc.returncode == 0 else f"exit {proc.returncode}"
        gap_reached = 0.0 if status == "optimal" else None
        return {"seconds": statistics.median(times), "status": status, "gap": gap_reached}
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", case, str(gap), str(limit)],
        capture_output=True, text=True, env=env,
    )
    if proc.returncode != 0:
        return {"seconds": float("nan"), "status": "crashed", "gap": None, "error": proc.stderr[-300:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def verdict(case: str, gap: float, row: dict[str, Any]) -> str:
    target = TARGETS.get((case, gap))
    if target is None:
        return ""
    reached = row["status"] == "optimal" or (
        gap > 0 and row["status"] == "feasible" and row["gap"] is not None and row["gap"] <= gap
    )
    seconds = row["seconds"]
    if not reached:
        return f"< {target:g} s: **missed** (not reached in {seconds:.0f} s)"
    if seconds < target:
        return f"< {target:g} s: met"
    return f"< {target:g} s: **missed** by {seconds - target:.1f} s ({seconds / target:.1f}x over)"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        case, gap, limit = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
        seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
        options = sys.argv[6] if len(sys.argv) > 6 else ""
        print(json.dumps(worker(case, gap, limit, seed, options)))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="life,10x8,25x8,50x8,25x16,50x1,200x1")
    p.add_argument("--gaps", default="0.0001,0", help="relative gaps for the phased cases")
    p.add_argument("--single-gaps", default="0", help="relative gaps for the single-period cases (Sx1)")
    p.add_argument("--limit", type=float, default=200.0, help="seconds per solve")
    p.add_argument("--repeat", type=int, default=3, help="runs of `life` (median)")
    p.add_argument("--base", type=Path, help="a checkout of the commit to compare with")
    args = p.parse_args()
    trees = [("today", REPO)] + ([("base", args.base.resolve())] if args.base else [])
    head = (f"{'case':>6} {'gap':>6} {'tree':>6} {'status':>9} {'reached':>9} {'seconds':>8} "
            f"{'base/today':>10}")
    print(head)
    print("-" * len(head))
    for case in args.cases.split(","):
        phased = case != "life" and not case.endswith("x1")
        gaps = args.gaps if phased else args.single_gaps if case != "life" else "0"
        for gap in [float(g) for g in gaps.split(",")]:
            rows: dict[str, dict[str, Any]] = {}
            for name, tree in trees:
                rows[name] = row = run_case(tree, case, gap, args.limit, args.repeat)
                reached = "-" if row["gap"] is None else f"{row['gap']:.5%}"
                ratio = ""
                if name == "base" and rows["today"]["seconds"] > 0:
                    ratio = f"{row['seconds'] / rows['today']['seconds']:10.2f}"
                print(f"{case:>6} {gap:>6g} {name:>6} {row['status']:>9} {reached:>9} {row['seconds']:8.1f} "
                      f"{ratio}", flush=True)
            note = verdict(case, gap, rows["today"])
            if note:
                print(f"{'':14}target {note}", flush=True)


if __name__ == "__main__":
    main()
