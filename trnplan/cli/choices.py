"""The `options` command: why this choice, every option at each site priced per chip, with what rules
each out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trnplan.cli.common import (
    DataFormatOpt,
    SetOpt,
    SpecsOpt,
    WideOpt,
    as_data,
    emit,
    guarded,
    interrupt_after,
    load_catalog,
)
from trnplan.cli.solve import _scenario_ids
from trnplan.errors import UsageError, did_you_mean


@guarded
def options(
    scenario: Annotated[
        str, typer.Argument(metavar="SCENARIO", help="Scenario id from the specs.", show_default=False)
    ],
    plan: Annotated[
        Path | None,
        typer.Option("--plan", metavar="PLAN", show_default=False,
                     help="A plan file of the scenario: its options are marked chosen."),
    ] = None,
    site: Annotated[
        str | None,
        typer.Option("--site", metavar="SITE", show_default=False, help="Only this site's options."),
    ] = None,
    every: Annotated[
        bool,
        typer.Option("--all", help="Also the options of forms or chips the scenario does not list."),
    ] = False,
    fmt: DataFormatOpt = "table",
    wide: WideOpt = False,
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Why this choice: each option (form x cooling x scale-up switch) at each site of a scenario, priced
    per chip (capex, opex a year, TCO, and TCO per effective PFLOP-hour), with what rules it out.

    An option is chosen (in --plan), allowed, dominated (another option at the site is no dearer, no
    hotter, no bigger and delivers as much: the optimizer leaves it out) or ruled out, with the reasons:
    the site's cooling, power, positions or rack kW limit, as_of, min_domain_chips, a rack too hot for its
    cooling. The scale-out fabric and one-off site costs are shared by a site's options and left out.

    Examples:

        trnplan options trn3-100k --plan plans/trn3-100k.yaml

        trnplan options trn3-life --site ind-phased --format json
    """
    catalog = load_catalog(specs, overrides)
    (scenario_id,) = _scenario_ids(catalog, scenario)
    sites = catalog.scenarios[scenario_id].sites
    if site is not None and site not in sites:
        raise UsageError(f"scenario '{scenario_id}' has no site '{site}'{did_you_mean(site, sites)}")
    chosen: list[tuple[str, str, str, str]] = []
    if plan is not None:
        from trnplan.plan.file import read_plan

        the_plan = read_plan(plan)
        if the_plan.scenario != scenario_id:
            raise UsageError(f"{plan} is a plan of '{the_plan.scenario}', not of '{scenario_id}'")
        chosen = [(s, d.form, d.cooling, d.scale_up_switch) for s, part in the_plan.sites.items()
                  for d in part.deployments]
    with interrupt_after():
        from trnplan.optimize.choices import options_to_dict, site_option_costs

    costs = [s for s in site_option_costs(catalog, scenario_id, chosen) if site is None or s.site == site]
    if fmt == "table":
        from trnplan.render.choices import render_options

        emit(render_options(scenario_id, costs, every), wide=wide)
    else:
        emit(as_data(options_to_dict(scenario_id, costs, every), fmt))
