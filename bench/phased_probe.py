"""Where a phased portfolio's proof time goes: the phased MILP against relaxations of it (issue 17).

    python bench/phased_probe.py                          # 10 sites x 8 quarters, seed 0; ~10 min
    python bench/phased_probe.py --case 10x4 --limit 60   # a quick look
    python bench/phased_probe.py --option mip_pscost_minreliable=16 --option "mip_allow_restart=false"
    python bench/phased_probe.py --case 50x8 --gap 0.0001 --limit 150 --relaxed-start

Builds the phased model of a generated portfolio (`trnplan.testkit.portfolio.phased_portfolio_specs`) as
`trnplan optimize` does at 10 sites (per-period capacity cuts, no MIP start), and solves it and its
variants in HiGHS alone, one after the other, each from scratch with trnplan's settings (one thread,
seed 0, gap 0, RENS off):
  full            the model
  counts relaxed  every general integer continuous (the unit counts n[s,i,p] and the scale-out switch
                  counts T[s,p]), every binary kept (fabric tiers, scale-out type, cooling): a lower
                  bound, the model without the counts' integrality
  T relaxed       only the switch counts T continuous: a lower bound
  binaries fixed  every binary fixed at full's best plan: the counts' own integer problem
  tiers fixed     only the fabric tier binaries y[s,o,t,p] fixed there (scale-out type and cooling free)
  types fixed     only the scale-out type binaries x[s,o] fixed there (tiers and cooling free)
  mir             full with, per period, the mixed-integer rounding row of its demand row at each rack's
                  FP8 PFLOPs (sum_j (floor(a_j/d) + min(f_j, f)/f) n_j >= ceil(D/d), f = frac(D/d), f_j =
                  frac(a_j/d)): valid for every plan, so the same optimum, a tighter LP if HiGHS lacks them
With `--option K=V[;K=V...]` (repeatable) it solves *full* and then, instead of the variants above, full
again with each set of HiGHS options on top of trnplan's (one HiGHS option at a time is how they are
measured). With `--relaxed-start` it solves *full*, then builds a plan the other way round: *counts
relaxed* solved (to `--gap`), every binary fixed at its plan and the counts solved whole (*its binaries
fixed*), and *full* again with that plan as HiGHS's start (*full, started*): whether a better first plan
is what a proof within the gap waits for. `--gap` (default 0) is the relative gap of every solve.
Reports seconds, status, objective and dual bound (M USD), nodes, and the root LP. Timings are printed,
never asserted in tests.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from typing import Any


def build_highs(data: dict[str, Any]) -> Any:
    """The phased model as `trnplan optimize` builds it, as a highspy model (written and read back as MPS,
    so names are PuLP's)."""
    import highspy

    from trnplan.optimize import build_model
    from trnplan.optimize.highs import silence_banner
    from trnplan.optimize.model import set_objective
    from trnplan.testkit.portfolio import load_portfolio

    silence_banner()
    catalog = load_portfolio(data)
    (scenario_id,) = catalog.scenarios
    model = build_model(catalog, scenario_id, start=False)
    set_objective(model, catalog.scenarios[scenario_id].objective)
    with tempfile.TemporaryDirectory() as tmp:
        mps = Path(tmp) / "model.mps"
        model.prob.writeMPS(str(mps))
        h = highspy.Highs()  # type: ignore[no-untyped-call]
        h.setOptionValue("output_flag", False)
        h.readModel(str(mps))
    return h


def _solve(h: Any, limit: float, gap: float = 0.0, start: list[float] | None = None) -> dict[str, Any]:
    if start is not None:
        h.setSolution(highs_solution(start))
    for key, value in (
        ("mip_rel_gap", gap),
        ("mip_abs_gap", 1e-9),
        ("threads", 1),
        ("random_seed", 0),
        ("mip_heuristic_run_rens", False),
        ("time_limit", float(limit)),
    ):
        h.setOptionValue(key, value)
    began = time.perf_counter()
    h.run()
    info = h.getInfo()
    return {
        "seconds": time.perf_counter() - began,
        "status": h.modelStatusToString(h.getModelStatus()),
        "objective": info.objective_function_value,
        "bound": info.mip_dual_bound,
        "nodes": info.mip_node_count,
        "values": list(h.getSolution().col_value),
    }


def highs_solution(values: list[float]) -> Any:
    import highspy

    solution = highspy.HighsSolution()  # type: ignore[no-untyped-call]
    solution.col_value = list(values)
    solution.value_valid = True
    return solution


def copy_of(h: Any) -> Any:
    """A fresh HiGHS instance holding the same model (names included), nothing solved yet."""
    import highspy

    out = highspy.Highs()  # type: ignore[no-untyped-call]
    out.setOptionValue("output_flag", False)
    out.passModel(h.getLp())
    return out


def _root_lp(h: Any) -> float:
    """The LP relaxation's optimum (a copy of the model with every integrality dropped)."""
    relaxed = copy_of(h)
    relax(relaxed, list(range(relaxed.getNumCol())))
    relaxed.run()
    return float(relaxed.getInfo().objective_function_value)


def _kinds(h: Any) -> tuple[list[int], list[int]]:
    """The columns of the general integers (unit and switch counts) and of the binaries."""
    import highspy

    lp = h.getLp()
    counts: list[int] = []
    binaries: list[int] = []
    for j, (kind, upper) in enumerate(zip(lp.integrality_, lp.col_upper_, strict=True)):
        if kind != highspy.HighsVarType.kInteger:
            continue
        (binaries if upper <= 1 else counts).append(j)
    return counts, binaries


def relax(h: Any, columns: list[int]) -> None:
    import highspy
    import numpy as np

    h.changeColsIntegrality(
        len(columns),
        np.array(columns, dtype=np.int32),
        np.array([highspy.HighsVarType.kContinuous] * len(columns)),
    )


def fix_binaries(h: Any, binaries: list[int], values: list[float]) -> None:
    for j in binaries:
        v = float(round(values[j]))
        h.changeColBounds(j, v, v)


def named(h: Any, columns: list[int], prefix: str) -> list[int]:
    """The columns among `columns` whose PuLP name starts with `prefix`."""
    return [j for j in columns if h.getColName(j)[1].startswith(prefix)]


def add_mir_rows(h: Any) -> int:
    """Per demand row (sum a_j n_j >= D, every n_j a non-negative integer) and each distinct a_j as the
    divisor d: the MIR row above. Returns how many rows were added."""
    import highspy
    import numpy as np

    lp = h.getLp()
    names = [h.getRowName(r)[1] for r in range(h.getNumRow())]
    demand: dict[int, list[tuple[int, float]]] = {
        r: [] for r, name in enumerate(names) if name.startswith("demand_")
    }
    matrix = lp.a_matrix_
    starts, index, value = list(matrix.start_), list(matrix.index_), list(matrix.value_)
    for j in range(h.getNumCol()):
        for k in range(starts[j], starts[j + 1]):
            if index[k] in demand:
                demand[index[k]].append((j, value[k]))
    added = 0
    kinds, lowers, rhs_of = lp.integrality_, lp.col_lower_, lp.row_lower_  # each read copies the whole list
    for r, terms in demand.items():
        if not all(kinds[j] == highspy.HighsVarType.kInteger and lowers[j] >= 0 for j, _ in terms):
            continue  # a continuous term: the rounding is not valid as written
        rhs = rhs_of[r]
        for d in sorted({round(a, 9) for _, a in terms if a > 0}):
            f = rhs / d - math.floor(rhs / d)
            if f < 1e-6 or f > 1 - 1e-6:
                continue
            idx, val = [], []
            for j, a in terms:
                whole, frac = divmod(a / d, 1.0)
                if frac > 1 - 1e-9:
                    whole, frac = whole + 1, 0.0
                c = whole + min(frac, f) / f
                if c > 0:
                    idx.append(j)
                    val.append(c)
            h.addRow(
                float(math.ceil(rhs / d)),
                highspy.kHighsInf,
                len(idx),
                np.array(idx, dtype=np.int32),
                np.array(val),
            )
            added += 1
    return added


def parse_options(text: str) -> list[tuple[str, Any]]:
    """`K=V;K=V` as HiGHS option values: true / false, an int, a float, else the text itself."""
    out: list[tuple[str, Any]] = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--option {item!r}: expected KEY=VALUE")
        value: Any = raw.strip()
        if value.lower() in ("true", "false"):
            value = value.lower() == "true"
        else:
            for kind in (int, float):
                try:
                    value = kind(value)
                    break
                except ValueError:
                    continue
        out.append((key.strip(), value))
    return out


def with_options(h: Any, options: list[tuple[str, Any]]) -> Any:
    """A copy of the model with the given HiGHS options set (trnplan's own are set again by `_solve`)."""
    import highspy

    out = copy_of(h)
    for key, value in options:
        if out.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise SystemExit(f"--option {key}={value}: HiGHS refuses it")
    return out


def main() -> None:
    from trnplan.testkit.portfolio import phased_portfolio_specs

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", default="10x8", help="SITESxQUARTERS")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=float, default=200.0, help="seconds per solve")
    p.add_argument("--option", action="append", default=[], help="K=V[;K=V]: full with these HiGHS options")
    p.add_argument("--gap", type=float, default=0.0, help="relative gap of every solve (default 0)")
    p.add_argument("--relaxed-start", action="store_true", help="full, then full started from counts relaxed")
    args = p.parse_args()
    option_sets = [parse_options(text) for text in args.option]
    sites, quarters = (int(x) for x in args.case.split("x"))
    data = phased_portfolio_specs(sites, quarters, args.seed)
    h = build_highs(data)
    variants = [copy_of(h) for _ in range(6)]  # before h is solved
    counts, binaries = _kinds(h)
    switch_counts = named(h, counts, "T_")
    sizes = f"{h.getNumCol()} columns, {h.getNumRow()} rows, {len(binaries)} binaries,"
    print(f"{args.case} seed {args.seed}: {sizes}")
    integers = f"{len(counts)} general integers ({len(switch_counts)} switch counts)"
    print(f"{integers}; LP relaxation {_root_lp(h):.4f} M USD")
    head = f"{'variant':<18} {'status':<18} {'seconds':>8} {'objective':>12} {'bound':>12} {'nodes':>7}"
    print(head)
    print("-" * len(head))

    def show(name: str, row: dict[str, Any]) -> None:
        print(
            f"{name:<18} {row['status'][:18]:<18} {row['seconds']:8.1f} {row['objective']:12.4f} "
            f"{row['bound']:12.4f} {row['nodes']:7d}",
            flush=True,
        )

    if args.relaxed_start:
        relaxed, fixed, started = variants[:3]  # before h is solved
        show("full", _solve(h, args.limit, args.gap))
        relax(relaxed, counts)
        first = _solve(relaxed, args.limit, args.gap)
        show("counts relaxed", first)
        fix_binaries(fixed, binaries, first["values"])
        plan = _solve(fixed, args.limit, args.gap)
        show("its binaries fixed", plan)
        show("full, started", _solve(started, args.limit, args.gap, start=plan["values"]))
        return
    if option_sets:
        tried = [with_options(h, options) for options in option_sets]  # before h is solved
        show("full", _solve(h, args.limit, args.gap))
        for number, copy in enumerate(tried, 1):
            show(f"options {number}", _solve(copy, args.limit, args.gap))
        for number, options in enumerate(option_sets, 1):
            print(f"options {number}: " + "; ".join(f"{k}={v}" for k, v in options))
        return
    full = _solve(h, args.limit, args.gap)
    show("full", full)
    for name, columns in (("counts relaxed", counts), ("T relaxed", switch_counts)):
        relaxed = variants.pop()
        relax(relaxed, columns)
        show(name, _solve(relaxed, args.limit, args.gap))
    for name, columns in (
        ("binaries fixed", binaries),
        ("tiers fixed", named(h, binaries, "y_")),
        ("types fixed", named(h, binaries, "x_")),
    ):
        fixed = variants.pop()
        fix_binaries(fixed, columns, full["values"])
        show(name, _solve(fixed, args.limit, args.gap))
    mir = variants.pop()
    added = add_mir_rows(mir)
    show(f"mir (+{added})", _solve(mir, args.limit, args.gap))


if __name__ == "__main__":
    main()
