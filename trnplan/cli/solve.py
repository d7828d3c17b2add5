"""The `optimize` command: solve scenarios, write (or, with --check, compare) their plan files."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

import typer

from trnplan.cli.common import (
    PlanFormat,
    PlanFormatOpt,
    SetOpt,
    SpecsOpt,
    WideOpt,
    as_data,
    choice_option,
    echo_err,
    emit,
    guarded,
    interrupt_after,
    load_catalog,
    number_option,
    stderr_is_terminal,
)
from trnplan.cli.outcomes import better_alternatives, error_data, infeasible_text, unproven_warning
from trnplan.errors import (
    EXIT_DIFFERENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    InfeasibleError,
    SolverError,
    UsageError,
)

if TYPE_CHECKING:
    from trnplan.catalog import Catalog
    from trnplan.drift import Drift
    from trnplan.optimize.progress import Deadline, SearchInterrupted
    from trnplan.plan.model import Plan

MAX_DRIFT_LINES = 60

SolverName = Literal["highs", "cbc"]
CsvTable = Literal["deployments", "timeline", "purchases"]


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
    fmt: PlanFormatOpt = "table",
    csv_table: Annotated[
        CsvTable | None,
        choice_option(
            "--csv-table",
            choices=get_args(CsvTable),
            help="With --format csv, which table: deployments (the installed base), timeline (per period "
            "and site: units bought, chips installed, IT kW, positions, fabric, capex bought) or purchases "
            "(per period and option: units and chips bought, units installed); every row leads with its "
            "scenario. Default: deployments.",
            metavar="TABLE",
        ),
    ] = None,
    alternatives: Annotated[
        int,
        number_option(
            "--alternatives",
            whole=True,
            low=0,
            high=50,
            metavar="K",
            help="How many alternatives to list: the best plan without each form, cooling or switch the "
            "plan chooses, ranked.",
        ),
    ] = 3,
    solver: Annotated[
        SolverName, choice_option("--solver", choices=get_args(SolverName), help="MILP solver.")
    ] = "highs",
    time_limit: Annotated[
        float | None,
        number_option(
            "--time-limit",
            low=0.01,
            metavar="SECONDS",
            show_default=False,
            help="Time for the whole command (every scenario, its alternatives and explanations); a plan "
            "found by then is kept, marked unproven (feasible).",
        ),
    ] = None,
    futures: Annotated[
        int | None,
        number_option("--futures", whole=True, low=1, metavar="N", show_default=False,
                      help="One plan across N futures drawn from the specs' ranges (a phased scenario): "
                      "purchases up to its `decide` period shared, later ones per future; expected TCO "
                      "minimised. Written only with --out (with --check, compared with it)."),
    ] = None,
    seed: Annotated[
        int, number_option("--seed", whole=True, metavar="S", help="Seed of --futures' draws.")
    ] = 0,
    risk: Annotated[
        str | None,
        typer.Option("--risk", metavar="cvar:A", show_default=False,
                     help="With --futures: minimise the CVaR at level A (cvar:0.9: the mean TCO of the "
                     "worst 10% of futures) instead of the expected TCO."),
    ] = None,
    workers: Annotated[
        int | None,
        number_option("--workers", whole=True, low=1, metavar="N", show_default=False,
                      help="With --futures: local Dask workers for the per-future solves (default: the "
                      "cores)."),
    ] = None,
    gap: Annotated[
        float | None,
        number_option(
            "--gap",
            low=0,
            high=0.1,
            metavar="REL",
            show_default=False,
            help="Relative gap to prove the plan within (0.0001: within 0.01% of the optimum; default: the "
            "scenario's `gap`, 0 = proven optimal). With --check, the gap the plan file records.",
        ),
    ] = None,
    wide: WideOpt = False,
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Solve a scenario to proven optimality, print the plan and write plans/SCENARIO.yaml.

    With --set (a what-if) nothing is written unless --out names a file, so a committed plan is never
    replaced by an experiment. With --check, nothing is written: the fresh plan is compared with the file
    on disk and any difference (or a missing file) exits 1 with a short diff. An infeasible scenario
    writes nothing, says what must give, and exits 4. With --all, every scenario is solved and the exit
    code is the highest of them. In a terminal, progress shows on stderr, and Ctrl-C stops a long search
    and shows the best plan found so far (not written).

    Examples:

        trnplan optimize trn3-100k

        trnplan optimize trn3-100k --set chips.trn3.unit_usd=9000 --out /tmp/trn3-9k.yaml

        trnplan optimize --all --check

        trnplan optimize trn3-futures --futures 20 --seed 1 --out /tmp/hedged.yaml

        trnplan optimize trn3-life --format csv --csv-table purchases > purchases.csv
    """
    began = time.monotonic()  # --time-limit counts from here: loading the specs is part of the command
    if futures is not None:
        from trnplan.cli.futures import optimize_futures_command

        _check_futures_options(scenario, all_scenarios, check, out, fmt, csv_table, gap)
        assert scenario is not None  # checked just above
        code = optimize_futures_command(scenario, futures, seed, risk, workers=workers, out=out, fmt=fmt,
                                        solver=solver, time_limit=time_limit, specs=specs,
                                        overrides=overrides or [], check=check)
        if code:
            raise typer.Exit(code)
        return
    _check_plan_options(scenario, all_scenarios, out, fmt, csv_table, futures_only=(risk, workers))
    catalog = load_catalog(specs, overrides)
    ids = _scenario_ids(catalog, scenario)
    paths = {sid: out if out is not None else plans / f"{sid}.yaml" for sid in ids}
    run = _Run(check=check, fmt=fmt, solver=solver, time_limit=time_limit, alternatives=alternatives)
    run.gap = gap
    run.began = began
    run.wide = wide
    run.csv_table = csv_table or "deployments"
    run.write = not check and (out is not None or not overrides)
    run.rerun = _rerun_args(plans, specs)
    run.prepare(paths)
    for scenario_id, path in paths.items():
        if run.stopped:
            break
        run.solve(catalog, scenario_id, path)
    if check and all_scenarios and not run.stopped:
        run.flag_stale(plans, catalog.scenarios)
    run.emit_data(all_scenarios)
    if run.worst:
        raise typer.Exit(run.worst)


