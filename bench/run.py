"""Benchmarks: trnplan against the raw solver, CBC and brute force, from one scenario to a 100-site portfolio.

    python bench/run.py --quick          # under a minute: cold start, shipped scenarios, 1-10 sites
    python bench/run.py                  # full: up to 100 sites, CBC, enumeration, Dinkelbach; ~30-60 min

Prints tables and writes bench/results.json. Timings are wall-clock medians over repeats on whatever
machine runs this (noisy on shared boxes: the load average is recorded with the results). Each portfolio
size runs in its own process, so peak memory (max RSS) is that size's alone.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent

HIGHS_OPTIONS = {
    "mip_rel_gap": 0.0,
    "mip_abs_gap": 1e-9,
    "threads": 1,
    "random_seed": 0,
}  # as trnplan's solve


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# --- worker: one portfolio size in a fresh process -------------------------------------------------


def worker(args: argparse.Namespace) -> None:
    """Plan one generated portfolio with trnplan (phases timed), then solve the same model from MPS with
    HiGHS alone and, if asked, with CBC. Writes a JSON dict to args.json_out."""
    import resource

    from trnplan.testkit.portfolio import write_portfolio

    out: dict[str, Any] = {"sites": args.sites, "seed": args.seed, "objective": args.objective}
    t_import = time.perf_counter()
    import trnplan.optimize as opt
    from trnplan.errors import InfeasibleError, SolverError
    from trnplan.plan import plan_scenario
    from trnplan.specs.load import load_specs

    out["import_s"] = time.perf_counter() - t_import
    tmp = Path(tempfile.mkdtemp(prefix="trnplan-bench-"))
    share = None if args.demand_share <= 0 else args.demand_share
    scenario_id = write_portfolio(args.sites, tmp, args.seed, demand_share=share, objective=args.objective)
    catalog = load_specs([tmp])

    phases = {"build_s": 0.0, "solve_s": 0.0}
    models: list[Any] = []
    results: list[Any] = []
    real_build, real_solve = opt.build_model, opt.solve

    def build(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        model = real_build(*a, **k)
        phases["build_s"] += time.perf_counter() - t
        models.append(model)
        return model

    def solve(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        result = real_solve(*a, **k)
        phases["solve_s"] += time.perf_counter() - t
        results.append(result)
        return result

    opt.build_model, opt.solve = build, solve  # type: ignore[assignment]
    t = time.perf_counter()
    try:
        plan = plan_scenario(catalog, scenario_id, time_limit=args.time_limit, alternatives=0)
        assert plan.solver is not None and plan.objective is not None
        out.update(
            status=plan.solver.status,
            mip_gap=plan.solver.mip_gap,
            objective_value=plan.objective.value,
            tco_usd=plan.totals.tco_usd,
            sites_used=len(plan.sites),
            dinkelbach_iterations=plan.solver.dinkelbach_iterations,
        )
    except (SolverError, InfeasibleError) as exc:
        out.update(status=type(exc).__name__, error=str(exc)[:200])
    out["total_s"] = time.perf_counter() - t
    opt.build_model, opt.solve = real_build, real_solve  # type: ignore[assignment]
    out.update(phases)
    out["extract_s"] = max(0.0, out["total_s"] - phases["build_s"] - phases["solve_s"])
    out["solves"] = len(results)
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model = models[0]
    out["variables"] = len(model.prob.variables())
    out["constraints"] = len(model.prob.constraints)
    out["integer_variables"] = sum(1 for v in model.prob.variables() if v.cat == "Integer")

    if args.mps:
        import highspy

        from trnplan.optimize.model import set_objective

        set_objective(model, "min_tco")
        mps = tmp / "model.mps"
        t = time.perf_counter()
        model.prob.writeMPS(str(mps))
        out["write_mps_s"] = time.perf_counter() - t
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        t = time.perf_counter()
        h.readModel(str(mps))
        for key, value in HIGHS_OPTIONS.items():
            h.setOptionValue(key, value)
        if args.time_limit:
            h.setOptionValue("time_limit", float(args.time_limit))
        h.run()
        out["highs_mps_s"] = time.perf_counter() - t
        info = h.getInfo()
        out["highs_mps_status"] = str(h.getModelStatus()).split(".")[-1]
        out["highs_mps_objective_usd"] = info.objective_function_value * 1e6
        out["highs_mps_gap"] = info.mip_gap
        out["highs_mps_nodes"] = info.mip_node_count
    if args.cbc_limit:
        from trnplan.optimize.model import set_objective
        from trnplan.optimize.solve import solve as plain_solve

        set_objective(model, "min_tco")
        t = time.perf_counter()
        result = plain_solve(model.prob, "cbc", args.cbc_limit)
        out["cbc_s"] = time.perf_counter() - t
        out["cbc_status"] = result.status.value
        out["cbc_objective_usd"] = None if result.objective is None else result.objective * 1e6
    shutil.rmtree(tmp, ignore_errors=True)
    Path(args.json_out).write_text(json.dumps(out, sort_keys=True))


def run_worker(
    sites: int,
    seed: int,
    time_limit: float,
    *,
    mps: bool,
    cbc_limit: float,
    share: float,
    objective: str = "min_tco",
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        json_out = Path(tmp) / "out.json"
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            "--sites",
            str(sites),
            "--seed",
            str(seed),
            "--time-limit",
            str(time_limit),
            "--cbc-limit",
            str(cbc_limit),
            "--demand-share",
            str(share),
            "--objective",
            objective,
            "--json-out",
            str(json_out),
        ]
        if mps:
            cmd.append("--mps")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not json_out.exists():
            return {"sites": sites, "status": "crashed", "error": (proc.stderr or proc.stdout)[-400:]}
        return dict(json.loads(json_out.read_text()))


# --- sections --------------------------------------------------------------------------------------


def trnplan_command() -> list[str]:
    script = Path(sys.executable).parent / "trnplan"
    return [str(script)] if script.exists() else [sys.executable, "-m", "trnplan"]


def timed_run(cmd: list[str], cwd: str | None = None) -> tuple[float, int]:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)
    return time.perf_counter() - t, proc.returncode


def cold_start(repeats: int) -> dict[str, Any]:
    tp = trnplan_command()
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import typer"': [sys.executable, "-c", "import typer"],
        "trnplan --help": tp + ["--help"],
        "trnplan show forms": tp + ["show", "forms"],
    }
    out: dict[str, Any] = {"runs": {}}
    with tempfile.TemporaryDirectory() as cwd:  # no ./specs here: the bundled catalog, as a user would run it
        for _ in range(repeats):
            for name, cmd in cases.items():
                seconds, code = timed_run(cmd, cwd)
                out["runs"].setdefault(name, []).append(seconds)
                out.setdefault("exit_codes", {})[name] = code
    out["median_s"] = {name: median(v) for name, v in out["runs"].items()}
    m = out["median_s"]
    out["help_vs_typer"] = m["trnplan --help"] / m['python -c "import typer"']
    out["help_vs_python"] = m["trnplan --help"] / m["python -c pass"]
    out["show_vs_typer"] = m["trnplan show forms"] / m['python -c "import typer"']
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "trnplan", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, NO_COLOR="1"),
    )
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    out["help_imports"] = {
        name: any(m == name or m.startswith(name + ".") for m in modules)
        for name in ("pulp", "highspy", "numpy", "rich", "pydantic", "yaml")
    }
    del out["runs"]
    return out


def shipped_scenarios(repeats: int) -> list[dict[str, Any]]:
    from trnplan.specs.load import load_specs

    catalog = load_specs()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scenario_id in sorted(catalog.scenarios):
            times, code = [], 0
            for _ in range(repeats):
                seconds, code = timed_run(trnplan_command() + ["optimize", scenario_id, "--plans", tmp], tmp)
                times.append(seconds)
            rows.append(
                {
                    "scenario": scenario_id,
                    "objective": catalog.scenarios[scenario_id].objective,
                    "e2e_s": median(times),
                    "exit_code": code,
                    **inprocess_breakdown(catalog, scenario_id),
                }
            )
    return rows


def inprocess_breakdown(catalog: Any, scenario_id: str) -> dict[str, Any]:
    """Solves and solver time of one in-process `optimize` (default alternatives), to explain the e2e time."""
    import trnplan.optimize as opt
    from trnplan.plan import plan_scenario

    log: list[float] = []
    real = opt.solve

    def solve(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        result = real(*a, **k)
        log.append(time.perf_counter() - t)
        return result

    opt.solve = solve  # type: ignore[assignment]
    try:
        t = time.perf_counter()
        plan = plan_scenario(catalog, scenario_id)
        total = time.perf_counter() - t
    finally:
        opt.solve = real  # type: ignore[assignment]
    assert plan.solver is not None
    return {
        "inprocess_s": total,
        "solves": len(log),
        "solver_s": sum(log),
        "alternatives": len(plan.alternatives),
        "status": plan.solver.status,
        "dinkelbach_iterations": plan.solver.dinkelbach_iterations,
    }


def portfolio(
    sizes: list[int], repeats: int, time_limit: float, cbc_max: int, cbc_limit: float, share: float, seed: int
) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        runs = []
        for r in range(repeats):
            runs.append(
                run_worker(
                    n,
                    seed,
                    time_limit,
                    mps=True,
                    cbc_limit=cbc_limit if (n <= cbc_max and r == 0) else 0,
                    share=share,
                )
            )
            print(
                f"  portfolio {n} sites, run {r + 1}: {summary_line(runs[-1])}", file=sys.stderr, flush=True
            )
            if runs[-1].get("total_s", 0) > 60 or runs[-1].get("status") == "crashed":
                break  # one run of a slow size is its measurement; repeats would only repeat the time limit
        rows.append(merge_runs(runs))
    return rows


def summary_line(run: dict[str, Any]) -> str:
    if run.get("status") == "crashed":
        return "crashed: " + run.get("error", "")[-200:]
    return (
        f"{run['status']} in {run['total_s']:.2f} s "
        f"(build {run['build_s']:.2f}, solve {run['solve_s']:.2f}), "
        f"HiGHS from MPS {run.get('highs_mps_s', float('nan')):.2f} s, {run['maxrss_mb']:.0f} MB"
    )


def merge_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the timings over repeats; everything else from the first run."""
    row = dict(runs[0])
    row["repeats"] = len(runs)
    for key in ("total_s", "build_s", "solve_s", "extract_s", "highs_mps_s", "write_mps_s", "import_s"):
        values = [r[key] for r in runs if key in r]
        if values:
            row[key] = median(values)
    row["maxrss_mb"] = max((r.get("maxrss_mb", 0.0) for r in runs), default=0.0)
    if "highs_mps_s" in row and row.get("total_s"):
        row["overhead_ratio"] = row["total_s"] / row["highs_mps_s"]
        row["build_extract_share"] = (row["build_s"] + row["extract_s"]) / row["total_s"]
    if "cbc_s" in row and row.get("solve_s"):
        row["cbc_vs_highs"] = row["cbc_s"] / row["solve_s"]
        if row.get("cbc_objective_usd") is not None and row.get("objective_value") is not None:
            cbc, highs = row["cbc_objective_usd"], row["objective_value"]
            row["cbc_same_objective"] = math.isclose(cbc, highs, rel_tol=1e-9)
    return row


