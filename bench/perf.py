"""`trnplan perf WORKLOAD` end to end, against `trnplan validate` (the same start-up and catalog load, no
model): what the performance model's layout search adds (issue 38: under 2 s on the shipped catalog); and
the search alone in-process (`trnplan.perf.workload_performance`, its cache cleared).

    python bench/perf.py                 # moe-train, dense-train, moe-inference; 5 repeats each
    python bench/perf.py --repeats 9

Each command runs in a fresh subprocess (cold imports, no cache across runs); medians of wall-clock seconds
are printed with the ratio to `validate` measured side by side in the same run. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def seconds(args: list[str], repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "trnplan", *args], check=True, capture_output=True)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    base = seconds(["validate"], args.repeats)
    print(f"{'command':34} {'median s':>9} {'x validate':>10}")
    print(f"{'trnplan validate':34} {base:9.2f} {1.0:10.2f}")
    for workload in ("moe-train", "dense-train", "moe-inference"):
        t = seconds(["perf", workload], args.repeats)
        print(f"{'trnplan perf ' + workload:34} {t:9.2f} {t / base:10.2f}")
    from trnplan.perf import best_step, workload_performance
    from trnplan.specs.load import load_specs

    catalog = load_specs()
    for workload in ("moe-train", "dense-train", "moe-inference"):
        runs = []
        for _ in range(args.repeats):
            best_step.cache_clear()
            start = time.perf_counter()
            workload_performance(catalog, workload)
            runs.append(time.perf_counter() - start)
        print(f"{'search only, ' + workload:34} {statistics.median(runs):9.2f}")


if __name__ == "__main__":
    main()
