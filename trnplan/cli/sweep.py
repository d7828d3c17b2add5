"""The `sweep` command: solve many variants of one scenario on Dask, keep a row per run, sum them up."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

import typer

from trnplan.cli.common import (
    SetOpt,
    SpecsOpt,
    echo_err,
    emit,
    format_option,
    guarded,
    note_unread_specs,
    number_option,
    stderr_is_terminal,
    to_json,
)
from trnplan.errors import EXIT_INTERRUPTED, EXIT_SOLVER, InputError, SpecError, UsageError

if TYPE_CHECKING:
    from trnplan.catalog import Catalog
    from trnplan.sweep.grid import Axis, Run
    from trnplan.sweep.rows import Row, RowFile
    from trnplan.sweep.runner import Task

SweepFormat = Literal["table", "json", "csv", "markdown"]


@guarded
def sweep(
    scenario: Annotated[str, typer.Argument(metavar="SCENARIO", help="Scenario id from the specs.")],
    vary: Annotated[
        list[str] | None,
        typer.Option("--vary", metavar="PATH=VALUES", show_default=False,
                     help="Values of one input: PATH=V1,V2 (a list) or PATH=LOW:HIGH:N (N evenly spaced "
                     "values, both ends included); repeatable, the grid is their product. KIND.*.FIELD sets "
                     "every entity of a kind."),
    ] = None,
    sample: Annotated[
        int | None,
        number_option("--sample", whole=True, metavar="N", show_default=False,
                     help="Monte Carlo: N runs, each drawing every field the specs give a range uniformly."),
    ] = None,
    seed: Annotated[
        int, number_option("--seed", whole=True, metavar="S", help="Seed of --sample's draws.")
    ] = 0,
    tornado: Annotated[
        bool,
        typer.Option("--tornado", show_default=False,
                     help="Exact tornado: re-solve at each ranged input's low and high end, the others at "
                     "base; inputs the scenario cannot use are listed, not solved."),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE.jsonl", show_default=False,
                     help="Keep one JSON row per run here, written as runs finish; a rerun skips the runs "
                     "already there."),
    ] = None,
    workers: Annotated[
        int | None,
        number_option("--workers", whole=True, low=1, metavar="N", show_default=False,
                     help="Local worker processes (default: the machine's cores)."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", metavar="tcp://HOST:PORT", show_default=False,
                     help="Run on this Dask cluster instead of a local one."),
    ] = None,
    connect_timeout: Annotated[
        float,
        number_option("--connect-timeout", low=0.1, metavar="SECONDS", help="Time to reach --scheduler."),
    ] = 10.0,
    time_limit: Annotated[
        float | None,
        number_option("--time-limit", low=0.01, metavar="SECONDS", show_default=False,
                     help="Time for each run's solve."),
    ] = None,
    fmt: Annotated[SweepFormat, format_option(get_args(SweepFormat), long_help=True)] = "table",
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Solve many variants of a scenario in parallel (on Dask) and sum up how sure its plan is.

    Each run's TCO is what `trnplan optimize SCENARIO --set PATH=VALUE ...` gives. The summary: the
    objective's distribution, how often each site's choice is made, and a tornado of TCO per input.
    Needs `pip install "trnplan[dask]"`.

    Examples:

        trnplan sweep trn3-100k --vary chips.trn3.unit_usd=5000:9000:5

        trnplan sweep trn3-100k --vary 'sites.*.electricity_usd_per_kwh=0.05,0.1'

        trnplan sweep trn3-100k --sample 200 --seed 1 --out runs.jsonl

        trnplan sweep trn3-100k --tornado
    """
    from trnplan.sweep.runner import INSTALL_HINT, Task, dask_available

    if not dask_available():
        raise UsageError(INSTALL_HINT)
    dirs = _worker_dirs(specs)
    catalog, base = _base(dirs, overrides or [])
    if scenario not in catalog.scenarios:
        from trnplan.specs.load import unknown_scenario

        raise UsageError(unknown_scenario(scenario, catalog))
    from trnplan.catalog.digest import inputs_digest

    unused: list[str] | None = None
    runs: Sequence[Run]
    if tornado:
        runs, paths, unused = _tornado_runs(catalog, scenario, vary or [], sample)
    else:
        runs, paths = _runs(catalog, scenario, dirs, base, vary or [], sample, seed)
    digest = inputs_digest(catalog, scenario)
    sink = _open_out(out)
    try:
        rows, todo = _resume(sink, runs, scenario, digest)
        if todo:
            tasks = (Task(scenario, tuple(dirs), tuple(base), runs[n], time_limit=time_limit,
                          base_digest=digest) for n in todo)
            rows.extend(_solve(scenario, tasks, sink, workers, scheduler, connect_timeout, total=len(runs),
                               todo=len(todo)))
    finally:
        if sink is not None:
            sink.close()
    if unused is not None:
        _print_tornado(scenario, rows, unused, fmt)
    else:
        _print_summary(catalog, scenario, rows, paths, sampled=sample is not None, total=len(runs), fmt=fmt)
    _exit_if_failed(rows, len(runs), resumable=out is not None)


