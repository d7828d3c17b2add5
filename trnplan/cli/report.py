"""The `report` command: a plan (and a sweep's rows) as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trnplan.cli.common import echo_err, guarded
from trnplan.errors import UsageError


@guarded
def report(
    plan_file: Annotated[
        Path, typer.Argument(metavar="PLAN", help="A plan file (plans/SCENARIO.yaml).", show_default=False)
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="FILE.html", show_default=False,
                     help="Write the page here (replaced atomically)."),
    ],
    sweep: Annotated[
        Path | None,
        typer.Option("--sweep", metavar="RESULTS.jsonl", show_default=False,
                     help="Add a sweep's summary: the --out rows of `trnplan sweep` of the plan's scenario."),
    ] = None,
) -> None:
    """A plan as one HTML page that opens offline: headline figures, a floor plan per site, capex and TCO
    by category, the BOM, and with --sweep the objective's spread, the choices made and a tornado.

    The same plan (and rows) give the same bytes. Needs `pip install "trnplan[report]"` (matplotlib).

    Examples:

        trnplan report plans/trn3-100k.yaml --out trn3-100k.html

        trnplan report plans/trn3-100k.yaml --sweep runs.jsonl --out trn3-100k.html
    """
    from trnplan.report import INSTALL_HINT, charts_available

    if not charts_available():
        raise UsageError(INSTALL_HINT)
    from trnplan.files import check_writable, write_text_atomic
    from trnplan.plan.file import read_plan
    from trnplan.report import read_sweep, render_report, sweep_of_plan

    check_writable(out)
    plan = read_plan(plan_file)
    rows = None
    if sweep is not None:
        rows, torn = read_sweep(sweep)
        other_specs = sweep_of_plan(rows, plan.scenario, plan.inputs_digest, sweep)
        for warning in (torn, other_specs):
            if warning:
                echo_err(f"warning: {warning}")
    write_text_atomic(out, render_report(plan, rows, sweep.name if sweep is not None else "sweep"))
    echo_err(f"wrote {out}", keep=[out])
