"""`trnplan perf`: what a workload's job gets on each form and scale-up option of the catalog."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import typer

from trnplan.cli.common import (
    SetOpt,
    SpecsOpt,
    WideOpt,
    as_data,
    emit,
    format_option,
    guarded,
    load_catalog,
    number_option,
)
from trnplan.errors import UsageError, did_you_mean, visible

PerfFormat = Literal["table", "json"]


def _ids(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


@guarded
def perf(
    workload: Annotated[
        str,
        typer.Argument(metavar="WORKLOAD", show_default=False, help="A workload id whose spec has a job."),
    ],
    forms: Annotated[
        str | None, typer.Option("--forms", metavar="F,..", help="Only these forms (comma-separated ids).")
    ] = None,
    chips: Annotated[
        str | None, typer.Option("--chips", metavar="C,..", help="Only the forms of these chips.")
    ] = None,
    oversubscription: Annotated[
        float, number_option("--oversubscription", low=1, high=1000, metavar="X",
                             help="Scale-out oversubscription the job's traffic sees (default 1).")
    ] = 1.0,
    fmt: Annotated[PerfFormat, format_option(get_args(PerfFormat))] = "table",
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
    wide: WideOpt = False,
) -> None:
    """What MFU, goodput and efficiency a workload's job gets on each form and scale-up option.

    For each, the best parallel layout that fits in HBM and its step time by part: compute, scale-up
    collectives, scale-out traffic, pipeline bubble, memory-bound time. Efficiency (what the optimizer
    plans with) = MFU x (job-precision peak / FP8 peak) x goodput.

    Examples:

        trnplan perf moe-train

        trnplan perf dense-train --chips trn2,trn3 --format json
    """
    from trnplan.perf import workload_performance
    from trnplan.render.perf import perf_data, render_perf

    catalog = load_catalog(specs, overrides)
    if workload not in catalog.workloads:
        known = sorted(catalog.workloads)
        hint = did_you_mean(workload, known)
        listed = hint or " (workloads: " + ", ".join(known) + ")"
        raise UsageError(f"unknown workload '{visible(workload)}'{listed}")
    if catalog.workloads[workload].job is None:
        raise UsageError(f"workload '{workload}' has no job to compute its performance from (rules only)")
    for flag, given, known_ids in (
        ("--forms", _ids(forms), catalog.forms),
        ("--chips", _ids(chips), catalog.chips),
    ):
        for item in given or []:
            if item not in known_ids:
                raise UsageError(f"{flag}: unknown id '{visible(item)}'{did_you_mean(item, list(known_ids))}")
    rows = workload_performance(catalog, workload, _ids(forms), _ids(chips), oversubscription)
    if not rows:
        raise UsageError("no form matches --forms and --chips")
    if fmt == "table":
        emit(render_perf(workload, catalog.workloads[workload].name, rows), wide=wide)
    else:
        emit(as_data(perf_data(rows), "json"))