def _exit_if_failed(rows: list[Row], total: int, *, resumable: bool) -> None:
    """Exit 5 naming the first run that failed on its worker, if any did (the summary is printed)."""
    failed = sorted(r["run"] for r in rows if r["status"] == "failed")
    if failed:
        first = next(r for r in rows if r["run"] == failed[0])
        them = "it" if len(failed) == 1 else "them"
        again = f"; rerun the same command to solve {them} again" if resumable else ""
        echo_err(f"error: {len(failed)} of {total} runs failed (run {failed[0]}: {first['message']})" + again)
        raise typer.Exit(EXIT_SOLVER)


def _open_out(out: Path | None) -> RowFile | None:
    """`--out` opened once (not through a link), its rows read: None without `--out`."""
    if out is None:
        return None
    from trnplan.files import check_writable
    from trnplan.sweep.rows import RowFile

    check_writable(out)
    return RowFile(out)


def _tornado_runs(
    catalog: Catalog, scenario: str, vary: list[str], sample: int | None
) -> tuple[list[Run], list[str], list[str]]:
    """The base run and each usable ranged input's two ends; the inputs varied and those left unused."""
    from trnplan.sweep.tornado import tornado_inputs, tornado_runs

    if vary or sample is not None:
        raise UsageError("give --tornado alone: it re-solves each ranged input's ends "
                         "(no --vary or --sample)")
    fields, unused = tornado_inputs(catalog, scenario)
    return tornado_runs(fields), [f.path for f in fields], unused


def _print_tornado(scenario: str, rows: list[Row], unused: list[str], fmt: SweepFormat) -> None:
    from trnplan.sweep.report import tornado_to_csv, tornado_to_markdown
    from trnplan.sweep.tornado import tornado_summary

    summary = {"scenario": scenario, **tornado_summary(rows, unused)}
    if fmt == "json":
        emit(to_json(summary))
    elif fmt == "csv":
        emit(tornado_to_csv(summary))
    elif fmt == "markdown":
        emit(tornado_to_markdown(summary))
    else:
        from trnplan.render.sweep import render_tornado

        emit(render_tornado(summary))


def _worker_dirs(specs: list[Path] | None) -> list[str]:
    """The spec directories as absolute paths, so a worker in another folder reads the same ones."""
    from trnplan.specs.load import default_spec_dirs, spec_dir

    note_unread_specs(specs)
    chosen = [spec_dir(s) for s in specs] if specs else default_spec_dirs()
    return [str(Path(d).resolve()) for d in chosen]


def _base(dirs: list[str], overrides: list[str]) -> tuple[Catalog, list[str]]:
    """The catalog with the base `--set` overrides, and those overrides with wildcards expanded."""
    from trnplan.specs.load import load_specs
    from trnplan.sweep.grid import expand

    catalog = load_specs(dirs, [o for o in overrides if ".*." not in o.partition("=")[0]])
    base = []
    for text in overrides:
        path, eq, value = text.partition("=")
        base += [f"{p}={value}" for p in expand(path.strip(), catalog)] if eq else [text]
    return (load_specs(dirs, base) if base != overrides else catalog), base


def _runs(
    catalog: Catalog,
    scenario: str,
    dirs: list[str],
    base: list[str],
    vary: list[str],
    sample: int | None,
    seed: int,
) -> tuple[Sequence[Run], list[str]]:
    """The runs of the sweep (made as they are asked for) and the inputs it varies; the sweep's size is
    checked first, then each `--vary` end against the specs."""
    from trnplan.sweep.grid import grid_runs, grid_size, parse_vary, ranged_fields, sample_runs

    if sample is not None:
        if vary:
            raise UsageError("give --vary (a grid) or --sample (Monte Carlo), not both")
        fields = ranged_fields(catalog, scenario)
        return sample_runs(fields, sample, seed), [f.path for f in fields]
    if not vary:
        raise UsageError("nothing to sweep: give --vary PATH=V1,V2 (repeatable) or --sample N")
    axes = [parse_vary(text, catalog) for text in vary]
    grid_size(axes)
    for axis in axes:
        _check_axis(axis, dirs, base)
    return grid_runs(axes), [a.path for a in axes]


