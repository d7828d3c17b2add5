"""How fast trnplan reads YAML: the shipped specs and plans through `parse_yaml`, with libyaml's events under
the bounded Python composer (what trnplan uses where PyYAML has libyaml) against PyYAML's pure-Python parser
(the reading it falls back to), side by side in one process, alternating, so that the machine's load hits
both alike.

    /work/venv/bin/python bench/yaml_read.py            # about 20 s
    /work/venv/bin/python bench/yaml_read.py --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from trnplan.specs import yamlgraph
from trnplan.specs.yamlsafe import parse_yaml

REPO = Path(__file__).resolve().parents[1]


def seconds(text: str, libyaml: bool, repeat: int) -> float:
    saved = yamlgraph._CParser
    yamlgraph._CParser = saved if libyaml else None
    try:
        start = time.perf_counter()
        for _ in range(repeat):
            parse_yaml(text)
        return (time.perf_counter() - start) / repeat
    finally:
        yamlgraph._CParser = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per file (median kept)")
    args = parser.parse_args()
    if yamlgraph._CParser is None:
        raise SystemExit("this PyYAML has no libyaml: there is nothing to compare")
    files = sorted([*REPO.glob("specs/*.yaml"), *REPO.glob("plans/*.yaml")])
    print(f"{'file':32} {'KiB':>6} {'pure Python':>12} {'libyaml':>9} {'ratio':>6}")
    total_slow = total_fast = 0.0
    for path in files:
        text = path.read_text(encoding="utf-8")
        repeat = max(1, 200_000 // max(1, len(text)))
        slow, fast = [], []
        for _ in range(args.rounds):
            slow.append(seconds(text, False, repeat))
            fast.append(seconds(text, True, repeat))
        s, f = statistics.median(slow), statistics.median(fast)
        total_slow, total_fast = total_slow + s, total_fast + f
        name = str(path.relative_to(REPO))
        print(f"{name:32} {len(text) / 1024:6.1f} {s * 1000:9.1f} ms {f * 1000:6.1f} ms {s / f:5.1f}x")
    print(f"{'all of them':32} {'':6} {total_slow * 1000:9.1f} ms {total_fast * 1000:6.1f} ms "
          f"{total_slow / total_fast:5.1f}x")


if __name__ == "__main__":
    main()
