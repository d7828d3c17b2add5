"""Sweep throughput: runs per second on Dask with 1 and 2 workers, against the same runs solved serially in
one process, side by side in one run.

    python bench/sweep.py                       # 200 runs of trn3-100k (--sample over the shipped ranges)
    python bench/sweep.py --runs 40 --scenario moe-144

Each run is what a sweep task does: load the shipped specs with the run's overrides, then
`plan_scenario(..., alternatives=0)`. "serial" does that in this process, one run after another; the
Dask rows submit the same tasks to a LocalCluster of one-thread worker processes (cluster start-up timed
apart). Overhead per run = (Dask 1-worker solve time - serial time) / runs.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from trnplan.specs.load import load_specs
from trnplan.sweep.grid import ranged_fields, sample_runs
from trnplan.sweep.runner import Task, cluster, solve_all, solve_run

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="trn3-100k")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    specs = str(ROOT / "specs")
    catalog = load_specs([specs])
    runs = sample_runs(ranged_fields(catalog, args.scenario), args.runs, args.seed)
    tasks = [Task(args.scenario, (specs,), (), run) for run in runs]

    t0 = time.perf_counter()
    serial = [solve_run(t) for t in tasks]
    serial_s = time.perf_counter() - t0
    figures = [("serial, one process", 0.0, serial_s)]
    for workers in (1, 2):
        t0 = time.perf_counter()
        with cluster(workers, None, 10) as client:
            client.wait_for_workers(workers)
            start_s = time.perf_counter() - t0
            rows = []
            t1 = time.perf_counter()
            solve_all(client, tasks, rows.append)
            solve_s = time.perf_counter() - t1
        figures_of = sorted((r["run"], r["tco_usd"]) for r in rows)
        assert figures_of == sorted((r["run"], r["tco_usd"]) for r in serial), "a Dask row differs"
        figures.append((f"Dask, {workers} worker{'s' if workers > 1 else ''}", start_s, solve_s))

    statuses = sorted({r["status"] for r in serial})
    print(f"{args.runs} runs of {args.scenario} (--sample, seed {args.seed}; statuses: "
          f"{', '.join(statuses)}); {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"{'mode':<22}{'start-up s':>12}{'solve s':>10}{'runs/s':>9}{'vs serial':>11}{'ms/run':>9}")
    for name, start_s, solve_s in figures:
        print(f"{name:<22}{start_s:>12.2f}{solve_s:>10.2f}{args.runs / solve_s:>9.1f}"
              f"{serial_s / solve_s:>10.2f}x{solve_s / args.runs * 1000:>9.1f}")
    over = (figures[1][2] - serial_s) / args.runs * 1000
    print(f"overhead per run, Dask 1 worker against serial: {over:.1f} ms "
          f"({over / (serial_s / args.runs * 1000):.1%} of a serial run)")

if __name__ == "__main__":
    main()
