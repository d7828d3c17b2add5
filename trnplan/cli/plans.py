"""Commands on plan files: `bom` and `diff`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trnplan.cli.common import BomFormatOpt, DiffFormatOpt, WideOpt, echo_err, emit, guarded
from trnplan.errors import EXIT_DIFFERENT


@guarded
def bom(
    plan_file: Annotated[
        Path, typer.Argument(metavar="PLAN", help="A plan file (plans/SCENARIO.yaml).", show_default=False)
    ],
    fmt: BomFormatOpt = "table",
    wide: WideOpt = False,
) -> None:
    """Bill of materials of a plan: line items by site and category; the total equals the plan's capex.

    Examples:

        trnplan bom plans/trn3-100k.yaml

        trnplan bom plans/trn3-100k.yaml --format csv > bom.csv
    """
    from trnplan.bom import bom_to_csv, bom_to_json, bom_to_markdown, build_bom
    from trnplan.plan.file import read_plan

    the_bom = build_bom(read_plan(plan_file))  # refuses lines that do not sum to the plan's capex
    if fmt == "table":
        from trnplan.render import render_bom

        emit(render_bom(the_bom), wide=wide)
    else:
        emit({"csv": bom_to_csv, "json": bom_to_json, "markdown": bom_to_markdown}[fmt](the_bom))


@guarded
def diff(
    base: Annotated[
        str,
        typer.Argument(
            help="Base plan: a path, or REV:path read through git (main:plans/x.yaml).", show_default=False
        ),
    ],
    head: Annotated[str, typer.Argument(help="Head plan: a path, or REV:path.", show_default=False)],
    fmt: DiffFormatOpt = "table",
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the plans differ.")] = False,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            metavar="EXPR",
            show_default=False,
            help="Guardrail (repeatable): exit 1 when it is breached, e.g. 'capex>+5%' or 'it_power>+2MW'.",
        ),
    ] = None,
    wide: WideOpt = False,
) -> None:
    """What changed between two plans: totals, per-site choices, deployments, BOM lines and why.

    Markdown is made for a pull-request comment; JSON is stable for machines.

    REV:path is always read from git, even if a file of that name exists; name a file whose name holds
    a colon with ./ (./odd:name.yaml) or an absolute path.

    Examples:

        trnplan diff main:plans/trn3-100k.yaml plans/trn3-100k.yaml

        trnplan diff old.yaml new.yaml --format markdown --fail-if 'capex>+5%'
    """
    from trnplan.diff import (
        breached,
        diff_plans,
        diff_to_json,
        diff_to_markdown,
        parse_guardrail,
        read_plan_ref,
    )

    guardrails = [parse_guardrail(text) for text in fail_if or ()]
    result = diff_plans(read_plan_ref(base), read_plan_ref(head), base_label=base, head_label=head)
    breaches = breached(result, guardrails)
    if fmt == "table":
        from trnplan.render import render_diff

        emit(render_diff(result), wide=wide)
    elif fmt == "markdown":
        emit(diff_to_markdown(result, breaches=breaches))
    else:
        emit(diff_to_json(result))
    for line in breaches:
        echo_err(f"guardrail breached: {line}")
    if breaches or (exit_code and result.different):
        raise typer.Exit(EXIT_DIFFERENT)