def _check_futures_options(scenario: str | None, all_scenarios: bool, check: bool, out: Path | None,
                           fmt: PlanFormat, csv_table: str | None, gap: float | None) -> None:
    """UsageError for an option `--futures` does not go with."""
    if all_scenarios or scenario is None:
        raise UsageError("--futures plans one SCENARIO (not --all)")
    if check and out is None:
        raise UsageError("--futures --check compares with the plan file --out FILE names; add --out FILE")
    if fmt == "csv" or csv_table is not None:
        raise UsageError("--format csv is for plans without --futures; use --format json or yaml")
    if gap is not None:
        raise UsageError("--gap is for one plan's proof, not --futures")


def _check_plan_options(scenario: str | None, all_scenarios: bool, out: Path | None, fmt: PlanFormat,
                        csv_table: str | None, futures_only: tuple[object, ...]) -> None:
    """UsageError for options that contradict each other in a plain (not --futures) optimize."""
    if any(value is not None for value in futures_only):
        raise UsageError("--risk and --workers go with --futures N")
    if all_scenarios == (scenario is not None):
        raise UsageError("give one SCENARIO or --all")
    if csv_table is not None and fmt != "csv":
        raise UsageError(f"--csv-table {csv_table} names a table of --format csv; add --format csv")
    if out is not None and all_scenarios:
        raise UsageError("--out names one plan file; with --all, use --plans DIR")


def _rerun_args(plans: Path, specs: list[Path] | None) -> str:
    """The options a re-run needs to write the same files: `--plans DIR` and `--specs` as given."""
    parts = [f"--specs {d}" for d in specs or ()]
    if plans != Path("plans"):
        parts.append(f"--plans {plans}")
    return "".join(f" {p}" for p in parts)


def _scenario_ids(catalog: Catalog, scenario: str | None) -> list[str]:
    """The scenario named, or every scenario (sorted) when none is; UsageError for an unknown one."""
    if scenario is None:
        ids = sorted(catalog.scenarios)
        if not ids:
            raise UsageError("the specs define no scenarios")
        return ids
    if scenario not in catalog.scenarios:
        from trnplan.specs.load import unknown_scenario  # lazy: the specs' loader is imported on use

        raise UsageError(unknown_scenario(scenario, catalog))
    return [scenario]


