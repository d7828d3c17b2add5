"""The MILP's constraint families, as PyPSA's `constraints.py`: one `define_*` function each, its maths in
the docstring; each takes what it needs and returns what it adds (`define_site` registers a site's on its
`SiteModel`). Ids in sorted order, names by index (`model.name`); the fabric's rows are in `network`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulp

from trnplan.catalog import RACK_UNITS_PER_RACK, Catalog, Scenario
from trnplan.catalog.periods import price_schedules
from trnplan.costs import (
    Option,
    capex_usd_per_year,
    kw_capex_lives,
    kw_capex_usd,
    life_usd_per_year,
    make_option,
    network_rack_limit_kw,
    opex_usd_per_kw_year,
    option_lines,
    tco_per_capex_usd,
)
from trnplan.optimize.model import Model, PeriodModel, SiteModel, Slack, lin, name
from trnplan.optimize.network import FabricTerms, define_fabric

__all__ = [
    "add_capacity_row",
    "define_availability",
    "define_cooling_fixed",
    "define_demand",
    "define_fabric",
    "define_money",
    "define_site_costs",
    "define_site",
    "define_site_limits",
    "define_supply",
    "define_units",
    "define_unlocks",
    "define_window",
]


def define_units(prob: pulp.LpProblem, sm: SiteModel) -> list[Any]:
    """n[s,i] in {0..U[s,i]}."""
    return [prob.add_variable(name("n", sm.tag, i), 0, u, pulp.LpInteger) for i, u in enumerate(sm.upper)]


@dataclass(frozen=True)
class SiteCosts:
    """A site's IT kW (compute alone; all of it by cooling), the capex of its options and of the network's
    kW (fit-out; plant, build and power chain too at an owned site), and which of that capex has a life
    of its own: (variable, life_years, USD)."""

    compute_kw: list[tuple[Any, float]]
    kw_by_cooling: dict[str, list[tuple[Any, float]]]
    capex: list[tuple[Any, float]]
    lives: list[tuple[Any, float, float]]


def define_site_costs(
    catalog: Catalog, scenario: Scenario, sm: SiteModel, n: list[Any], network_kw: list[tuple[Any, float]]
) -> SiteCosts:
    """IT kW by cooling of units n and of the network, and their capex (at this view's prices)."""
    fabric_q = scenario.fabric.cooling
    by_cooling: dict[str, list[tuple[Any, float]]] = defaultdict(list)
    compute_kw: list[tuple[Any, float]] = []
    capex: list[tuple[Any, float]] = []
    lives: list[tuple[Any, float, float]] = []
    priced = price_schedules(catalog)
    for v, o in zip(n, sm.options, strict=True):
        by_cooling[o.cooling].append((v, o.it_kw))
        compute_kw.append((v, o.it_kw))
        if priced:  # the options are the widest view's: price them at this period's
            o = make_option(catalog, o.form, o.cooling, o.scale_up_switch, o.efficiency, sm.site)
        capex.append((v, o.capex_usd))
        lives.extend((v, life, usd) for life, usd in o.capex_lives)
    by_cooling[fabric_q].extend(network_kw)
    per_kw = kw_capex_usd(catalog, sm.site, fabric_q)
    capex.extend((v, c * per_kw) for v, c in network_kw)
    for life, usd in kw_capex_lives(catalog, sm.site, fabric_q):
        lives.extend((v, life, c * usd) for v, c in network_kw)
    return SiteCosts(compute_kw, dict(by_cooling), capex, lives)


def define_cooling_fixed(
    prob: pulp.LpProblem,
    catalog: Catalog,
    scenario: Scenario,
    sm: SiteModel,
    n: list[Any],
    fabric: FabricTerms,
    kw_by_cooling: dict[str, list[tuple[Any, float]]],
) -> tuple[dict[str, Any], list[tuple[Any, float]]]:
    """z[s,q] = 1 when cooling q serves any IT kW at s: compute kW <= site kW x z; fabric on => z. Returns
    z by cooling and their one-off capex."""
    site = catalog.sites[sm.site]
    fabric_q = scenario.fabric.cooling
    cooling_on: dict[str, Any] = {}
    capex: list[tuple[Any, float]] = []
    for q_index, q in enumerate(sorted(site.cooling_fixed_usd)):
        fixed = site.cooling_fixed_usd[q]
        if not fixed or q not in kw_by_cooling:
            continue
        z = prob.add_variable(name("z", sm.tag, q_index), 0, 1, pulp.LpBinary)
        cooling_on[q] = z
        capex.append((z, fixed))
        compute = [(v, o.it_kw) for v, o in zip(n, sm.options, strict=True) if o.cooling == q]
        if compute:
            big_m = min(
                site.it_power_kw,
                sum(u * o.it_kw for u, o in zip(sm.upper, sm.options, strict=True) if o.cooling == q),
            )
            prob += lin(compute + [(z, -big_m)]) <= 0, name("cooling_on", sm.tag, q_index)
        if q == fabric_q:
            _fabric_cooling_on(prob, catalog, sm.tag, fabric, z, q_index)
    return cooling_on, capex


def _fabric_cooling_on(
    prob: pulp.LpProblem, catalog: Catalog, tag: str, fabric: FabricTerms, z: Any, q_index: int
) -> None:
    """The fabric's cooling is used when the fabric draws any kW: a switch that draws power on => z; a
    fabric whose only power is optics or copper links (which copper can leave at 0 kW) => its kW <= M z."""
    for (o, t), y in sorted(fabric.y.items()):
        if catalog.switches[o].power_w > 0:
            prob += lin([(y, 1), (z, -1)]) <= 0, name("fabric_cooling", tag, q_index, o, t)
    pairs = [(v, c) for v, c in fabric.network_kw if c]  # copper ports K enter with a negative coefficient
    positive = [(v, c) for v, c in pairs if c > 0]
    if positive and all(v.upBound is not None for v, _ in positive):
        big_m = sum(c * v.upBound for v, c in positive)
        prob += lin(pairs + [(z, -big_m)]) <= 0, name("fabric_kw_on", tag, q_index)
    elif positive:  # no bound to scale the row by: any fabric on uses its cooling
        for (o, t), y in sorted(fabric.y.items()):
            prob += lin([(y, 1), (z, -1)]) <= 0, name("fabric_on", tag, q_index, o, t)


def define_site_limits(
    prob: pulp.LpProblem, model: Model, sm: SiteModel, n: list[Any], fabric: FabricTerms, costs: SiteCosts
) -> tuple[Any, list[tuple[Any, float]]]:
    """IT kW <= it_power; IT kW x PUE <= grid; compute + network racks R <= rack positions. Returns R and
    its capex."""
    catalog = model.catalog
    site = catalog.sites[sm.site]
    # R need not be integer: compute racks are whole and rack_positions is whole, so "compute racks + R <=
    # positions" holds exactly when it holds with R rounded up, which is the plan's network racks. The
    # elastic model keeps it integer, so that "needs N more positions" counts whole racks.
    # Network racks that cost a rack kit are whole too (the plan pays for whole racks).
    rack_usd = model.scenario.fabric.rack_usd
    whole = model.elastic or rack_usd > 0
    racks = prob.add_variable(name("R", sm.tag), 0, None, pulp.LpInteger if whole else pulp.LpContinuous)
    capex = [(racks, rack_usd)] if rack_usd else []
    ru = [(s, catalog.switches[o].rack_units or 1) for o, s in sorted(fabric.switches.items())]
    prob += lin([(racks, RACK_UNITS_PER_RACK)] + [(s, -u) for s, u in ru]) >= 0, name("netracks", sm.tag)
    # Network racks also hold their switches' power within the rack limit (fabric cooling, site).
    limit_kw = network_rack_limit_kw(catalog, model.scenario, sm.site)
    prob += (
        lin([(racks, limit_kw)] + [(v, -c) for v, c in fabric.network_rack_kw]) >= 0,
        name("netrackkw", sm.tag),
    )
    rows: dict[str, tuple[list[tuple[Any, float]], float, str, str, float]] = {
        name("power", sm.tag): (
            [(v, c / 1000) for v, c in costs.compute_kw + fabric.network_kw],
            catalog.usable_it_power_mw(site),
            f"{sm.when}{sm.site} IT power",
            "MW",
            1,
        ),
        name("positions", sm.tag): (
            [(v, o.racks) for v, o in zip(n, sm.options, strict=True)] + [(racks, 1)],
            site.rack_positions,
            f"{sm.when}{sm.site} rack positions",
            "positions",
            1,
        ),
    }
    for q_index, (q, cap) in enumerate(sorted(site.cooling_capacity_mw.items())):
        pairs = [(v, c / 1000) for v, c in costs.kw_by_cooling.get(q, [])]
        label = f"{sm.when}{sm.site} {q} cooling capacity"
        rows[name("cooling_cap", sm.tag, q_index)] = (pairs, cap, label, "MW", 1)
    if site.grid_power_mw is not None:
        by_cooling = costs.kw_by_cooling.items()
        facility = [(v, c * catalog.cooling[q].pue / 1000) for q, pairs in by_cooling for v, c in pairs]
        rows[name("grid", sm.tag)] = (facility, site.grid_power_mw, f"{sm.when}{sm.site} grid power", "MW", 1)
    for row, (pairs, rhs, label, unit, per) in rows.items():
        add_capacity_row(prob, model, row, pairs, rhs, label, unit, per)
    return racks, capex


def define_site(
    prob: pulp.LpProblem,
    model: Model,
    sm: SiteModel,
    out_switches: list[str],
    available: Any = None,
    *,
    tier_limits: bool = False,
) -> None:
    """Every row of one site in one period, its variables and money terms registered on `sm`; `available`
    (a model with periods: the period's start month and each option's first month) holds what cannot yet
    be bought at 0; `tier_limits` holds each fabric tier's ports within what the site allows at it."""
    catalog, scenario = model.catalog, model.scenario
    n = define_units(prob, sm)
    limits = scenario if tier_limits else None  # build_model: never in elastic mode
    fabric = define_fabric(prob, catalog, sm, n, out_switches, scenario.fabric, limits)
    if available is not None:
        define_availability(catalog, sm, n, fabric, *available)
    costs = define_site_costs(catalog, scenario, sm, n, fabric.network_kw)
    cooling_on, cooling_capex = define_cooling_fixed(
        prob, catalog, scenario, sm, n, fabric, costs.kw_by_cooling
    )
    racks, rack_capex = define_site_limits(prob, model, sm, n, fabric, costs)
    sm.n, sm.y, sm.ports, sm.switches, sm.optics = n, fabric.y, fabric.ports, fabric.switches, fabric.optics
    sm.total, sm.extras, sm.cooling_on, sm.racks = fabric.total, fabric.extras, cooling_on, racks
    sm.kw_by_cooling = costs.kw_by_cooling
    sm.capex = fabric.capex + costs.capex + cooling_capex + rack_capex
    sm.lives = costs.lives + [
        (v, life, c)
        for o, pairs in fabric.priced.items()
        if (life := catalog.switches[o].life_years) is not None
        for v, c in pairs
    ]


def add_capacity_row(
    prob: pulp.LpProblem,
    model: Model,
    row: str,
    pairs: list[tuple[Any, float]],
    rhs: float,
    label: str,
    unit: str,
    per: float,
) -> None:
    """sum(pairs) <= rhs; in elastic mode with a slack priced relative to the limit."""
    expr = lin(pairs)
    if model.elastic:
        slack = prob.add_variable(name("slack", row), 0, None, pulp.LpContinuous)
        model.slacks[row] = Slack(slack, label, unit, per, rhs)
        expr = expr - slack
    prob += expr <= rhs, row


def define_demand(prob: pulp.LpProblem, model: Model) -> None:
    """Every demand given holds: chips, FP8 PFLOPs, HBM TB, effective FP8 PFLOPs (peak x the workload's
    efficiency of each option); and no more than `demand.at_most` of chips, FP8 PFLOPs, HBM TB."""
    demand = model.scenario.demand
    keys = ["chips", "fp8_pflops", "hbm_tb"]
    if demand.effective_fp8_pflops is not None:
        keys.append("effective_fp8_pflops")
    pairs_by: dict[str, list[tuple[Any, float]]] = {key: [] for key in keys}
    for sm in model.sites:
        for v, o in zip(sm.n, sm.options, strict=True):
            for key in keys:
                pairs_by[key].append((v, getattr(o, key)))
    for key, pairs in pairs_by.items():
        need = getattr(demand, key)
        if need is None:
            continue
        expr = lin(pairs)
        if model.elastic:
            short = prob.add_variable(name("short", key, suffix=model.tag), 0, None, pulp.LpContinuous)
            label = f"{model.when}demand"
            row = name("demand", key, suffix=model.tag)
            model.slacks[row] = Slack(short, label, key, 1, need, shortfall=True)
            expr = expr + short
        prob += expr >= need, name("demand", key, suffix=model.tag)
        model.coupling.append(name("demand", key, suffix=model.tag))
        model.demand_rows.append((name("demand", key, suffix=model.tag), key))
    for key, pairs in pairs_by.items():  # demand.at_most: the most a plan may hold (an extension)
        cap = demand.cap(key) if key != "effective_fp8_pflops" else None
        if cap is not None:
            row = name("demand_at_most", key, suffix=model.tag)
            add_capacity_row(prob, model, row, pairs, cap, f"{model.when}demand cap {key}", key, 1)
            model.coupling.append(row)
    if demand.empty:
        prob += lin([(v, 1) for sm in model.sites for v in sm.n]) >= 1, "some_deployment"
        model.coupling.append("some_deployment")


def define_supply(prob: pulp.LpProblem, model: Model) -> None:
    """Caps on chips, forms, scale-up and scale-out switches, summed over sites."""
    for s_index, (key, cap) in enumerate(sorted(model.scenario.supply.items())):
        pairs: list[tuple[Any, float]] = []
        for sm in model.sites:
            for v, o in zip(sm.n, sm.options, strict=True):
                per_unit = (o.chips if o.chip == key else 0) + (1 if o.form == key else 0)
                per_unit += o.scale_up_switches if o.scale_up_switch == key else 0
                if per_unit:
                    pairs.append((v, per_unit))
            if key in sm.switches:
                pairs.append((sm.switches[key], 1))
        if pairs:
            add_capacity_row(prob, model, name("supply", s_index), pairs, cap, f"supply of {key}", "units", 1)
            model.coupling.append(name("supply", s_index))


def define_money(prob: pulp.LpProblem, model: Model) -> None:
    """capex = the last period's installed capex (all bought in the window); TCO = sum over periods of
    L_p [(CRF + m) C_p + opex_p] (one period: horizon x (CRF + m) x capex + horizon x opex), opex_p with
    the residual of capex with lives of its own; prices that change between periods add what a purchase
    in p pays over its price at p+1 (`define_price_steps`); performance in effective FP8 PFLOPs
    (PFLOP-years over periods); the budgets."""
    scenario = model.scenario
    tco_capex: list[tuple[Any, float]] = []
    tco_kw: list[tuple[Any, float]] = []
    perf: list[tuple[Any, float]] = []
    for pm in model.periods:
        catalog, years = pm.model.catalog, pm.period.years
        for sm in pm.sites:
            site = catalog.sites[sm.site]
            if model.multi:
                per_capex = capex_usd_per_year(scenario)
                tco_capex.extend((v, c * per_capex * years) for v, c in sm.capex)
            else:
                tco_capex.extend((v, c * tco_per_capex_usd(scenario)) for v, c in sm.capex)
            for q, pairs in sm.kw_by_cooling.items():
                rate = opex_usd_per_kw_year(site, catalog.cooling[q].pue, pm.model.scenario, q) * years
                (tco_capex if model.multi else tco_kw).extend((v, c * rate) for v, c in pairs)
            residual = [(v, usd * life_usd_per_year(scenario, life) * years) for v, life, usd in sm.lives]
            (tco_capex if model.multi else tco_kw).extend(residual)
            weight = years if model.multi else 1.0
            perf.extend((v, o.effective_fp8_pflops * weight) for v, o in zip(sm.n, sm.options, strict=True))
    capex_pairs = [pair for sm in model.periods[-1].sites for pair in sm.capex]
    if model.multi and price_schedules(model.periods[0].model.catalog):
        steps_tco, steps_capex = define_price_steps(model)
        tco_capex.extend(steps_tco)
        capex_pairs.extend(steps_capex)
    model.capex, model.tco, model.perf = lin(capex_pairs), lin(tco_capex + tco_kw), lin(perf)
    budget = scenario.budget
    if budget.capex_usd is not None:
        add_capacity_row(prob, model, "budget_capex", capex_pairs, budget.capex_usd, "capex budget", "USD", 1)
        model.coupling.append("budget_capex")
    if budget.tco_usd is not None:
        tco = tco_capex + tco_kw
        add_capacity_row(prob, model, "budget_tco", tco, budget.tco_usd, "TCO budget", "USD", 1)
        model.coupling.append("budget_tco")


def _priced_lines(catalog: Catalog, sm: SiteModel) -> list[list[tuple[float, float | None]]]:
    """Each option's lines whose price may follow a schedule (chips, scale-up switches): (USD, life)."""
    return [
        [
            (qty * unit, life)
            for category, _item, qty, unit, life in option_lines(catalog, *o.key)
            if category in ("chips", "scale_up")
        ]
        for o in sm.options
    ]


def define_price_steps(model: Model) -> tuple[list[tuple[Any, float]], list[tuple[Any, float]]]:
    """Prices that change between periods: what is installed in p was bought at p's prices or before, so
    sum_p W_p (C_p(n_p) - C_p(n_p-1)) = sum_p L_p C_p(n_p) + sum_p W_p+1 (c_p - c_p+1) n_p, c a unit's price:
    the TCO terms (c_p - c_p+1) W_p+1 (CRF(life) + m) on n[s,i,p], and the capex terms (c_p - c_p+1) (all
    bought, at the prices paid). Only chips and scale-up switches follow schedules: their quantities are
    the units' (a scale-out fabric is sized from what is installed, so it is never bought ahead)."""
    scenario = model.scenario
    tco: list[tuple[Any, float]] = []
    capex: list[tuple[Any, float]] = []

    def rate(life: float | None) -> float:
        return capex_usd_per_year(scenario) + life_usd_per_year(scenario, life)

    for pm, nxt in zip(model.periods, model.periods[1:], strict=False):
        here, there, weight = pm.model.catalog, nxt.model.catalog, nxt.period.remaining_years
        for sm, sm_next in zip(pm.sites, nxt.sites, strict=True):
            lines = zip(_priced_lines(here, sm), _priced_lines(there, sm_next), strict=True)
            for v, (now, later) in zip(sm.n, lines, strict=True):
                step = sum(a - b for (a, _), (b, _) in zip(now, later, strict=True))
                charge = sum((a - b) * rate(life) for (a, life), (b, _) in zip(now, later, strict=True))
                if step:
                    capex.append((v, step))
                    tco.append((v, charge * weight))
    return tco, capex


def define_availability(
    catalog: Catalog,
    sm: SiteModel,
    n: list[Any],
    fabric: FabricTerms,
    month: str,
    when: Callable[[Option], str],
) -> None:
    """A period's units and fabric modes are held at 0 before they can be bought (`when`, a month)."""
    for i, var in enumerate(n):
        if when(sm.options[i]) > month:
            var.upBound = 0
    for (o, _t), y in fabric.y.items():
        if (catalog.switches[o].available_from or "") > month:
            y.upBound = 0


def define_window(
    prob: pulp.LpProblem, periods: list[PeriodModel], out_switches: list[str]
) -> list[dict[str, Any]]:
    """Installed units only grow; one scale-out switch type per site over the window. Returns each site's
    x[s,o] by scale-out switch type."""
    for prev, cur in zip(periods, periods[1:], strict=False):
        for a, b in zip(prev.sites, cur.sites, strict=True):
            for i, (va, vb) in enumerate(zip(a.n, b.n, strict=True)):
                prob += lin([(vb, 1), (va, -1)]) >= 0, name("grow", b.tag, i)
    window: list[dict[str, Any]] = []
    for per_site in zip(*(pm.sites for pm in periods), strict=True):
        index = per_site[0].index
        xs = []
        window.append({})
        for o_index, o in enumerate(out_switches):
            ys = [[y for (oo, _t), y in sm.y.items() if oo == o] for sm in per_site]
            if not any(ys):
                continue
            x = prob.add_variable(name("x", index, o_index), 0, 1, pulp.LpBinary)
            xs.append((x, 1.0))
            window[-1][o] = x
            for sm, y_list in zip(per_site, ys, strict=True):
                if y_list:
                    prob += lin([(y, 1) for y in y_list] + [(x, -1)]) <= 0, name("one_type", sm.tag, o_index)
        if xs:
            prob += lin(xs) <= 1, name("one_type", index)
    return window


def define_unlocks(prob: pulp.LpProblem, model: Model) -> None:
    """Elastic mode: a blocked option may be used only behind a binary per (site, reason)."""
    groups: dict[str, list[tuple[Any, int]]] = defaultdict(list)
    for sm in model.sites:
        for i, why in sorted(sm.blocked.items()):
            for why_not in why:
                groups[why_not.text].append((sm.n[i], sm.upper[i]))
    for g_index, reason in enumerate(sorted(groups)):
        unlock = prob.add_variable(name("unlock", g_index), 0, 1, pulp.LpBinary)
        model.unlocks[name("unlock", g_index)] = (unlock, reason)
        for v, upper in groups[reason]:
            prob += lin([(v, 1), (unlock, -upper)]) <= 0, name("unlock", g_index, v.name)
