"""The options each site may use and their bounds: every (form, cooling, scale-up switch) the catalog
allows at the site, less those another option dominates; in a scenario with periods, read against the
widest figures of the window (`widest_view`) and never before they can be bought."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import price_schedules
from trnplan.catalog.scenario import Demand, DemandCap
from trnplan.costs import (
    Option,
    Reason,
    all_options,
    capex_usd_per_year,
    form_efficiency,
    make_option,
    option_problems,
    residual_usd_per_year,
)
from trnplan.optimize.model import SiteModel
from trnplan.optimize.progress import check_time


def option_upper_bound(catalog: Catalog, scenario: Scenario, site_id: str, opt: Option) -> int:
    """Units of an option a site could hold on its own: power, grid, positions and supply caps."""
    site = catalog.sites[site_id]
    bounds = [catalog.usable_it_power_mw(site) * 1000 / opt.it_kw, site.rack_positions / opt.racks]
    if opt.cooling in site.cooling_capacity_mw:
        bounds.append(site.cooling_capacity_mw[opt.cooling] * 1000 / opt.it_kw)
    if site.grid_power_mw is not None:
        bounds.append(site.grid_power_mw * 1000 / (opt.it_kw * catalog.cooling[opt.cooling].pue))
    for key, per_unit in ((opt.chip, opt.chips), (opt.form, 1), (opt.scale_up_switch, opt.scale_up_switches)):
        if key in scenario.supply and per_unit:
            bounds.append(scenario.supply[key] / per_unit)
    return max(0, math.floor(min(bounds) + 1e-9))


DEMANDED = ("chips", "fp8_pflops", "hbm_tb", "effective_fp8_pflops")
"""Demand keys, each also the name of the per-unit figure of an `Option`."""


def demand_units(scenario: Scenario, opt: Option) -> int:
    """Units of an option that alone meet every demand given."""
    need = 0
    for key in DEMANDED:
        per_unit = getattr(opt, key)
        amount = getattr(scenario.demand, key)
        if amount is not None and per_unit > 0:
            need = max(need, math.ceil(amount / per_unit - 1e-9))
    return need


def supply_use(opt: Option, key: str) -> int:
    """Units of a supply-capped item one unit of the option consumes (scale-out switches aside)."""
    return (
        (opt.chips if opt.chip == key else 0)
        + (1 if opt.form == key else 0)
        + (opt.scale_up_switches if opt.scale_up_switch == key else 0)
    )


def dominates(
    a: Option,
    b: Option,
    scenario: Scenario,
    when: Callable[[Option], str] | None = None,
    priced: bool = False,
) -> bool:
    """Swapping each unit of b for a unit of a never hurts: same cooling, no more capex (nor capex charge a
    year, lives of their own counted), power, racks, fabric load, capped supply or capped demand
    (`at_most`), and no less of anything demanded or maximised; with `when` (a phased model: the month an
    option can first be bought), a is available no later than b; with `priced` (prices that follow
    schedules, compared here at one moment), a has b's chip and scale-up switch."""
    if a.cooling != b.cooling or (when is not None and when(a) > when(b)):
        return False
    if priced and (a.chip, a.scale_up_switch) != (b.chip, b.scale_up_switch):
        return False
    le = [
        a.capex_usd <= b.capex_usd,
        _charge(a, scenario) <= _charge(b, scenario),
        a.it_kw <= b.it_kw,
        a.racks <= b.racks,
        a.scale_out_gbps <= b.scale_out_gbps,
        a.endpoint_optics <= b.endpoint_optics,
        a.copper_links == b.copper_links,  # a copper link saves a leaf optic: more of them is no worse
        a.copper_kw <= b.copper_kw,
    ]
    le += [supply_use(a, key) <= supply_use(b, key) for key in scenario.supply]
    capped = [k for k in ("chips", "fp8_pflops", "hbm_tb") if scenario.demand.cap(k) is not None]
    le += [getattr(a, k) <= getattr(b, k) for k in capped]
    ge = [a.fp8_pflops >= b.fp8_pflops, a.effective_fp8_pflops >= b.effective_fp8_pflops]
    for key in ("chips", "hbm_tb"):
        if getattr(scenario.demand, key) is not None:
            ge.append(getattr(a, key) >= getattr(b, key))
    if not all(le) or not all(ge):
        return False
    strictly = (a.capex_usd, a.it_kw, a.racks) != (
        b.capex_usd,
        b.it_kw,
        b.racks,
    ) or (a.fp8_pflops, a.effective_fp8_pflops) != (b.fp8_pflops, b.effective_fp8_pflops)
    return strictly or a.key < b.key