class _Run:
    """One `optimize` invocation over its scenarios: the plans solved and the exit code of each.

    `write` is False for --check and for a what-if (--set) without --out. One deadline, made when the run
    starts, bounds every scenario's solves."""

    def __init__(
        self, *, check: bool, fmt: PlanFormat, solver: str, time_limit: float | None, alternatives: int
    ) -> None:
        self.check = check
        self.fmt = fmt
        self.solver = solver
        self.time_limit = time_limit
        self.alternatives = alternatives
        self.write = not check
        self.wide = False
        self.csv_table = "deployments"
        self.rerun = ""
        self.codes: list[int] = []
        self.solved: dict[str, Plan] = {}
        self.failed: dict[str, dict[str, Any]] = {}
        self.stopped = False
        self.deadline: Deadline | None = None
        self.gap: float | None = None  # --gap; None: the scenario's (with --check: the plan file's)
        self.began: float | None = None  # when the command started (time.monotonic)

    @property
    def worst(self) -> int:
        return max(self.codes, default=EXIT_OK)

    def prepare(self, paths: dict[str, Path]) -> None:
        """Fail on an unwritable plan path now, not after the solve (exit 3, naming the path); then import
        the solver, holding a Ctrl-C that arrives meanwhile; then start the clock."""
        from trnplan.files import check_writable

        if self.write:
            for path in paths.values():
                check_writable(path)
        with interrupt_after():
            import trnplan.optimize  # noqa: F401  (lazy: the only path that imports PuLP and highspy)
        from trnplan.optimize.progress import Deadline

        spent = 0.0 if self.began is None else time.monotonic() - self.began
        self.deadline = Deadline(self.time_limit, spent=spent)

    @contextmanager
    def _watching(self) -> Iterator[None]:
        """Progress on a terminal's stderr, and Ctrl-C keeping the best plan; nothing of it elsewhere."""
        if not stderr_is_terminal():
            yield
            return
        from trnplan.optimize.progress import watch
        from trnplan.render import console
        from trnplan.render.progress import ProgressLine

        line = ProgressLine(console(stderr=True))
        try:
            with watch(line, keep_best_on_interrupt=True):
                yield
        finally:
            line.close()

    def _fail(self, scenario_id: str, exc: InfeasibleError | SolverError, path: Path) -> None:
        echo_err(infeasible_text(exc) if isinstance(exc, InfeasibleError) else f"error: {exc}")
        echo_err(f"{path}: not checked" if self.check else f"no plan written for '{scenario_id}'",
                 keep=[path])
        self.failed[scenario_id] = error_data(exc, scenario_id)
        self.codes.append(exc.exit_code)

    def solve(self, catalog: Catalog, scenario_id: str, path: Path) -> None:
        """Solve one scenario, then check its plan file against it, or write it and print it."""
        from trnplan.optimize.progress import SearchInterrupted
        from trnplan.plan import build

        assert self.deadline is not None
        limit = self.deadline.remaining()
        if limit is not None and limit <= 0:
            self._fail(scenario_id, SolverError(
                f"'{scenario_id}' not solved: the time limit ({self.time_limit:g} s) was used up before its "
                "solve began (loading the specs, and any scenarios before it); raise --time-limit"), path)
            return
        try:
            with self._watching():
                # The run's one deadline itself, so messages name the user's limit, not what was left of it.
                plan = build.plan_scenario(
                    catalog, scenario_id, solver=self.solver, time_limit=self.deadline,
                    alternatives=self.alternatives, gap=self._gap(catalog, scenario_id, path),
                )
        except SearchInterrupted as stop:
            self._interrupted(catalog, scenario_id, stop)
            return
        except (InfeasibleError, SolverError) as exc:
            self._fail(scenario_id, exc, path)
            return
        for warning in (unproven_warning(scenario_id, plan, self.check), better_alternatives(plan)):
            if warning:
                echo_err(warning)
        if self.check:
            self.codes.append(_report_drift(plan, path, scenario_id, self.rerun))
            return
        self._show(plan)
        if self.write:
            from trnplan.plan.file import write_plan

            write_plan(plan, path)
            echo_err(f"wrote {path}", keep=[path])
        else:
            echo_err(f"what-if (--set): {path} not written; add --out FILE to keep this plan", keep=[path])
        self.codes.append(EXIT_OK)

    def _gap(self, catalog: Catalog, scenario_id: str, path: Path) -> float | None:
        """The gap to prove: --gap; with --check, the one the plan file records (a plan proven optimal is
        checked by a plan proven optimal, one proven within 0.01% by one proven within 0.01%), or the
        scenario's when the file cannot be read (the drift check then says why); else the scenario's."""
        if self.gap is not None or not self.check:
            return self.gap
        from trnplan.errors import TrnplanError
        from trnplan.plan.file import read_plan

        try:
            recorded = read_plan(path).solver
        except (TrnplanError, OSError):
            return None
        return 0.0 if recorded is None else recorded.gap_target or 0.0

    def _show(self, plan: Plan) -> None:
        self.solved[plan.scenario] = plan
        if self.fmt == "table":
            from trnplan.render import render_plan

            emit(render_plan(plan), wide=self.wide)

    def _interrupted(self, catalog: Catalog, scenario_id: str, stop: SearchInterrupted) -> None:
        """Ctrl-C in a terminal: show the best plan found so far, marked as it is, and write nothing."""
        from trnplan.optimize.solution import Solution
        from trnplan.plan.build import build_plan
        from trnplan.plan.check import check_plan

        self.stopped = True
        self.codes.append(EXIT_INTERRUPTED)
        solution = stop.solution
        if not isinstance(solution, Solution):
            echo_err("interrupted: no plan had been found yet")
            return
        plan = build_plan(catalog, solution)
        if check_plan(plan, catalog):
            echo_err("interrupted: the plan found so far does not pass its re-check; nothing shown")
            return
        self._show(plan)
        proven = "proven optimal, but its alternatives are incomplete" if plan.status == "optimal" else (
            "feasible, NOT proven optimal")
        echo_err(f"interrupted: above is the best plan found so far for '{scenario_id}' ({proven}); "
                 "it was not written")

    def flag_stale(self, plans: Path, scenario_ids: Iterable[str]) -> None:
        """Plan files whose scenario is gone from the specs are drift."""
        from trnplan.drift import stale_plans

        for stale in stale_plans(plans, scenario_ids):
            emit(
                f"{stale}: no scenario '{stale.stem}' in the specs; delete the file or restore the scenario"
            )
            self.codes.append(EXIT_DIFFERENT)

    def emit_data(self, all_scenarios: bool) -> None:
        """The plans solved, as JSON or YAML on stdout: keyed by scenario with --all (a failed scenario as
        its error object), else the one plan or the one error."""
        if self.fmt == "table" or self.check and not self.failed:
            return
        if self.fmt == "csv":
            if not self.check:  # a failed scenario is said on stderr; the sheet holds the plans solved
                from trnplan.plan.tables import plans_to_csv

                emit(plans_to_csv([p for _, p in sorted(self.solved.items())], self.csv_table))
            return
        if all_scenarios:
            data: dict[str, Any] = {sid: p.to_dict() for sid, p in self.solved.items()}
            data.update(self.failed)
            emit(as_data(dict(sorted(data.items())), self.fmt))
            return
        if self.failed:
            (error,) = self.failed.values()
            emit(as_data(error, self.fmt))
            return
        if not self.solved:
            return
        from trnplan.plan.file import plan_to_yaml

        (only,) = self.solved.values()
        emit(as_data(only.to_dict(), "json") if self.fmt == "json" else plan_to_yaml(only))


