"""The `optimize` command: solve scenarios, write (or, with --check, compare) their plan files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from trnplan.cli.common import (
    DataFormat,
    DataFormatOpt,
    SetOpt,
    SpecsOpt,
    as_data,
    echo_err,
    emit,
    guarded,
    interrupt_after,
    load_catalog,
)
from trnplan.errors import EXIT_DIFFERENT, EXIT_OK, InfeasibleError, SolverError, UsageError, did_you_mean

if TYPE_CHECKING:
    from trnplan.catalog import Catalog
    from trnplan.drift import Drift
    from trnplan.plan.model import Plan

MAX_DRIFT_LINES = 60

SolverName = Literal["highs", "cbc"]


@guarded
def optimize(
    scenario: Annotated[
        str | None, typer.Argument(metavar="SCENARIO", help="Scenario id from the specs.", show_default=False)
    ] = None,
    all_scenarios: Annotated[
        bool, typer.Option("--all", help="Solve every scenario, in sorted order.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Re-solve and compare with the plan file on disk instead of writing it; "
            "exit 1 on any difference (CI drift check).",
        ),
    ] = False,
    plans: Annotated[
        Path, typer.Option("--plans", metavar="DIR", help="Folder of plan files.")
    ] = Path("plans"),
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Plan file to write (one scenario only).",
            show_default=False,
        ),
    ] = None,
    fmt: DataFormatOpt = "table",
    alternatives: Annotated[
        int,
        typer.Option(
            "--alternatives",
            metavar="K",
            min=0,
            max=50,
            help="How many alternatives to list: the best plan without each form, cooling or switch the "
            "plan chooses, ranked.",
        ),
    ] = 3,
    solver: Annotated[
        SolverName, typer.Option("--solver", case_sensitive=False, help="MILP solver.")
    ] = "highs",
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            metavar="SECONDS",
            min=0.01,
            show_default=False,
            help="Stop each solve after this long; a plan found by then is kept, marked unproven.",
        ),
    ] = None,
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Solve a scenario to proven optimality, print the plan and write plans/SCENARIO.yaml.

    With --check, nothing is written: the fresh plan is compared with the file on disk and any
    difference (or a missing file) exits 1 with a short diff. An infeasible scenario writes nothing,
    says what must give, and exits 4. With --all, every scenario is solved and the exit code is the
    highest of them.

    Examples:

        trnplan optimize trn3-100k
        trnplan optimize --all --check
    """
    if all_scenarios == (scenario is not None):
        raise UsageError("give one SCENARIO or --all")
    if out is not None and all_scenarios:
        raise UsageError("--out names one plan file; with --all, use --plans DIR")
    catalog = load_catalog(specs, overrides)
    ids = _scenario_ids(catalog, scenario)
    paths = {sid: out if out is not None else plans / f"{sid}.yaml" for sid in ids}
    run = _Run(check=check, fmt=fmt, solver=solver, time_limit=time_limit, alternatives=alternatives)
    run.prepare(paths)
    for scenario_id, path in paths.items():
        run.solve(catalog, scenario_id, path)
    if check and all_scenarios:
        run.flag_stale(plans, catalog.scenarios)
    run.emit_data(all_scenarios)
    if run.worst:
        raise typer.Exit(run.worst)


def _scenario_ids(catalog: Catalog, scenario: str | None) -> list[str]:
    """The scenario named, or every scenario (sorted) when none is; UsageError for an unknown one."""
    if scenario is None:
        ids = sorted(catalog.scenarios)
        if not ids:
            raise UsageError("the specs define no scenarios")
        return ids
    if scenario not in catalog.scenarios:
        hint = did_you_mean(scenario, catalog.scenarios)
        known = "" if hint else f" (known: {', '.join(sorted(catalog.scenarios)) or 'none'})"
        raise UsageError(f"unknown scenario '{scenario}'{hint}{known}")
    return [scenario]


