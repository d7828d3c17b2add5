"""`trnplan optimize SCENARIO --futures N`: one plan across N futures drawn from the specs' ranges (the
purchases up to the scenario's `decide` shared), its per-future solves on Dask as sweeps' (one after
another in this process without the `dask` extra)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trnplan.cli.common import as_data, echo_err, emit, load_catalog
from trnplan.errors import UsageError, did_you_mean

if TYPE_CHECKING:
    from trnplan.catalog import Catalog
    from trnplan.sweep.grid import Ranged, Run


def parse_risk(text: str | None) -> float | None:
    """`cvar:A` (0 < A < 1) as A; None for none."""
    if text is None:
        return None
    kind, _, level = text.partition(":")
    try:
        value = float(level)
    except ValueError:
        value = -1.0
    if kind.strip().casefold() != "cvar" or not 0 < value < 1:
        raise UsageError(f"--risk takes cvar:A with 0 < A < 1 (cvar:0.9: the mean of the worst 10%), "
                         f"got '{text}'")
    return value


def _mean_overrides(fields: list[Ranged], runs: Sequence[Run]) -> list[str]:
    """Each drawn input at its mean over the futures (whole numbers rounded; a month the mean month,
    rounded to a whole one): the average future."""
    import json

    from trnplan.catalog.months import month_text
    from trnplan.catalog.ranges import as_number

    out = []
    for f in fields:
        mean = sum(as_number(r.set[f.path]) for r in runs) / len(runs)
        value: float | int | str = (month_text(round(mean)) if f.month else round(mean) if f.integer
                                    else float(f"{mean:.9g}"))
        out.append(f"{f.path}={json.dumps(value)}")
    return out


def _solve_futures(
    catalogs: list[Catalog], average: Catalog, scenario: str, shared: int, risk: float | None,
    workers: int | None, solver: str, time_limit: float | None,
) -> Any:
    from trnplan.futures import local_map, plan_across_futures
    from trnplan.sweep.runner import cluster, dask_available

    if not dask_available():
        return plan_across_futures(catalogs, average, scenario, shared, risk=risk, solver=solver,
                                   time_limit=time_limit, mapper=local_map)
    with cluster(workers or os.cpu_count() or 1, None, 10.0) as client:

        def on_dask(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
            return list(client.gather(client.map(fn, items, pure=False)))

        return plan_across_futures(catalogs, average, scenario, shared, risk=risk, solver=solver,
                                   time_limit=time_limit, mapper=on_dask)


def optimize_futures_command(
    scenario: str, n: int, seed: int, risk_text: str | None, *, workers: int | None, out: Path | None,
    fmt: str, solver: str, time_limit: float | None, specs: list[Path] | None, overrides: list[str],
    check: bool = False,
) -> int:
    """Draw the futures, solve them together, price the uncertainty, print the plan (and write `--out`; with
    `check`, compare it with `--out` instead, as `optimize --check` does). The exit code."""
    from trnplan.cli.sweep import _base, _worker_dirs
    from trnplan.futures import futures_plan
    from trnplan.optimize.futures import shared_periods
    from trnplan.specs.load import load_specs
    from trnplan.sweep.grid import ranged_fields, sample_runs

    risk = parse_risk(risk_text)
    if not 1 <= n <= 1000:
        raise UsageError(f"--futures N must be 1 to 1000, got {n}")
    dirs = _worker_dirs(specs)
    catalog, base = _base(dirs, overrides)
    if scenario not in catalog.scenarios:
        raise UsageError(f"unknown scenario '{scenario}'" + did_you_mean(scenario, catalog.scenarios))
    shared = shared_periods(catalog, scenario)
    fields = ranged_fields(catalog, scenario)
    runs = sample_runs(fields, n, seed)
    catalogs = [load_specs(dirs, [*base, *run.overrides]) for run in runs]
    average = load_specs(dirs, [*base, *_mean_overrides(fields, runs)])
    outcome = _solve_futures(catalogs, average, scenario, shared, risk, workers, solver, time_limit)
    plan = futures_plan(load_catalog(specs, overrides), scenario, outcome, catalogs, [r.set for r in runs],
                        seed=seed)
    if check:
        from trnplan.cli.solve import _report_drift

        assert out is not None  # the options' check requires it
        risk_arg = f" --risk {risk_text}" if risk_text else ""
        return _report_drift(plan, out, scenario, f" --futures {n} --seed {seed}{risk_arg} --out {out}")
    if out is not None:
        from trnplan.files import check_writable
        from trnplan.plan.file import write_plan

        check_writable(out)
        write_plan(plan, out)
        echo_err(f"wrote {out}", keep=[out])
    if fmt != "table":
        emit(as_data(plan.to_dict(), fmt))  # type: ignore[arg-type]
        return 0
    from trnplan.render import render_plan
    from trnplan.render.futures import render_futures

    emit(render_plan(plan))
    emit(render_futures(plan))
    return 0