def tiny_world(seed: int) -> dict[str, Any]:
    """A small instance in the spirit of tests/test_property_enumeration.py, drawn from a fixed seed."""
    rng = random.Random(seed)
    chips = {
        "c0": {
            "name": "C0",
            "vendor": "V",
            "tdp_w": rng.choice([500, 700, 1000]),
            "dense_tflops": {"fp8": rng.choice([1000, 2500, 5000])},
            "hbm": {"generation": "HBM3E", "stacks": 4, "stack_gb": 24, "pin_gbps": 8.0, "bus_bits": 1024},
            "scale_up": {"pcie_gen": 6, "lanes": 64},
            "scale_out_gbps": rng.choice([100, 200, 400]),
            "unit_usd": rng.choice([5000, 12000, 20000]),
        }
    }
    switches: dict[str, Any] = {
        "u0": {
            "role": "scale_up",
            "protocol": "pcie6",
            "lanes": 160,
            "power_w": 100,
            "unit_usd": 2000,
            "available_from": "2024-01",
        }
    }
    for o in range(2):
        port = rng.choice([100, 200])
        switches[f"o{o}"] = {
            "role": "scale_out",
            "protocol": "ethernet",
            "bandwidth_gbps": port * rng.choice([8, 16, 32]),
            "port_gbps": port,
            "rack_units": 1,
            "power_w": rng.choice([0, 300, 800]),
            "unit_usd": rng.choice([1000, 8000, 30000]),
            "optic_usd": rng.choice([0, 300]),
            "optic_w": rng.choice([0, 8]),
            "available_from": "2020-01",
        }
    forms = {}
    for f in range(3):
        cpr = rng.choice([8, 16, 32])
        form: dict[str, Any] = {
            "chip": "c0",
            "topology": "switched" if f else "torus",
            "chips_per_rack": cpr,
            "racks_per_unit": 1,
            "domain_chips": cpr,
            "cooling": [["air"], ["liquid"], ["air", "liquid"]][f],
            "rack_overhead_kw": rng.choice([0, 1.5, 4]),
            "rack_bom": [{"item": "kit", "qty": 1, "unit_usd": rng.choice([0, 5000, 20000])}],
            "endpoint_optics_per_chip": rng.choice([0, 0.5, 1]),
        }
        if f:
            form["scale_up"] = [{"switch": "u0", "per_rack": rng.randint(0, 2)}]
        forms[f"f{f}"] = form
    cooling = {
        "air": {"max_rack_kw": 60, "pue": 1.3, "capex_usd_per_kw": 200},
        "liquid": {"max_rack_kw": 100, "pue": 1.1, "capex_usd_per_kw": 400},
    }
    sites = {
        f"s{s}": {
            "it_power_mw": rng.choice([0.1, 0.2, 0.4]),
            "rack_positions": rng.randint(3, 4),
            "cooling": ["air", "liquid"],
            "electricity_usd_per_kwh": rng.choice([0.04, 0.09]),
            "colocation_usd_per_kw_month": rng.choice([120, 200]),
            "cooling_fixed_usd": {"liquid": rng.choice([10000, 250000])},
        }
        for s in range(2)
    }
    scenario = {
        "sites": sorted(sites),
        "demand": {"chips": rng.choice([16, 32, 48])},
        "objective": "min_tco",
        "as_of": "2026-06",
        "horizon_years": 5,
        "cost_of_capital": 0.08,
        "utilization": 0.8,
        "maintenance_rate": 0.03,
        "fabric": {"cooling": "air"},
    }
    return {
        "chips": chips,
        "forms": forms,
        "switches": switches,
        "cooling": cooling,
        "sites": sites,
        "scenarios": {"p": scenario},
    }