def _report_drift(plan: Plan, path: Path, scenario_id: str, rerun: str = "") -> int:
    """Compare the fresh plan with its file on disk, print what drifted, and return the exit code."""
    from trnplan.drift import check_drift
    from trnplan.plan.file import plan_to_yaml

    drift = check_drift(plan_to_yaml(plan), path)
    _print_drift(drift, scenario_id, rerun)
    return drift.exit_code


def _print_drift(drift: Drift, scenario_id: str, rerun: str = "") -> None:
    from trnplan.drift import DriftState

    path, state = drift.path, drift.state
    command = f"trnplan optimize {scenario_id}{rerun}"
    advice = f"run `{command}` and commit the plan"
    if state is DriftState.MISSING:
        emit(f"{path}: missing (drift); {advice}")
    elif state is DriftState.UP_TO_DATE:
        emit(f"{path}: up to date" + "".join(f" ({span})" for span in drift.periods))
    elif state is DriftState.UNREADABLE:
        echo_err(f"error: {drift.error}")
        echo_err(f"{path}: not checked; fix or delete it, then run `{command}`", keep=[path])
    elif state is DriftState.OTHER_SOLVER_BUILD and drift.versions is not None:
        old, new = drift.versions
        emit(f"{path}: up to date (solved here by {new}; the file records {old})")
    elif state is DriftState.OTHER_INPUTS:
        emit(f"{path}: up to date (the same plan; only the recorded inputs differ)")
    else:
        emit(f"{path}: out of date (drift); {advice}")
        for line in drift.periods:
            emit(f"  {line}")
        for line in drift.diff[:MAX_DRIFT_LINES]:
            emit(line)
        if len(drift.diff) > MAX_DRIFT_LINES:
            emit(f"... {len(drift.diff) - MAX_DRIFT_LINES} more diff lines")
