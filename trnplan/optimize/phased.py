"""The phased MILP (design.md, "Phased plans"): every period of a scenario in one model.

Per period p, each site gets the single-period variables and rows of `trnplan.optimize.constraints` on
what is *installed* then, read against that period's site figures, prices, demand and available switches
(`trnplan.catalog.periods.catalog_at`):
  n[s,i,p]    installed units of option i; n[s,i,p] >= n[s,i,p-1] (nothing is retired), and 0 before the
              option's chip and scale-up switch are available (bought = n[p] - n[p-1] >= 0)
  y, N, S, E, T, R, z per period as in the single-period model: the fabric is sized on each period's
              installed endpoints, so its tiers may grow; x[s,o] binary: one scale-out switch type per site
              for the whole window (sum over t of y[s,o,t,p] <= x[s,o]; sum over o of x[s,o] <= 1), and
              y[s,o,t,p] = 0 before switch o is available.
Money: capex bought in p is C_p - C_{p-1} (C_p: the capex of what is installed in p), charged its annuity
for the rest of the window W_p; since W_p - W_{p+1} = L_p,
  TCO = sum_p (C_p - C_{p-1}) W_p (CRF + m) + L_p opex_p = sum_p L_p [(CRF + m) C_p + opex_p],
linear in each period's installed variables. Performance counts PFLOP-years: sum_p L_p x PFLOPs_p.
Supply caps and the capex budget hold on the last period (everything bought in the window); the model's
`sites` are the last period's, so alternatives, cuts and unlocks that bound them bound every period
(installed units only grow).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pulp

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import Period, catalog_at, periods_of, scenario_at
from trnplan.catalog.scenario import Demand, DemandCap
from trnplan.costs import crf, opex_usd_per_kw_year, option_month, scale_out_switches
from trnplan.optimize.constraints import (
    add_capacity_row,
    define_cooling_fixed,
    define_demand,
    define_fabric,
    define_site_costs,
    define_site_limits,
    define_supply,
    define_units,
    define_unlocks,
)
from trnplan.optimize.model import Model, SiteModel, lin, prepare_sites


@dataclass
class PeriodModel:
    """One period of a phased model: its figures (a single-period view of the catalog) and site models."""

    period: Period
    model: Model  # shares the problem, slacks and coupling rows; its catalog and scenario are the period's
    sites: list[SiteModel]


def _widest(catalog: Catalog, scenario_id: str, views: list[Catalog]) -> Catalog:
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


def _period_sites(base: list[SiteModel], period: Period) -> list[SiteModel]:
    when = f"in {period.start} "
    return [
        SiteModel(b.site, b.index, b.options, b.blocked, b.upper, tag=f"{b.index}{period.tag}", when=when)
        for b in base
    ]


def _define_period(
    prob: pulp.LpProblem, pm: PeriodModel, out_switches: list[str], first: dict[int, str]
) -> None:
    """One period's single-period rows on its installed variables; what is not yet available is held at 0."""
    catalog, scenario, start = pm.model.catalog, pm.model.scenario, pm.period.start
    for sm in pm.sites:
        define_units(prob, sm)
        for i, var in enumerate(sm.n):
            if first[id(sm.options[i])] > start:
                var.upBound = 0
        define_fabric(prob, catalog, sm, out_switches, scenario.fabric)
        for (o, _t), y in sm.y.items():
            if (catalog.switches[o].available_from or "") > start:
                y.upBound = 0
        define_site_costs(catalog, scenario, sm)
        define_cooling_fixed(prob, catalog, scenario, sm)
        define_site_limits(prob, pm.model, sm)


def _link_periods(
    prob: pulp.LpProblem, periods: list[PeriodModel], out_switches: list[str]
) -> list[dict[str, Any]]:
    """Installed units only grow; one scale-out switch type per site over the window. Returns each site's
    x[s,o] by scale-out switch type."""
    for prev, cur in zip(periods, periods[1:], strict=False):
        for a, b in zip(prev.sites, cur.sites, strict=True):
            for i, (va, vb) in enumerate(zip(a.n, b.n, strict=True)):
                prob += lin([(vb, 1), (va, -1)]) >= 0, f"grow_{b.tag}_{i}"
    window: list[dict[str, Any]] = []
    for per_site in zip(*(pm.sites for pm in periods), strict=True):
        index = per_site[0].index
        xs = []
        window.append({})
        for o_index, o in enumerate(out_switches):
            ys = [[y for (oo, _t), y in sm.y.items() if oo == o] for sm in per_site]
            if not any(ys):
                continue
            x = prob.add_variable(f"x_{index}_{o_index}", 0, 1, pulp.LpBinary)
            xs.append((x, 1.0))
            window[-1][o] = x
            for sm, y_list in zip(per_site, ys, strict=True):
                if y_list:
                    prob += lin([(y, 1) for y in y_list] + [(x, -1)]) <= 0, f"one_type_{sm.tag}_{o_index}"
        if xs:
            prob += lin(xs) <= 1, f"one_type_{index}"
    return window