def enumeration(count: int) -> dict[str, Any]:
    from trnplan.errors import InfeasibleError
    from trnplan.plan import plan_scenario
    from trnplan.testkit.builders import catalog_from_dict
    from trnplan.testkit.oracle import best_plan

    rows = []
    for seed in range(count):
        catalog = catalog_from_dict(tiny_world(seed))
        t = time.perf_counter()
        truth = best_plan(catalog, "p")
        brute_s = time.perf_counter() - t
        t = time.perf_counter()
        try:
            objective = plan_scenario(catalog, "p", alternatives=0).objective
            value: float | None = objective.value if objective else None
        except InfeasibleError:
            value = None
        milp_s = time.perf_counter() - t
        expected = None if truth is None else truth[0]
        equal = (value is None and expected is None) or (
            value is not None
            and expected is not None
            and math.isclose(value, expected, rel_tol=1e-6, abs_tol=0.02)
        )
        rows.append(
            {
                "seed": seed,
                "brute_s": brute_s,
                "milp_s": milp_s,
                "milp_usd": value,
                "brute_usd": expected,
                "equal": equal,
            }
        )
    return {
        "instances": rows,
        "all_equal": all(r["equal"] for r in rows),
        "brute_median_s": median([r["brute_s"] for r in rows]),
        "milp_median_s": median([r["milp_s"] for r in rows]),
        "ratio": median([r["brute_s"] for r in rows]) / median([r["milp_s"] for r in rows]),
    }


