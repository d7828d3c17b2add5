"""Issue 17: time to a proof at portfolio scale, the first version's model against today's, side by side.

    python bench/scale.py                                   # 10,25,50,100,200 sites, seeds 0,1
    python bench/scale.py --sizes 10,25 --seeds 0 --old-limit 60
    python bench/scale.py --catalog DIR --key scale_first_catalog   # chips, forms, switches from DIR
    python bench/scale.py --sizes 200 --seeds 1 --old-max-sites 0 --highs-seeds 0,1,2 --out -
    python bench/scale.py --sizes 50,200 --seeds 0 --old-max-sites 0 --also search,program --out -
    python bench/scale.py --sizes 25 --old-max-sites 0 --set optimize.accelerate.columns.MAX_ROUNDS=2 --out -

For each size and seed, in fresh processes one after the other on the same generated portfolio
(trnplan/testkit/portfolio.py): the first version's model (`build_model(cuts=False, start=False)`) and
today's (capacity cuts, MIP start with reduced-cost fixings), each to a proof at gap 0 or its time limit.
Reports seconds to proof, today's split into building the model / the MIP start / the rest (HiGHS's
search or the frontier program, and reading the plan back), the ratio old / new (a lower bound where the
old model hit its limit), model sizes, whether both found the same decisions and TCO to the cent, issue
17's targets met or missed and by how much (`trnplan.testkit.portfolio`: seconds at 50, 100 and 200
sites, 10x at 25 and 50), and the growth exponent of today's time in sites (least squares on log-log
over the proven sizes). With `--highs-seeds`, today's model is
solved again with each other HiGHS random seed (`trnplan.optimize.highs.HIGHS_SEED`; trnplan itself
always uses 0): the same model, start and optimum, another search, to show how much of a proof's time
is the search's luck; the targets are judged on seed 0, what `trnplan optimize` runs. The "frontier
program" column says whether `trnplan.optimize.accelerate.frontier` proved the portfolio (from 150
sites) or HiGHS's search did; `--also search,program` adds today's model with the program off and with
it forced at any size (no MILP budget); each `--set trnplan.MODULE.NAME=VALUE[;...]` (repeatable; the
`trnplan.` may be left off) adds today's model with those module constants changed (the start's rounds
and node limits, for example), as "set 1", "set 2", ... Merges its results into bench/results.json
under "scale". Timings are never asserted in tests.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


SET_ENV = "TRNPLAN_BENCH_SET"  # how `--set` reaches a worker


def parse_sets(text: str) -> list[tuple[str, str, Any]]:
    """`optimize.accelerate.columns.MAX_ROUNDS=2;...` as (module, constant, value); values are Python
    literals."""
    import ast

    out = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        target, sep, raw = item.partition("=")
        module, _, name = target.strip().rpartition(".")
        if not sep or not module or not name:
            raise SystemExit(f"--set {item!r}: expected MODULE.NAME=VALUE")
        module = module if module.startswith("trnplan.") else f"trnplan.{module}"
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            raise SystemExit(f"--set {item!r}: {raw.strip()!r} is not a Python literal") from None
        out.append((module, name, value))
    return out


def apply_sets(text: str, *, change: bool = True) -> None:
    """Change the module constants `--set` names (only check them without `change`); a constant that
    does not exist is an error."""
    import importlib

    for module, name, value in parse_sets(text):
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            raise SystemExit(f"--set: no module {module}") from None
        if not hasattr(loaded, name):
            raise SystemExit(f"--set: {module} has no {name}")
        if change:
            setattr(loaded, name, value)


def worker(sites: int, seed: int, variant: str, limit: float, spec_dir: str) -> dict[str, Any]:
    from trnplan.costs import evaluate
    from trnplan.optimize import build_model, solve_objective
    from trnplan.specs.load import load_specs
    from trnplan.testkit.portfolio import write_portfolio

    with tempfile.TemporaryDirectory() as tmp:
        scenario_id = write_portfolio(sites, Path(tmp), seed, spec_dir=Path(spec_dir) if spec_dir else None)
        catalog = load_specs([tmp])
    apply_sets(os.environ.get(SET_ENV, ""))
    t = time.perf_counter()
    if "@" in variant:  # "new@K": today's model, HiGHS seed K
        highs_module = importlib.import_module("trnplan.optimize.highs")
        variant, highs_seed = variant.split("@")
        highs_module.HIGHS_SEED = int(highs_seed)
    from trnplan.optimize.accelerate import frontier

    if "!" in variant:  # "new!search": HiGHS's search only; "new!program": the frontier program forced
        variant, mode = variant.split("!")
        frontier.FRONTIER_MIN_SITES = 10**6 if mode == "search" else 0
        if mode == "program":
            frontier.WALK_MILPS_PER_SITE = 10**6
            frontier.WIDE_START = math.inf
    proofs: list[Any] = []
    prove = frontier.prove

    def spy(*args: Any) -> Any:
        proofs.append((prove(*args), args[1]))  # the proof and the start it came from
        return proofs[-1][0]

    frontier.prove = spy  # type: ignore[assignment]
    acceleration = importlib.import_module("trnplan.optimize.accelerate")  # where the start is made

    starts: list[float] = []
    mip_start = acceleration.mip_start

    def timed_start(*args: Any) -> Any:
        began = time.perf_counter()
        try:
            return mip_start(*args)
        finally:
            starts.append(time.perf_counter() - began)

    acceleration.mip_start = timed_start
    old = variant == "old"
    model = build_model(catalog, scenario_id, cuts=not old, start=False if old else None)
    build_s = time.perf_counter() - t
    result, decisions, _ = solve_objective(model, "highs", limit)
    total = time.perf_counter() - t
    out: dict[str, Any] = {
        "sites": sites,
        "seed": seed,
        "variant": variant,
        "seconds": total,
        "build_s": build_s,
        "start_s": sum(starts),
        "status": result.status.value,
        "gap": result.mip_gap,
        "variables": len(model.prob.variables()),
        "rows": len(model.prob.constraints()),
        "integers": sum(1 for v in model.prob.variables() if v.cat == "Integer"),
        "program": _program(proofs),
    }
    if decisions is not None:
        scenario = catalog.scenarios[scenario_id]
        tco = evaluate(catalog, scenario, decisions.deployments, dict(decisions.scale_out)).totals.tco_usd
        out["tco_usd"] = round(tco, 2)
        out["decisions"] = hashlib.sha256(repr(decisions).encode()).hexdigest()[:16]
    return out


def _program(proofs: list[Any]) -> str:
    """What the frontier program did: not tried (-), no proof (HiGHS's search followed), or proved."""
    from trnplan.optimize.accelerate import frontier

    if not proofs:
        return "-"
    proof, start = proofs[0]
    if proof is None:
        return "no proof (start far above its bound)" if start and frontier.too_wide(start) else "no proof"
    return f"proved, {proof.milps:,} MILPs"


def run(sites: int, seed: int, variant: str, limit: float, spec_dir: str, sets: str = "") -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", f"{sites},{seed},{variant},{limit},{spec_dir}"]
    env = {**os.environ, SET_ENV: sets}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {
            "sites": sites,
            "seed": seed,
            "variant": variant,
            "status": "crashed",
            "error": proc.stderr[-300:],
        }
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) on log(sites)."""
    if len({n for n, _ in points}) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(s, 1e-3)) for _, s in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def _other(label: str, run: dict[str, Any], seed0: dict[str, Any]) -> str:
    """Seconds of another run of today's model (another HiGHS seed, the search only, the program forced);
    its status if not proven; a flag if it proved another TCO."""
    out = f"{label}: {run.get('seconds', 0):.1f}"
    if run["status"] != "optimal":
        return out + f" ({run['status']})"
    if seed0["status"] == "optimal" and run.get("tco_usd") != seed0.get("tco_usd"):
        return out + " (**other TCO**)"
    return out


def _parts(run: dict[str, Any]) -> str:
    """Where a run's seconds went: building the model, the MIP start, and the rest (HiGHS's search, the
    frontier program, reading the plan back)."""
    if "build_s" not in run:
        return "-"
    build, start = run["build_s"], run.get("start_s", 0.0)
    return f"{build:.2f} / {start:.2f} / {run['seconds'] - build - start:.2f}"


def table(rows: list[dict[str, Any]]) -> str:
    from trnplan.testkit.portfolio import SECONDS_TARGETS, SPEEDUP_SIZES, speedup_verdict, time_verdict

    head = (
        "| sites | seed | vars / rows / int (new) | old s | old status | new s | new: build / start / rest s "
        "| new status | old / new | same plan & TCO | target | frontier program | other runs: s |\n"
        "|---:|---:|---|---:|---|---:|---|---|---:|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        old, new = r["old"], r["new"]
        ratio = old.get("seconds", 0) / max(new.get("seconds", 1e-9), 1e-9)
        prefix = ">= " if old["status"] != "optimal" else ""
        same = "-" if old["status"] != "optimal" else ("yes" if r["same"] else "**NO**")
        target = SECONDS_TARGETS.get(r["sites"])
        verdicts = []
        if target is not None:
            verdicts.append(time_verdict(target, new.get("seconds", 0), new["status"] == "optimal"))
        if r["sites"] in SPEEDUP_SIZES and old["status"] != "not run" and new["status"] == "optimal":
            verdicts.append(speedup_verdict(ratio, old["status"] == "optimal"))
        met = "; ".join(verdicts) or "-"
        size = f"{new.get('variables')} / {new.get('rows')} / {new.get('integers')}"
        ran = old["status"] != "not run"
        old_s = f"{old['seconds']:.2f}" if ran else "-"
        times = f"{prefix}{ratio:.1f}x" if ran else "-"
        others = " / ".join(_other(k, o, new) for k, o in r.get("others", {}).items())
        lines.append(
            f"| {r['sites']} | {r['seed']} | {size} | {old_s} | {old['status']} | {new['seconds']:.2f} "
            f"| {_parts(new)} | {new['status']} | {times} | {same} | {met} | {new.get('program', '-')} "
            f"| {others or '-'} |"
        )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10,25,50,100,200")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--old-limit", type=float, default=60.0, help="seconds for the first version's model")
    p.add_argument("--new-limit", type=float, default=300.0, help="seconds for today's model")
    p.add_argument("--old-max-sites", type=int, default=200, help="skip the old model above this size")
    p.add_argument("--catalog", default="", help="spec folder for chips, forms, switches (default: shipped)")
    p.add_argument("--out", default=str(BENCH / "results.json"))
    p.add_argument("--key", default="scale", help="key of the results in --out")
    p.add_argument("--highs-seeds", default="0", help="HiGHS seeds for today's model (0 is trnplan's)")
    p.add_argument("--also", default="", help="search,program: today's model with HiGHS's search only "
                   "(the frontier program off) / the program forced at any size, without its MILP budget")
    p.add_argument("--set", action="append", default=[], help="MODULE.NAME=VALUE[;...]: today's model with "
                   "these trnplan module constants changed, as another run")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    for text in args.set:
        apply_sets(text, change=False)  # a bad --set fails before any run
    if args.worker:
        sites, seed, variant, limit, *spec_dir = args.worker.split(",", 4)
        print(json.dumps(worker(int(sites), int(seed), variant, float(limit), "".join(spec_dir))))
        return
    rows = []
    started = time.perf_counter()
    load = os.getloadavg()
    for n in [int(s) for s in args.sizes.split(",")]:
        for seed in [int(s) for s in args.seeds.split(",")]:
            old = (
                run(n, seed, "old", args.old_limit, args.catalog)
                if n <= args.old_max_sites
                else {"status": "not run", "seconds": float("nan")}
            )
            new = run(n, seed, "new", args.new_limit, args.catalog)
            same = old.get("decisions") == new.get("decisions") and old.get("tco_usd") == new.get("tco_usd")
            others = {
                f"HiGHS seed {k}": run(n, seed, f"new@{k}", args.new_limit, args.catalog)
                for k in (int(x) for x in args.highs_seeds.split(","))
                if k != 0
            }
            for mode in filter(None, args.also.split(",")):
                label = {"search": "search only", "program": "program forced"}[mode]
                others[label] = run(n, seed, f"new!{mode}", args.new_limit, args.catalog)
            for number, text in enumerate(args.set, 1):
                others[f"set {number}"] = run(n, seed, "new", args.new_limit, args.catalog, text)
            rows.append({"sites": n, "seed": seed, "old": old, "new": new, "same": same, "others": others})
            print(
                f"{n} sites seed {seed}: old {old.get('seconds', 0):.1f} s {old['status']}, "
                f"new {new.get('seconds', 0):.1f} s {new['status']}",
                file=sys.stderr,
                flush=True,
            )
    proven = [(r["sites"], r["new"]["seconds"]) for r in rows if r["new"]["status"] == "optimal"]
    res = {
        "rows": rows,
        "exponent_new": exponent(proven),
        "loadavg_start": load,
        "loadavg_end": os.getloadavg(),
        "bench_s": time.perf_counter() - started,
        "command": "python bench/scale.py " + " ".join(sys.argv[1:]),
        "catalog": args.catalog or "shipped",
        "sets": args.set,
    }
    print(table(rows))
    for number, text in enumerate(args.set, 1):
        print(f"set {number}: {text}")
    print(f"growth exponent of today's time in sites (proven sizes): {res['exponent_new']}")
    if args.out != "-":
        path = Path(args.out)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[args.key] = res
        path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


if __name__ == "__main__":
    main()