class _Run:
    """One `optimize` invocation over its scenarios: the plans solved and the exit code of each."""

    def __init__(
        self, *, check: bool, fmt: DataFormat, solver: str, time_limit: float | None, alternatives: int
    ) -> None:
        self.check = check
        self.fmt = fmt
        self.solver = solver
        self.time_limit = time_limit
        self.alternatives = alternatives
        self.codes: list[int] = []
        self.solved: dict[str, Plan] = {}

    @property
    def worst(self) -> int:
        return max(self.codes, default=EXIT_OK)

    def prepare(self, paths: dict[str, Path]) -> None:
        """Fail on an unwritable plan path now, not after the solve (exit 3, naming the path); then import
        the solver, holding a Ctrl-C that arrives meanwhile."""
        from trnplan.files import check_writable

        if not self.check:
            for path in paths.values():
                check_writable(path)
        with interrupt_after():
            import trnplan.optimize  # noqa: F401  (lazy: the only path that imports PuLP and highspy)

    def solve(self, catalog: Catalog, scenario_id: str, path: Path) -> None:
        """Solve one scenario, then check its plan file against it, or write it and print it."""
        from trnplan.plan import build

        try:
            plan = build.plan_scenario(
                catalog,
                scenario_id,
                solver=self.solver,
                time_limit=self.time_limit,
                alternatives=self.alternatives,
            )
        except (InfeasibleError, SolverError) as exc:
            echo_err(_infeasible_text(exc) if isinstance(exc, InfeasibleError) else f"error: {exc}")
            echo_err(f"{path}: not checked" if self.check else f"no plan written for '{scenario_id}'")
            self.codes.append(exc.exit_code)
            return
        warning = _unproven_warning(scenario_id, plan)
        if warning:
            echo_err(warning)
        if self.check:
            self.codes.append(_report_drift(plan, path, scenario_id))
            return
        self._write(plan, path, scenario_id)

    def _write(self, plan: Plan, path: Path, scenario_id: str) -> None:
        from trnplan.plan.file import write_plan

        write_plan(plan, path)
        self.solved[scenario_id] = plan
        if self.fmt == "table":
            from trnplan.render import render_plan

            emit(render_plan(plan))
        echo_err(f"wrote {path}")
        self.codes.append(EXIT_OK)

    def flag_stale(self, plans: Path, scenario_ids: Iterable[str]) -> None:
        """Plan files whose scenario is gone from the specs are drift."""
        from trnplan.drift import stale_plans

        for stale in stale_plans(plans, scenario_ids):
            emit(
                f"{stale}: no scenario '{stale.stem}' in the specs; delete the file or restore the scenario"
            )
            self.codes.append(EXIT_DIFFERENT)

    def emit_data(self, all_scenarios: bool) -> None:
        """The plans written, as JSON or YAML on stdout: keyed by scenario with --all, else the one plan."""
        if self.fmt == "table" or not self.solved:
            return
        if all_scenarios:
            emit(as_data({sid: p.to_dict() for sid, p in self.solved.items()}, self.fmt))
            return
        from trnplan.plan.file import plan_to_yaml

        (only,) = self.solved.values()
        emit(as_data(only.to_dict(), "json") if self.fmt == "json" else plan_to_yaml(only))


def _unproven_warning(scenario_id: str, plan: Plan) -> str | None:
    """The warning for a plan the solver did not prove optimal (it stopped at the time limit)."""
    if plan.solver is None or plan.solver.status == "optimal":
        return None
    from trnplan.numbers import fmt

    gap = plan.solver.mip_gap or 0.0
    return (
        f"WARNING: '{scenario_id}': the solver stopped at the time limit; this plan is feasible but "
        f"NOT proven optimal (status {plan.solver.status}, gap {fmt(gap, 'pct')}). "
        "Raise --time-limit to prove it."
    )


def _infeasible_text(exc: InfeasibleError) -> str:
    """The explanation as a list; an indented line is a detail of the line above it."""
    lines = [f"error: scenario '{exc.scenario}' is infeasible: no plan meets it."]
    for line in exc.explanation:
        if line[:1].isspace():
            lines.append("      " + line.strip())
        else:
            lines.append("  - " + line)
    return "\n".join(lines)


def _report_drift(plan: Plan, path: Path, scenario_id: str) -> int:
    """Compare the fresh plan with its file on disk, print what drifted, and return the exit code."""
    from trnplan.drift import check_drift
    from trnplan.plan.file import plan_to_yaml

    drift = check_drift(plan_to_yaml(plan), path)
    _print_drift(drift, scenario_id)
    return drift.exit_code


def _print_drift(drift: Drift, scenario_id: str) -> None:
    from trnplan.drift import DriftState

    path, state = drift.path, drift.state
    rerun = f"run `trnplan optimize {scenario_id}` and commit the plan"
    if state is DriftState.MISSING:
        emit(f"{path}: missing (drift); {rerun}")
    elif state is DriftState.UP_TO_DATE:
        emit(f"{path}: up to date")
    elif state is DriftState.UNREADABLE:
        echo_err(f"error: {drift.error}")
        echo_err(f"{path}: not checked; fix or delete it, then run `trnplan optimize {scenario_id}`")
    elif state is DriftState.OTHER_SOLVER_BUILD and drift.versions is not None:
        old, new = drift.versions
        emit(f"{path}: up to date (solved here by {new}; the file records {old})")
    else:
        emit(f"{path}: out of date (drift); {rerun}")
        for line in drift.diff[:MAX_DRIFT_LINES]:
            emit(line)
        if len(drift.diff) > MAX_DRIFT_LINES:
            emit(f"... {len(drift.diff) - MAX_DRIFT_LINES} more diff lines")