def dinkelbach(sizes: list[int], time_limit: float, share: float, seed: int) -> list[dict[str, Any]]:
    from trnplan.plan import plan_scenario
    from trnplan.specs.load import load_specs

    catalog = load_specs()
    rows = []
    for scenario_id in sorted(catalog.scenarios):
        if catalog.scenarios[scenario_id].objective == "max_perf_per_tco":
            t = time.perf_counter()
            plan = plan_scenario(catalog, scenario_id, alternatives=0)
            assert plan.solver is not None
            rows.append(
                {
                    "case": scenario_id,
                    "iterations": plan.solver.dinkelbach_iterations,
                    "seconds": time.perf_counter() - t,
                    "status": plan.solver.status,
                }
            )
    for n in sizes:
        run = run_worker(
            n, seed, time_limit, mps=False, cbc_limit=0, share=share, objective="max_perf_per_tco"
        )
        rows.append(
            {
                "case": f"portfolio {n} sites",
                "iterations": run.get("dinkelbach_iterations"),
                "seconds": run.get("total_s"),
                "status": run.get("status"),
                "solves": run.get("solves"),
            }
        )
    return rows


# --- report ----------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import highspy
    import pulp

    cpu = ""
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)  # highspy prints a banner on the first Highs() of a process
        h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pulp": pulp.__version__,
        "highspy": h.version() if hasattr(h, "version") else "?",
        "loadavg_start": os.getloadavg(),
    }


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:,.{digits}f}"
    return str(value)


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    cs = res.get("cold_start")
    if cs:
        out.append(
            {
                "target": "--help never imports the solver",
                "figure": f"pulp imported: {cs['help_imports']['pulp']}, "
                f"highspy: {cs['help_imports']['highspy']}",
                "met": not (cs["help_imports"]["pulp"] or cs["help_imports"]["highspy"]),
            }
        )
        out.append(
            {
                "target": '--help <= 1.5x `python -c "import typer"`',
                "figure": f"{cs['help_vs_typer']:.2f}x",
                "met": cs["help_vs_typer"] <= 1.5,
            }
        )
    if res.get("scenarios"):
        worst = max(res["scenarios"], key=lambda r: r["e2e_s"])
        out.append(
            {
                "target": "a shipped scenario plans end to end in about a second",
                "figure": f"slowest {worst['scenario']} {worst['e2e_s']:.2f} s",
                "met": worst["e2e_s"] <= 1.5,
            }
        )
    by_n = {r["sites"]: r for r in res.get("portfolio", []) if r.get("status") != "crashed"}
    if 50 in by_n:
        r = by_n[50]
        out.append(
            {
                "target": "50 sites proven optimal in < 10 s",
                "figure": f"{r['status']} in {r['total_s']:.1f} s",
                "met": r["status"] == "optimal" and r["total_s"] < 10,
            }
        )
        out.append(
            {
                "target": "50 sites: build + extraction < 25% of total",
                "figure": f"{100 * r.get('build_extract_share', float('nan')):.1f}%",
                "met": r.get("build_extract_share", 1) < 0.25,
            }
        )
    sizes = sorted(n for n in by_n if n >= 5 and by_n[n]["status"] == "optimal")
    if len(sizes) >= 2:
        a, b = sizes[0], sizes[-1]
        slope = math.log(by_n[b]["total_s"] / by_n[a]["total_s"]) / math.log(b / a)
        out.append(
            {
                "target": "time grows no worse than about linearly in sites",
                "figure": f"exponent {slope:.2f} from {a} to {b} sites (proven optimal sizes)",
                "met": slope <= 1.3,
            }
        )
    if 100 in by_n:
        r = by_n[100]
        out.append(
            {
                "target": "100 sites under 1 GB",
                "figure": f"{r['maxrss_mb']:.0f} MB max RSS",
                "met": r["maxrss_mb"] < 1024,
            }
        )
    return out


