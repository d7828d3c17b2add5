"""`trnplan perf WORKLOAD` end to end, against `trnplan show workloads` (the same start-up and catalog load,
no model): what the performance model's layout search adds (issue 38: under 2 s on the shipped catalog).

    python bench/perf.py                 # moe-train, dense-train, moe-inference; 5 repeats each
    python bench/perf.py --repeats 9

Each command runs in a fresh subprocess (cold imports, no cache across runs); medians of wall-clock seconds
are printed with the ratio to `show workloads` measured side by side in the same run. Nothing is asserted.
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
    base = seconds(["show", "workloads"], args.repeats)
    print(f"{'command':34} {'median s':>9} {'x show':>7}")
    print(f"{'trnplan show workloads':34} {base:9.2f} {1.0:7.2f}")
    for workload in ("moe-train", "dense-train", "moe-inference"):
        t = seconds(["perf", workload], args.repeats)
        print(f"{'trnplan perf ' + workload:34} {t:9.2f} {t / base:7.2f}")


if __name__ == "__main__":
    main()