def _charge(opt: Option, scenario: Scenario) -> float:
    """What a unit's capex costs a year: capex x (CRF + m) + its residual (lives of its own)."""
    return opt.capex_usd * capex_usd_per_year(scenario) + residual_usd_per_year(scenario, opt.capex_lives)


def undominated(
    options: list[Option],
    scenario: Scenario,
    when: Callable[[Option], str] | None = None,
    priced: bool = False,
) -> list[Option]:
    """Options no other option dominates (the optimum never needs a dominated one)."""
    return [
        b for b in options if not any(a is not b and dominates(a, b, scenario, when, priced) for a in options)
    ]


def prepare_sites(
    catalog: Catalog, scenario: Scenario, elastic: bool, when: Callable[[Option], str] | None = None,
    *, prune: bool = True,
) -> list[SiteModel]:
    """Options per site (blocked ones too in elastic mode, unless physics forbids them); `prune`: less
    those another option dominates (never in elastic mode)."""
    sites = []
    for s_index, site_id in enumerate(sorted(scenario.sites)):
        check_time("choosing each site's options")
        options: list[Option] = []
        blocked: dict[int, list[Reason]] = {}
        upper: list[int] = []
        candidates = []
        for form_id, cooling_id, switch_id in all_options(catalog):
            why = option_problems(catalog, scenario, site_id, form_id, cooling_id, switch_id)
            if why and (not elastic or any(reason.hard for reason in why)):
                continue
            efficiency = form_efficiency(catalog, scenario, form_id, switch_id)
            option = make_option(catalog, form_id, cooling_id, switch_id, efficiency, site_id)
            candidates.append((option, why))
        if prune and not elastic:
            priced = when is not None and price_schedules(catalog)  # prices at one moment without periods
            keep = {id(o) for o in undominated([o for o, _ in candidates], scenario, when, priced)}
            candidates = [(o, why) for o, why in candidates if id(o) in keep]
        for opt, why in candidates:
            if elastic:
                # enough units to meet the whole demand alone, whatever the limits say
                bound = max(
                    option_upper_bound(catalog, scenario, site_id, opt), demand_units(scenario, opt), 1
                )
            else:
                bound = option_upper_bound(catalog, scenario, site_id, opt)
            if bound <= 0:
                continue
            if why:
                blocked[len(options)] = why
            options.append(opt)
            upper.append(bound)
        sites.append(SiteModel(site_id, s_index, options, blocked, upper))
    return sites


def widest_view(catalog: Catalog, scenario_id: str, views: list[Catalog]) -> Catalog:
    """The view the options are chosen from: each site at its largest figures over the periods, the last
    period's `as_of`, demanded keys of any period at their largest (caps at their smallest)."""
    last = views[-1]
    sites = dict(last.sites)
    for site_id in catalog.scenarios[scenario_id].sites:
        if site_id in sites and sites[site_id].schedules:
            update = {
                name: max(getattr(v.sites[site_id], name) for v in views)
                for name in catalog.sites[site_id].schedules
            }
            sites[site_id] = sites[site_id].model_copy(update=update)
    demands = [v.scenarios[scenario_id].demand for v in views]
    need: dict[str, Any] = {}
    for key in ("chips", "fp8_pflops", "hbm_tb", "effective_fp8_pflops"):
        values = [getattr(d, key) for d in demands if getattr(d, key) is not None]
        need[key] = max(values) if values else None
    caps: dict[str, Any] = {}
    for key in ("chips", "fp8_pflops", "hbm_tb"):
        values = [d.cap(key) for d in demands if d.cap(key) is not None]
        caps[key] = min(values) if values else None
    at_most = DemandCap.model_construct(**caps) if any(v is not None for v in caps.values()) else None
    demand = Demand.model_construct(**need, at_most=at_most)
    scenario = last.scenarios[scenario_id].model_copy(update={"demand": demand})
    return replace(last, sites=sites, scenarios={**last.scenarios, scenario_id: scenario})