def print_report(res: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console(width=160)
    m = res["machine"]
    console.print(
        f"[bold]trnplan bench[/] ({res['mode']}): {m['nproc']} cores, {m['cpu']}, Python {m['python']}, "
        f"PuLP {m['pulp']}, highspy {m['highspy']}, load {m['loadavg_start'][0]:.2f}"
    )
    if "cold_start" in res:
        cs = res["cold_start"]
        console.print(cold_start_table(cs))
        console.print(
            f"--help / import typer {cs['help_vs_typer']:.2f}x, --help / python {cs['help_vs_python']:.2f}x, "
            f"show forms / import typer {cs['show_vs_typer']:.2f}x; --help imports "
            + ", ".join(k for k, v in cs["help_imports"].items() if v)
        )
    if res.get("scenarios"):
        console.print(scenarios_table(res["scenarios"]))
    if res.get("portfolio"):
        console.print(portfolio_table(res["portfolio"]))
    if res.get("enumeration"):
        e = res["enumeration"]
        console.print(
            f"MILP vs exhaustive enumeration: {len(e['instances'])} instances, all objectives equal: "
            f"{e['all_equal']}; median brute force {e['brute_median_s']:.3f} s, "
            f"MILP {e['milp_median_s']:.3f} s "
            f"(brute / MILP {e['ratio']:.1f}x)"
        )
    if res.get("dinkelbach"):
        console.print(dinkelbach_table(res["dinkelbach"]))
    console.print(targets_table(res["targets"]))


def cold_start_table(cs: dict[str, Any]) -> Any:
    from rich.table import Table

    t = Table(title="Cold start (median wall time)")
    t.add_column("command")
    t.add_column("ms", justify="right")
    for name, seconds in cs["median_s"].items():
        t.add_row(name, fmt(seconds * 1000, 0))
    return t


def scenarios_table(rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(title="Shipped scenarios: `trnplan optimize SCENARIO` end to end (subprocess, median)")
    for col in (
        "scenario",
        "objective",
        "e2e s",
        "in-process s",
        "solves",
        "solver s",
        "alternatives",
        "Dinkelbach it.",
        "status",
    ):
        t.add_column(col, justify="right" if col.endswith(("s", "it.")) else "left")
    for r in rows:
        t.add_row(
            r["scenario"],
            r["objective"],
            fmt(r["e2e_s"]),
            fmt(r["inprocess_s"]),
            fmt(r["solves"]),
            fmt(r["solver_s"]),
            fmt(r["alternatives"]),
            fmt(r["dinkelbach_iterations"]),
            r["status"],
        )
    return t


def portfolio_table(rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(
        title="Portfolios (min TCO, gap 0): trnplan `optimize` (no alternatives) "
        "vs HiGHS on the exported MPS"
    )
    for col in (
        "sites",
        "vars",
        "rows",
        "int",
        "build s",
        "solve s",
        "extract s",
        "total s",
        "status",
        "gap",
        "used",
        "HiGHS MPS s",
        "MPS status",
        "overhead",
        "MB",
        "CBC s",
        "CBC status",
    ):
        t.add_column(col, justify="left" if col in ("status", "MPS status", "CBC status") else "right")
    for r in rows:
        if r.get("status") == "crashed":
            t.add_row(str(r["sites"]), *["-"] * 7, "crashed", *["-"] * 8)
            continue
        t.add_row(
            str(r["sites"]),
            fmt(r["variables"]),
            fmt(r["constraints"]),
            fmt(r["integer_variables"]),
            fmt(r["build_s"]),
            fmt(r["solve_s"]),
            fmt(r["extract_s"]),
            fmt(r["total_s"]),
            r["status"],
            fmt(r.get("mip_gap"), 6),
            fmt(r.get("sites_used")),
            fmt(r.get("highs_mps_s")),
            str(r.get("highs_mps_status", "-")),
            fmt(r.get("overhead_ratio")),
            fmt(r["maxrss_mb"], 0),
            fmt(r.get("cbc_s")),
            str(r.get("cbc_status", "-")) + cbc_note(r),
        )
    return t


def dinkelbach_table(rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(title="Dinkelbach (max_perf_per_tco)")
    for col in ("case", "iterations", "s", "status"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["case"], fmt(r["iterations"]), fmt(r["seconds"]), str(r["status"]))
    return t


def targets_table(rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(title="Targets (issue 5)")
    for col in ("target", "figure", "met"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["target"], r["figure"], "yes" if r["met"] else "[bold]NO[/]")
    return t


def cbc_note(row: dict[str, Any]) -> str:
    if "cbc_same_objective" not in row:
        return ""
    return ", same objective" if row["cbc_same_objective"] else ", DIFFERENT objective"


def markdown(res: dict[str, Any]) -> str:
    """The results as Markdown tables, for bench/README.md."""
    m = res["machine"]
    lines = [
        f"Mode {res['mode']}; {m['nproc']} cores ({m['cpu']}), Python {m['python']}, PuLP {m['pulp']}, "
        f"highspy {m['highspy']}; load average {m['loadavg_start'][0]:.2f} at start, "
        f"{m['loadavg_end'][0]:.2f} at end; demand share {res['demand_share']}, seed {res['seed']}, "
        f"time limit {res['time_limit_s']:g} s per solve, "
        f"{res['repeats']} repeats (1 for sizes over 60 s); bench took {res['bench_s'] / 60:.1f} min.",
        "",
    ]
    if "sections_rerun" in res:
        rerun = res["sections_rerun"]
        lines += [
            f"Re-run later on the final code: {', '.join(rerun['sections'])} (load average "
            f"{rerun['machine']['loadavg_start'][0]:.2f} at start).",
            "",
        ]
    if "cold_start" in res:
        cs = res["cold_start"]
        lines += ["| command | median ms |", "|---|---:|"]
        lines += [f"| `{name}` | {seconds * 1000:.0f} |" for name, seconds in cs["median_s"].items()]
        lines += [
            "",
            f"`--help` / `import typer` = {cs['help_vs_typer']:.2f}x; `--help` / `python -c pass` = "
            f"{cs['help_vs_python']:.1f}x; `show forms` / `import typer` = {cs['show_vs_typer']:.2f}x. "
            "`--help` "
            "imports: " + ", ".join(k for k, v in cs["help_imports"].items() if v) + " (not pulp, highspy).",
            "",
        ]
    if res.get("scenarios"):
        lines += [
            "| scenario | objective | e2e s (subprocess) | in-process s | solves | solver s "
            "| Dinkelbach it. |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['scenario']} | {r['objective']} | {r['e2e_s']:.2f} | {r['inprocess_s']:.2f} "
            f"| {r['solves']} | "
            f"{r['solver_s']:.2f} | {fmt(r['dinkelbach_iterations'])} |"
            for r in res["scenarios"]
        ]
        lines.append("")
    if res.get("portfolio"):
        lines += [
            "| sites | vars | rows | int | build s | solve s | extract s | total s | status | gap "
            "| sites used | "
            "HiGHS MPS s | MPS status | trnplan / HiGHS | max RSS MB | CBC s | CBC status |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---|",
        ]
        for r in res["portfolio"]:
            if r.get("status") == "crashed":
                lines.append(f"| {r['sites']} | crashed |" + " |" * 15)
                continue
            lines.append(
                f"| {r['sites']} | {r['variables']} | {r['constraints']} | {r['integer_variables']} "
                f"| {r['build_s']:.2f} | {r['solve_s']:.2f} | {r['extract_s']:.2f} | {r['total_s']:.2f} "
                f"| {r['status']} | {fmt(r.get('mip_gap'), 6)} | {fmt(r.get('sites_used'))} "
                f"| {fmt(r.get('highs_mps_s'))} | {r.get('highs_mps_status', '-')} "
                f"| {fmt(r.get('overhead_ratio'))} | {r['maxrss_mb']:.0f} | {fmt(r.get('cbc_s'))} "
                f"| {r.get('cbc_status', '-')}{cbc_note(r)} |"
            )
        lines.append("")
    if res.get("enumeration"):
        e = res["enumeration"]
        lines += [
            f"MILP vs exhaustive enumeration (trnplan/testkit/oracle.py `best_plan`): {len(e['instances'])} "
            "instances, all "
            f"objectives equal: {e['all_equal']}; median brute force {e['brute_median_s']:.3f} s, MILP "
            f"{e['milp_median_s']:.3f} s (brute / MILP {e['ratio']:.1f}x).",
            "",
        ]
    if res.get("dinkelbach"):
        lines += ["| Dinkelbach case | iterations | s | status |", "|---|---:|---:|---|"]
        lines += [
            f"| {r['case']} | {fmt(r['iterations'])} | {fmt(r['seconds'])} | {r['status']} |"
            for r in res["dinkelbach"]
        ]
        lines.append("")
    lines += ["| target | figure | met |", "|---|---|---|"]
    lines += [
        f"| {t['target']} | {t['figure']} | {'yes' if t['met'] else '**no**'} |" for t in res["targets"]
    ]
    return "\n".join(lines) + "\n"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="under a minute: small sizes, one repeat")
    p.add_argument(
        "--sizes", help="portfolio sizes, comma-separated (default 1,5,10 quick; 1,5,10,25,50,100 full)"
    )
    p.add_argument("--repeats", type=int, help="repeats per measurement (default 1 quick, 3 full)")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per solve (default 120)")
    p.add_argument(
        "--demand-share",
        type=float,
        default=0.7,
        help="portfolio demand as a share of its capacity; 0 = the first, power-based rule",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--only", help="sections, comma-separated: cold,scenarios,portfolio,enumeration,dinkelbach"
    )
    p.add_argument("--out", default=str(BENCH / "results.json"), help="results file ('-' for none)")
    p.add_argument(
        "--markdown", metavar="RESULTS", help="print an existing results file as Markdown tables and exit"
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--sites", type=int, help=argparse.SUPPRESS)
    p.add_argument("--mps", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--cbc-limit", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--objective", default="min_tco", help=argparse.SUPPRESS)
    p.add_argument("--json-out", help=argparse.SUPPRESS)
    return p.parse_args()


def run_sections(args: argparse.Namespace, res: dict[str, Any], sections: set[str]) -> None:
    """Measure each asked-for section into `res`."""
    quick = args.quick
    if "cold" in sections:
        print("cold start...", file=sys.stderr, flush=True)
        res["cold_start"] = cold_start(max(3, res["repeats"]) if quick else 7)
    if "scenarios" in sections:
        print("shipped scenarios...", file=sys.stderr, flush=True)
        res["scenarios"] = shipped_scenarios(res["repeats"])
    if "portfolio" in sections:
        print("portfolios...", file=sys.stderr, flush=True)
        res["portfolio"] = portfolio(
            res["sizes"],
            res["repeats"],
            args.time_limit,
            cbc_max=5 if quick else 25,
            cbc_limit=10.0 if quick else 60.0,
            share=args.demand_share,
            seed=args.seed,
        )
    if "enumeration" in sections:
        print("enumeration...", file=sys.stderr, flush=True)
        res["enumeration"] = enumeration(3 if quick else 10)
    if "dinkelbach" in sections:
        print("Dinkelbach...", file=sys.stderr, flush=True)
        res["dinkelbach"] = dinkelbach(
            [] if quick else [5, 10], args.time_limit, args.demand_share, args.seed
        )


def main() -> None:
    args = parse_args()
    if args.worker:
        worker(args)
        return
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())), end="")
        return
    quick = args.quick
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else ([1, 5, 10] if quick else [1, 5, 10, 25, 50, 100])
    )
    sections = (
        set(args.only.split(","))
        if args.only
        else {"cold", "scenarios", "portfolio", "enumeration", "dinkelbach"}
    )
    res: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "machine": machine(),
        "demand_share": args.demand_share,
        "seed": args.seed,
        "time_limit_s": args.time_limit,
        "sizes": sizes,
        "repeats": args.repeats or (1 if quick else 3),
    }
    started = time.perf_counter()
    run_sections(args, res, sections)
    res["targets"] = targets(res)
    res["machine"]["loadavg_end"] = os.getloadavg()
    res["bench_s"] = time.perf_counter() - started
    print_report(res)
    print(f"bench took {res['bench_s']:.0f} s", file=sys.stderr)
    if args.out != "-":
        Path(args.out).write_text(json.dumps(res, indent=2, sort_keys=True, default=str) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