def _check_axis(axis: Axis, dirs: list[str], base: list[str]) -> None:
    """Load the specs with the axis at each of its values (its ends when it is numeric): a bad path or
    value fails now, before any run, naming the `--vary`."""
    from trnplan.specs.load import load_specs
    from trnplan.sweep.grid import _text

    values = list(axis.values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        values = sorted({min(values), max(values)})
    else:  # the first few distinct values; any other that breaks the specs makes its runs' rows invalid
        values = list({_text(v): v for v in values}.values())[:CHECKED_VALUES]
    for value in values:
        try:
            load_specs(dirs, [*base, *(f"{p}={_text(value)}" for p in axis.paths)])
        except SpecError as exc:
            said = [f"{p.path}: {p.message}" if p.path else p.message for p in exc.problems
                    if p.file == "--set"] or [str(p) for p in exc.problems]
            raise InputError(f"--vary {axis.path} at {_text(value)}: " + "; ".join(said)) from None


CHECKED_VALUES = 16
"""Values of a `--vary` list of text (or mixed values) loaded into the specs before the sweep starts."""


def _resume(
    out: RowFile | None, runs: Sequence[Run], scenario: str, digest: str
) -> tuple[list[Row], list[int]]:
    """The rows `--out` holds already, and the numbers of the runs still to solve (a run whose worker died
    is solved again)."""
    if out is None:
        return [], list(range(len(runs)))
    from trnplan.sweep.rows import check_resumable

    out.check_torn(digest)
    rows = {n: r for n, r in out.read.rows.items() if r["status"] != "failed"}
    check_resumable(out.read.rows, runs, out.path, scenario, digest)
    if rows:
        left = len(runs) - len(rows)
        echo_err(f"{out.path}: {len(rows)} of {len(runs)} runs done already; solving the other {left}",
                 keep=[out.path])
    return list(rows.values()), [n for n in range(len(runs)) if n not in rows]


def _solve(
    scenario: str, tasks: Iterable[Task], out: RowFile | None, workers: int | None, scheduler: str | None,
    connect_timeout: float, *, total: int, todo: int,
) -> list[Row]:
    """Solve the runs on Dask, appending each row to `--out` as it finishes; Ctrl-C keeps them (exit 130)."""
    from trnplan.sweep.runner import cluster, solve_all

    new: list[Row] = []
    bar = None

    def keep(row: Row) -> None:
        new.append(row)
        if out is not None:
            out.write(row)
        if bar is not None:
            bar.advance()

    try:
        with cluster(workers or os.cpu_count() or 1, scheduler, connect_timeout) as client:
            if out is not None:  # once the cluster answers: a sweep that cannot start leaves no file behind
                out.start()
            bar = _progress(total, total - todo, scenario)
            solve_all(client, tasks, keep)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
            bar = None
        kept = f"; the rows are in {out.path}: rerun the same command to finish" if out is not None else ""
        echo_err(f"interrupted: {total - todo + len(new)} of {total} runs done{kept}")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        if bar is not None:
            bar.close()
    return new


def _progress(total: int, done: int, scenario: str) -> Any:
    if not stderr_is_terminal():
        return None
    from trnplan.render import console
    from trnplan.render.sweep import SweepProgress

    return SweepProgress(console(stderr=True), total, done, f"sweep {scenario}")


def _print_summary(
    catalog: Catalog, scenario: str, rows: list[Row], paths: list[str], *, sampled: bool, total: int,
    fmt: SweepFormat,
) -> None:
    from trnplan.sweep.report import summary_to_csv, summary_to_markdown
    from trnplan.sweep.summary import summarize

    summary = summarize(rows, paths, sampled=sampled, total=total)
    summary["scenario"] = scenario
    summary["objective_kind"] = catalog.scenarios[scenario].objective
    if fmt == "json":
        emit(to_json(summary))
    elif fmt == "csv":
        emit(summary_to_csv(summary))
    elif fmt == "markdown":
        emit(summary_to_markdown(summary))
    else:
        from trnplan.render.sweep import render_sweep

        emit(render_sweep(summary))
