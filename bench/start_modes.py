"""Could LP bounds replace the start's per-mode MILPs? What a cheaper start could save (issue 17).

    python bench/start_modes.py                                   # shipped catalog, 25 and 50 sites
    python bench/start_modes.py --catalog /tmp/first --sizes 25   # the first catalog (bench/README)

The MIP start (`trnplan/optimize/accelerate/start.py`) solves, per site and fabric mode, the site's MILP
at the coupling rows' duals (`columns.mode_columns`): their bounds fix modes off (a mode whose bound is more
than G = UB - LB above the site's best can hold no plan as good as the start) and their plans are the
master's "fill a cheap tier" columns. This runs `mip_start` as `trnplan optimize` does, timing its four
stages, then solves every mode's LP relaxation at the same duals and counts the modes its bound alone
would fix off with the start's own G. Where LP and MILP bounds fix off the same modes, a start could
solve MILPs only for the rest ("near"), and even that only if it knew G before its first plan (it does
not: G comes from that plan). "most saved" is that share of the per-mode stage less the LPs' seconds on
the two pricing threads: an upper bound on what such a start gains. Seconds are printed, never asserted.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from typing import Any


def probe(sites: int, seed: int, spec_dir: str | None) -> dict[str, Any]:
    import highspy
    import numpy as np

    import trnplan.optimize.accelerate.columns as columns
    import trnplan.optimize.accelerate.start as start_module
    from trnplan.optimize import build_model
    from trnplan.optimize.highs import silence_banner
    from trnplan.optimize.model import set_objective
    from trnplan.specs.load import load_specs
    from trnplan.testkit.portfolio import write_portfolio

    silence_banner()
    with tempfile.TemporaryDirectory() as tmp:
        scenario_id = write_portfolio(sites, Path(tmp), seed, spec_dir=Path(spec_dir) if spec_dir else None)
        catalog = load_specs([tmp])
    model = build_model(catalog, scenario_id, cuts=True, start=False)
    set_objective(model, catalog.scenarios[scenario_id].objective)
    stages = {"generate": 0.0, "mode_columns": 0.0, "_integer_plan": 0.0, "margin_columns": 0.0}
    seen: dict[str, Any] = {}

    def timed(name: str, f: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                out = f(*args, **kwargs)
            finally:
                stages[name] += time.perf_counter() - began
            if name == "mode_columns":
                seen.update(pricings=args[0], coupling=args[1], duals=args[2], bounds=out)
            return out

        return run

    originals = {name: getattr(start_module, name) for name in stages}
    for name, f in originals.items():
        setattr(start_module, name, timed(name, f))
    try:
        began = time.perf_counter()
        start = start_module.mip_start(model)
        start_s = time.perf_counter() - began
    finally:
        for name, f in originals.items():
            setattr(start_module, name, f)
    if start is None or "bounds" not in seen:
        raise SystemExit(f"{sites} sites seed {seed}: no start")
    gap = start_module.gap_of(start.objective, start.bound)
    pricings, coupling, duals, bounds = seen["pricings"], seen["coupling"], seen["duals"], seen["bounds"]
    modes = lp_off = 0
    lp_s = 0.0
    for s, pr in enumerate(pricings):
        h = pr.highs
        n = h.getNumCol()
        kinds = list(h.getLp().integrality_)
        cost = columns.reduced_costs(pr, s, coupling, duals)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(cost, dtype=float))
        if kinds:
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                    np.array([highspy.HighsVarType.kContinuous] * n))
        best = min(bounds[s].values())
        for mode in sorted(pr.block.modes):
            modes += 1
            columns._only(pr, mode)
            began = time.perf_counter()
            h.run()
            lp_s += time.perf_counter() - began
            infeasible = h.getModelStatus() == highspy.HighsModelStatus.kInfeasible
            value = math.inf if infeasible else float(h.getInfo().objective_function_value)
            lp_off += value - best > gap
        columns._only(pr, columns.ANY_MODE)
        if kinds:
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array(kinds))
    return {
        "sites": sites, "seed": seed, "start_s": start_s, **stages, "modes": modes,
        "milp_off": len(start.fix_off), "lp_off": lp_off, "lp_s": lp_s, "gap": gap,
    }


PRICE_THREADS = 2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="25,50")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--catalog", default=None, help="a spec folder whose catalog the portfolios use")
    args = p.parse_args()
    print("| sites | seed | start s | CG / per-mode MILPs / master+polish / margin s | modes | fixed off: "
          "MILP bounds | LP bounds | near | LPs s | most saved |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for sites in (int(x) for x in args.sizes.split(",")):
        for seed in (int(x) for x in args.seeds.split(",")):
            r = probe(sites, seed, args.catalog)
            near = r["modes"] - r["milp_off"]
            # the MILPs of the modes the LPs fix off, less the LPs themselves (on the pricing threads)
            skipped = r["mode_columns"] * min(r["lp_off"], r["milp_off"]) / r["modes"]
            saved = max(0.0, skipped - r["lp_s"] / PRICE_THREADS)
            split = " / ".join(f"{r[k]:.2f}" for k in ("generate", "mode_columns", "_integer_plan",
                                                          "margin_columns"))
            print(f"| {sites} | {seed} | {r['start_s']:.2f} | {split} | {r['modes']} | {r['milp_off']} | "
                  f"{r['lp_off']} | {near} | {r['lp_s']:.2f} | {saved:.2f} s ({saved / r['start_s']:.0%}) |",
                  flush=True)


if __name__ == "__main__":
    main()