def _define_money(prob: pulp.LpProblem, model: Model, periods: list[PeriodModel]) -> None:
    """capex = the last period's installed capex (all bought in the window); TCO = sum over periods of
    L_p [(CRF + m) C_p + opex_p]; performance in PFLOP-years; the budgets."""
    scenario = model.scenario
    per_capex = crf(scenario.cost_of_capital, scenario.horizon_years) + scenario.maintenance_rate
    tco: list[tuple[Any, float]] = []
    perf: list[tuple[Any, float]] = []
    for pm in periods:
        years = pm.period.years
        catalog = pm.model.catalog
        for sm in pm.sites:
            site = catalog.sites[sm.site]
            tco.extend((v, c * per_capex * years) for v, c in sm.capex)
            for q, pairs in sm.kw_by_cooling.items():
                rate = opex_usd_per_kw_year(site, catalog.cooling[q].pue, pm.model.scenario) * years
                tco.extend((v, c * rate) for v, c in pairs)
            perf.extend((v, o.effective_fp8_pflops * years) for v, o in zip(sm.n, sm.options, strict=True))
    capex_pairs = [pair for sm in periods[-1].sites for pair in sm.capex]
    model.capex, model.tco, model.perf = lin(capex_pairs), lin(tco), lin(perf)
    budget = scenario.budget
    if budget.capex_usd is not None:
        add_capacity_row(prob, model, "budget_capex", capex_pairs, budget.capex_usd, "capex budget", "USD", 1)
        model.coupling.append("budget_capex")
    if budget.tco_usd is not None:
        add_capacity_row(prob, model, "budget_tco", tco, budget.tco_usd, "TCO budget", "USD", 1)
        model.coupling.append("budget_tco")


def build_phased_model(
    catalog: Catalog, scenario_id: str, *, elastic: bool = False, cuts: bool = True
) -> Model:
    """The MILP of a scenario with periods (see the module's docstring); `Model.periods` holds its periods."""
    scenario: Scenario = catalog.scenarios[scenario_id]
    periods = periods_of(scenario)
    views = [catalog_at(catalog, scenario_id, p.start, scenario_at(scenario, p)) for p in periods]
    wide = _widest(catalog, scenario_id, views)
    wide_scenario = wide.scenarios[scenario_id]

    def when(opt: Any) -> str:
        return option_month(catalog, opt)

    base = prepare_sites(wide, wide_scenario, elastic, when)
    first = {id(o): when(o) for sm in base for o in sm.options}
    out_switches = scale_out_switches(wide, wide_scenario)
    last = views[-1]
    sense = pulp.LpMinimize if scenario.objective == "min_tco" or elastic else pulp.LpMaximize
    prob = pulp.LpProblem(f"trnplan_{scenario_id}".replace("-", "_").replace(".", "_"), sense)
    model = Model(
        prob,
        last,
        last.scenarios[scenario_id],
        scenario_id,
        [],
        out_switches,
        lin([]),
        lin([]),
        lin([]),
        elastic,
    )
    demanding = any(not v.scenarios[scenario_id].demand.empty for v in views)
    for p, view in zip(periods, views, strict=True):
        # the period's own view, sharing the problem, slacks, unlocks and coupling rows (the same objects)
        sub = replace(
            model,
            catalog=view,
            scenario=view.scenarios[scenario_id],
            sites=[],
            periods=[],
            tag=f"_{p.tag}",
            when=f"in {p.start} ",
        )
        pm = PeriodModel(p, sub, _period_sites(base, p))
        sub.sites = pm.sites
        _define_period(prob, pm, out_switches, first)
        if not sub.scenario.demand.empty or (p is periods[-1] and not demanding):
            define_demand(prob, sub)
        model.periods.append(pm)
    model.window = _link_periods(prob, model.periods, out_switches)
    model.sites = model.periods[-1].sites
    define_supply(prob, model)
    _define_money(prob, model, model.periods)
    if elastic:
        define_unlocks(prob, model)
    elif cuts:
        # Per-site capacity cuts in each period: a period's site block holds the rows that mention only that
        # period's variables of the site (the rows linking periods are left out), so its bounds hold.
        from trnplan.optimize.cuts import add_capacity_cuts

        for pm in model.periods:
            add_capacity_cuts(pm.model)
    return model
