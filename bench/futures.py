"""A plan across futures on the shipped trn3-hedge: the extensive form's time for 5, 10, 20 and 50
futures (and how it grows), and the per-future solves (each future's own optimum) on a local Dask cluster
of 1 worker against 2, side by side in one run.

    python bench/futures.py                      # futures 5, 10, 20, 50; per-future solves of 20
    python bench/futures.py --sizes 5,10 --per-future 10
    python bench/futures.py --sizes 20 --per-future 0   # the extensive form only
    python bench/futures.py --sizes 20 --per-future 0 --gap 1e-4   # proven within 1e-4
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trnplan.futures import FutureTask, solve_future  # noqa: E402
from trnplan.optimize.futures import optimize_futures, shared_periods  # noqa: E402
from trnplan.specs.load import load_specs  # noqa: E402
from trnplan.sweep.grid import ranged_fields, sample_runs  # noqa: E402
from trnplan.sweep.runner import cluster  # noqa: E402

SPECS = str(ROOT / "specs")


def futures_of(scenario: str, n: int, seed: int) -> list:
    catalog = load_specs([SPECS])
    runs = sample_runs(ranged_fields(catalog, scenario), n, seed)
    return [load_specs([SPECS], list(r.overrides)) for r in runs]


def extensive(scenario: str, sizes: list[int], seed: int, limit: float, gap: float) -> None:
    print(f"Extensive form, {scenario}, seed {seed}, gap {gap:g}, load {os.getloadavg()[0]:.2f}")
    print("| futures | status | s | s per future | vs previous size |")
    print("|---:|---|---:|---:|---:|")
    before = None
    for n in sizes:
        catalogs = futures_of(scenario, n, seed)
        shared = shared_periods(catalogs[0], scenario)
        start = time.perf_counter()
        solved = optimize_futures(catalogs, scenario, shared, time_limit=limit, gap=gap)
        took = time.perf_counter() - start
        growth = f"{took / before[1]:.2f}x for {n / before[0]:.1f}x futures" if before else ""
        print(f"| {n} | {solved.result.status.value} (gap {solved.result.mip_gap}) | {took:.1f} | "
              f"{took / n:.2f} | {growth} |")
        before = (n, took)


def per_future(scenario: str, n: int, seed: int) -> None:
    tasks = [FutureTask(c, scenario) for c in futures_of(scenario, n, seed)]
    print(f"\nPer-future solves (each future's own optimum), {n} futures, load {os.getloadavg()[0]:.2f}")
    print("| mode | s | vs 1 worker |")
    print("|---|---:|---:|")
    times = {}
    results = {}
    for workers in (1, 2):
        with cluster(workers, None, 10.0) as client:
            start = time.perf_counter()
            results[workers] = client.gather(client.map(solve_future, tasks, pure=False))
            times[workers] = time.perf_counter() - start
        print(f"| Dask, {workers} worker{'s' if workers > 1 else ''} | {times[workers]:.1f} | "
              f"{times[1] / times[workers]:.2f}x |")
    assert results[1] == results[2], "the two clusters' TCOs differ"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default="trn3-hedge")
    parser.add_argument("--sizes", default="5,10,20,50")
    parser.add_argument("--per-future", type=int, default=20,
                        help="futures of the per-future solves (0: skip them)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--gap", type=float, default=0.0, help="relative gap to prove (0: optimal)")
    args = parser.parse_args()
    if args.per_future < 0:
        parser.error("--per-future N: N is 0 (skip the per-future solves) or more")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    extensive(args.scenario, sizes, args.seed, args.time_limit, args.gap)
    if args.per_future:
        per_future(args.scenario, args.per_future, args.seed)


if __name__ == "__main__":
    main()
