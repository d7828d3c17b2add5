"""The MILP's constraint families: one `define_*` function each, its maths in the docstring, ids in sorted
order and names built by index (see `trnplan.optimize.model` for the variables)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pulp

from trnplan.catalog import RACK_UNITS_PER_RACK, Catalog, Fabric, Scenario, Switch
from trnplan.costs import kw_capex_usd, network_rack_limit_kw, opex_usd_per_kw_year, tco_per_capex_usd
from trnplan.costs.fabric import MAX_TIERS, switch_side_optics_per_port, tier_capacity
from trnplan.optimize.model import Model, SiteModel, Slack, lin


def define_units(prob: pulp.LpProblem, sm: SiteModel) -> None:
    """n[s,i] in {0..U[s,i]}."""
    sm.n = [
        prob.add_variable(f"n_{sm.tag}_{i}", 0, sm.upper[i], pulp.LpInteger) for i in range(len(sm.options))
    ]


def max_fabric_load(catalog: Catalog, sm: SiteModel) -> tuple[float, float]:
    """Upper bounds on the site's scale-out Gb/s and rack-side optics, from its options' bounds."""
    if not sm.options:
        return 0.0, 0.0
    site = catalog.sites[sm.site]
    kw_budget = max(site.it_power_kw, max(u * o.it_kw for u, o in zip(sm.upper, sm.options, strict=True)))
    gbps_by_kw = max(o.scale_out_gbps / o.it_kw for o in sm.options)
    optics_by_kw = max(o.endpoint_optics / o.it_kw for o in sm.options)
    gbps_sum = sum(u * o.scale_out_gbps for u, o in zip(sm.upper, sm.options, strict=True))
    optics_sum = sum(u * o.endpoint_optics for u, o in zip(sm.upper, sm.options, strict=True))
    return min(gbps_sum, kw_budget * gbps_by_kw), min(optics_sum, kw_budget * optics_by_kw)


def fabric_tiers(
    sm: SiteModel, radix: int, port_gbps: float, max_ports: int, oversubscription: float = 1.0
) -> list[int]:
    """Tiers up to the first that covers the site's most ports, less those too small for one unit."""
    min_ports = min(
        (math.ceil(o.scale_out_gbps / port_gbps - 1e-9) for o in sm.options if o.scale_out_gbps > 0),
        default=0,
    )
    tiers = []
    for t in range(1, MAX_TIERS + 1):
        if tier_capacity(radix, t, oversubscription) >= min_ports:
            tiers.append(t)
        if max_ports <= tier_capacity(radix, t, oversubscription):
            break
    return tiers


@dataclass
class _FabricRows:
    """What each switch type adds to the site's fabric rows, gathered for the rows that sum over types."""

    tier_sum: list[tuple[Any, float]] = field(default_factory=list)
    port_cover: list[tuple[Any, float]] = field(default_factory=list)
    optics_split: list[tuple[Any, float]] = field(default_factory=list)
    switch_count: list[tuple[Any, float]] = field(default_factory=list)
    copper_split: list[tuple[Any, float]] = field(default_factory=list)
    max_count: int = 0


def _uplinks(prob: pulp.LpProblem, name: str, ports: Any, cap: int, y: Any, oversubscription: float) -> Any:
    """Leaf uplink ports of a tier count's N: N itself when non-blocking, else an integer U >= N / r."""
    if oversubscription == 1:
        return ports
    bound = math.ceil(cap / oversubscription - 1e-9)
    up = prob.add_variable(f"U_{name}", 0, bound, pulp.LpInteger)
    prob += lin([(up, oversubscription), (ports, -1)]) >= 0, f"uplinks_{name}"
    prob += lin([(up, 1), (y, -bound)]) <= 0, f"uplinks_on_{name}"
    return up


def _copper_ports(
    prob: pulp.LpProblem, sm: SiteModel, o_index: int, n_terms: list[tuple[Any, int]], cap: int
) -> Any:
    """K[s,o] <= N[s,o]: the leaf down-ports of switch o that copper links take (their ends carry no optic);
    the site's K sum to at most its copper links (`define_fabric`), so K = min(N, copper links)."""
    k_var = prob.add_variable(f"K_{sm.tag}_{o_index}", 0, cap, pulp.LpContinuous)
    prob += lin([(k_var, 1)] + [(p, -1) for p, _t in n_terms]) <= 0, f"copper_on_{sm.tag}_{o_index}"
    return k_var


def _tier_variables(
    prob: pulp.LpProblem,
    sm: SiteModel,
    o_index: int,
    o: tuple[str, Switch],
    tiers: list[int],
    max_ports: int,
    fabric: Fabric,
    rows: _FabricRows,
) -> tuple[list[Any], list[tuple[Any, int]], list[tuple[Any, int]]]:
    """Per tier count t: y[s,o,t], N[s,o,t] <= cap_t y, and (oversubscribed, t > 1) the leaf uplinks U."""
    switch_id, sw = o
    port_gbps = sw.port_gbps or 1.0
    r = fabric.oversubscription
    # Ports per unit are whole for every option here -> N is whole at any vertex that matters; keep it
    # continuous (integer only when some option's ports per unit are fractional, for the ceil).
    whole = all(
        abs(o_.scale_out_gbps / port_gbps - round(o_.scale_out_gbps / port_gbps)) < 1e-9 for o_ in sm.options
    )
    port_cat = pulp.LpContinuous if whole else pulp.LpInteger
    y_o, n_terms, up_terms = [], [], []
    for t in tiers:
        cap = min(tier_capacity(sw.radix, t, r), max_ports)
        y = prob.add_variable(f"y_{sm.tag}_{o_index}_{t}", 0, 1, pulp.LpBinary)
        ports = prob.add_variable(f"N_{sm.tag}_{o_index}_{t}", 0, cap, port_cat)
        prob += lin([(ports, 1), (y, -cap)]) <= 0, f"portcap_{sm.tag}_{o_index}_{t}"
        sm.y[(switch_id, t)] = y
        sm.ports[(switch_id, t)] = ports
        y_o.append(y)
        n_terms.append((ports, t))
        if t > 1 and r != 1:
            up = _uplinks(prob, f"{sm.tag}_{o_index}_{t}", ports, cap, y, r)
            sm.extras.append(up)
            up_terms.append((up, t))
        rows.port_cover.append((ports, port_gbps))
    return y_o, n_terms, up_terms


def define_switch_type(
    prob: pulp.LpProblem,
    catalog: Catalog,
    sm: SiteModel,
    o_index: int,
    o: str,
    tiers: list[int],
    max_ports: int,
    max_optics: float,
    rows: _FabricRows,
    fabric: Fabric,
) -> None:
    """Switch type o at the site: y[s,o,t] and N[s,o,t] <= cap_t y per tier; leaf uplinks U[s,o,t] >= N / r;
    S[s,o] >= (N + 2(t-1) U) / k ((2t-1) N / k non-blocking), zero unless o is chosen; switch-side optics =
    the same ports less the copper links' leaf ends; rack-side optics E[s,o] <= optics per port x N; its
    power and capex terms."""
    sw = catalog.switches[o]
    port_gbps = sw.port_gbps or 1.0
    k = sw.radix
    y_o, n_terms, up_terms = _tier_variables(prob, sm, o_index, (o, sw), tiers, max_ports, fabric, rows)
    if fabric.oversubscription == 1:  # non-blocking: (2t - 1) N switch ports, as the first version
        port_pairs = [(p, float(switch_side_optics_per_port(t))) for p, t in n_terms]
        above = [(p, float(2 * (t - 1))) for p, t in n_terms if t > 1]
    else:
        above = [(u, float(2 * (t - 1))) for u, t in up_terms]
        port_pairs = [(p, 1.0) for p, _t in n_terms] + above
    max_switches = math.ceil(max(switch_side_optics_per_port(t) for t in tiers) * max_ports / k)
    # Continuous: zero unless one of this switch's tiers is chosen, then equal to the integer T[s].
    s_var = prob.add_variable(f"S_{sm.tag}_{o_index}", 0, max_switches, pulp.LpContinuous)
    sm.switches[o] = s_var
    prob += lin([(s_var, 1)] + [(y, -max_switches) for y in y_o]) <= 0, f"switch_on_{sm.tag}_{o_index}"
    rows.switch_count.append((s_var, 1))
    rows.max_count = max(rows.max_count, max_switches)
    prob += lin([(s_var, k)] + [(v, -c) for v, c in port_pairs]) >= 0, f"switches_{sm.tag}_{o_index}"
    # Rack-side optics go with the switch that serves the ports: E_o <= (optics per port at most) x N_o.
    optics_per_port = max(o_.endpoint_optics * port_gbps / o_.scale_out_gbps for o_ in sm.options)
    e_var = prob.add_variable(f"E_{sm.tag}_{o_index}", 0, max_optics, pulp.LpContinuous)
    sm.optics[o] = e_var
    prob += (
        lin([(e_var, 1)] + [(p, -optics_per_port) for p, _t in n_terms]) <= 0,
        f"optics_on_{sm.tag}_{o_index}",
    )
    rows.optics_split.append((e_var, 1))
    rows.tier_sum.extend((y, 1) for y in y_o)
    switch_optics = port_pairs
    if any(o_.copper_links for o_ in sm.options):
        k_var = _copper_ports(prob, sm, o_index, n_terms, max_ports)
        sm.extras.append(k_var)
        rows.copper_split.append((k_var, 1))
        switch_optics = [*port_pairs, (k_var, -1.0)]
    optic_pairs = switch_optics + [(e_var, 1)]
    sm.network_rack_kw.append((s_var, sw.power_w / 1000))
    sm.network_rack_kw.extend((v, c * sw.optic_w / 1000) for v, c in switch_optics)
    sm.network_kw.append((s_var, sw.power_w / 1000))
    sm.network_kw.extend((v, c * sw.optic_w / 1000) for v, c in optic_pairs)
    sm.capex.append((s_var, sw.unit_usd))
    sm.capex.extend((v, c * sw.optic_usd) for v, c in optic_pairs)


def define_fabric(
    prob: pulp.LpProblem,
    catalog: Catalog,
    sm: SiteModel,
    out_switches: list[str],
    fabric: Fabric | None = None,
) -> None:
    """Ports cover the site's scale-out bandwidth; one switch type and tier; switches >= (2t-1) N / k;
    copper links' power goes with the network."""
    fabric = fabric or Fabric()
    max_gbps, max_optics = max_fabric_load(catalog, sm)
    units = lin([(v, 1) for v in sm.n])
    rows = _FabricRows()
    for o_index, o in enumerate(out_switches):
        sw = catalog.switches[o]
        port_gbps = sw.port_gbps or 1.0
        max_ports = math.ceil(max_gbps / port_gbps - 1e-9)
        if max_ports == 0:
            continue
        tiers = fabric_tiers(sm, sw.radix, port_gbps, max_ports, fabric.oversubscription)
        if tiers:
            define_switch_type(prob, catalog, sm, o_index, o, tiers, max_ports, max_optics, rows, fabric)
    sm.network_kw.extend((v, o.copper_kw) for v, o in zip(sm.n, sm.options, strict=True) if o.copper_kw)
    if rows.copper_split:
        copper = [(v, o.copper_links) for v, o in zip(sm.n, sm.options, strict=True) if o.copper_links]
        prob += lin(rows.copper_split) - lin(copper) <= 0, f"copper_{sm.tag}"
    if rows.switch_count:
        # One switch type per site (one_fabric), so the one S[s,o] that may be non-zero is this integer.
        total = prob.add_variable(f"T_{sm.tag}", 0, rows.max_count, pulp.LpInteger)
        sm.total = total
        prob += lin(rows.switch_count + [(total, -1)]) == 0, f"switch_count_{sm.tag}"
    prob += lin(rows.tier_sum) <= 1, f"one_fabric_{sm.tag}"
    prob += lin(rows.tier_sum) - units <= 0, f"fabric_if_used_{sm.tag}"
    ref = min((c for _, c in rows.port_cover), default=1.0)  # Gb/s of the smallest port: coefficients near 1
    gbps = [(v, o.scale_out_gbps / ref) for v, o in zip(sm.n, sm.options, strict=True)]
    prob += lin([(p, c / ref) for p, c in rows.port_cover]) - lin(gbps) >= 0, f"ports_{sm.tag}"
    eo = [(v, o.endpoint_optics) for v, o in zip(sm.n, sm.options, strict=True)]
    prob += lin(rows.optics_split) - lin(eo) == 0, f"optics_{sm.tag}"


def define_site_costs(catalog: Catalog, scenario: Scenario, sm: SiteModel) -> None:
    """Compute IT kW by cooling, and capex of options and of the network's cooling."""
    fabric_q = scenario.fabric.cooling
    by_cooling: dict[str, list[tuple[Any, float]]] = defaultdict(list)
    for v, o in zip(sm.n, sm.options, strict=True):
        by_cooling[o.cooling].append((v, o.it_kw))
        sm.compute_kw.append((v, o.it_kw))
        sm.capex.append((v, o.capex_usd))
    by_cooling[fabric_q].extend(sm.network_kw)
    per_kw = kw_capex_usd(catalog, sm.site, fabric_q)  # fit-out; plant and build too at an owned site
    sm.capex.extend((v, c * per_kw) for v, c in sm.network_kw)
    sm.kw_by_cooling = dict(by_cooling)


def define_cooling_fixed(prob: pulp.LpProblem, catalog: Catalog, scenario: Scenario, sm: SiteModel) -> None:
    """z[s,q] = 1 when cooling q serves any IT kW at s: compute kW <= site kW x z; fabric on => z."""
    site = catalog.sites[sm.site]
    fabric_q = scenario.fabric.cooling
    for q_index, q in enumerate(sorted(site.cooling_fixed_usd)):
        fixed = site.cooling_fixed_usd[q]
        if not fixed or q not in sm.kw_by_cooling:
            continue
        z = prob.add_variable(f"z_{sm.tag}_{q_index}", 0, 1, pulp.LpBinary)
        sm.cooling_on[q] = z
        sm.capex.append((z, fixed))
        compute = [(v, o.it_kw) for v, o in zip(sm.n, sm.options, strict=True) if o.cooling == q]
        if compute:
            big_m = min(
                site.it_power_kw,
                sum(u * o.it_kw for u, o in zip(sm.upper, sm.options, strict=True) if o.cooling == q),
            )
            prob += lin(compute + [(z, -big_m)]) <= 0, f"cooling_on_{sm.tag}_{q_index}"
        if q == fabric_q:
            _fabric_cooling_on(prob, catalog, sm, z, q_index)


def _fabric_cooling_on(prob: pulp.LpProblem, catalog: Catalog, sm: SiteModel, z: Any, q_index: int) -> None:
    """The fabric's cooling is used when the fabric draws any kW: a switch that draws power on => z; a
    fabric whose only power is optics or copper links (which copper can leave at 0 kW) => its kW <= M z."""
    for (o, t), y in sorted(sm.y.items()):
        if catalog.switches[o].power_w > 0:
            prob += (
                lin([(y, 1), (z, -1)]) <= 0,
                f"fabric_cooling_{sm.tag}_{q_index}_{o}_{t}".replace("-", "_").replace(".", "p"),
            )
    pairs = [(v, c) for v, c in sm.network_kw if c]  # copper ports K enter with a negative coefficient
    positive = [(v, c) for v, c in pairs if c > 0]
    if positive and all(v.upBound is not None for v, _ in positive):
        big_m = sum(c * v.upBound for v, c in positive)
        prob += lin(pairs + [(z, -big_m)]) <= 0, f"fabric_kw_on_{sm.tag}_{q_index}"
    elif positive:  # no bound to scale the row by: any fabric on uses its cooling
        for (o, t), y in sorted(sm.y.items()):
            name = f"fabric_on_{sm.tag}_{q_index}_{o}_{t}".replace("-", "_").replace(".", "p")
            prob += lin([(y, 1), (z, -1)]) <= 0, name


def define_site_limits(prob: pulp.LpProblem, model: Model, sm: SiteModel) -> None:
    """IT kW <= it_power; IT kW x PUE <= grid; compute + network racks <= rack positions."""
    catalog = model.catalog
    site = catalog.sites[sm.site]
    # R need not be integer: compute racks are whole and rack_positions is whole, so "compute racks + R <=
    # positions" holds exactly when it holds with R rounded up, which is the plan's network racks. The
    # elastic model keeps it integer, so that "needs N more positions" counts whole racks.
    # Network racks that cost a rack kit are whole too (the plan pays for whole racks).
    rack_usd = model.scenario.fabric.rack_usd
    whole = model.elastic or rack_usd > 0
    sm.racks = prob.add_variable(f"R_{sm.tag}", 0, None, pulp.LpInteger if whole else pulp.LpContinuous)
    if rack_usd:
        sm.capex.append((sm.racks, rack_usd))
    ru = [(s, catalog.switches[o].rack_units or 1) for o, s in sorted(sm.switches.items())]
    prob += lin([(sm.racks, RACK_UNITS_PER_RACK)] + [(s, -u) for s, u in ru]) >= 0, f"netracks_{sm.tag}"
    # Network racks also hold their switches' power within the rack limit (fabric cooling, site).
    limit_kw = network_rack_limit_kw(catalog, model.scenario, sm.site)
    prob += (
        lin([(sm.racks, limit_kw)] + [(v, -c) for v, c in sm.network_rack_kw]) >= 0,
        f"netrackkw_{sm.tag}",
    )
    rows: dict[str, tuple[list[tuple[Any, float]], float, str, str, float]] = {
        f"power_{sm.tag}": (
            [(v, c / 1000) for v, c in sm.compute_kw + sm.network_kw],
            site.it_power_mw,
            f"{sm.when}{sm.site} IT power",
            "MW",
            1,
        ),
        f"positions_{sm.tag}": (
            [(v, o.racks) for v, o in zip(sm.n, sm.options, strict=True)] + [(sm.racks, 1)],
            site.rack_positions,
            f"{sm.when}{sm.site} rack positions",
            "positions",
            1,
        ),
    }
    if site.grid_power_mw is not None:
        facility = [
            (v, c * catalog.cooling[q].pue / 1000) for q, pairs in sm.kw_by_cooling.items() for v, c in pairs
        ]
        rows[f"grid_{sm.tag}"] = (facility, site.grid_power_mw, f"{sm.when}{sm.site} grid power", "MW", 1)
    for name, (pairs, rhs, label, unit, per) in rows.items():
        add_capacity_row(prob, model, name, pairs, rhs, label, unit, per)


def add_capacity_row(
    prob: pulp.LpProblem,
    model: Model,
    name: str,
    pairs: list[tuple[Any, float]],
    rhs: float,
    label: str,
    unit: str,
    per: float,
) -> None:
    """sum(pairs) <= rhs; in elastic mode with a slack priced relative to the limit."""
    expr = lin(pairs)
    if model.elastic:
        slack = prob.add_variable(f"slack_{name}", 0, None, pulp.LpContinuous)
        model.slacks[name] = Slack(slack, label, unit, per, rhs)
        expr = expr - slack
    prob += expr <= rhs, name


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
            short = prob.add_variable(f"short_{key}{model.tag}", 0, None, pulp.LpContinuous)
            label = f"{model.when}demand"
            model.slacks[f"demand_{key}{model.tag}"] = Slack(short, label, key, 1, need, shortfall=True)
            expr = expr + short
        prob += expr >= need, f"demand_{key}{model.tag}"
        model.coupling.append(f"demand_{key}{model.tag}")
    for key, pairs in pairs_by.items():  # demand.at_most: the most a plan may hold (an extension)
        cap = demand.cap(key) if key != "effective_fp8_pflops" else None
        if cap is not None:
            name = f"demand_at_most_{key}{model.tag}"
            add_capacity_row(prob, model, name, pairs, cap, f"{model.when}demand cap {key}", key, 1)
            model.coupling.append(name)
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
            add_capacity_row(prob, model, f"supply_{s_index}", pairs, cap, f"supply of {key}", "units", 1)
            model.coupling.append(f"supply_{s_index}")


def define_objective(prob: pulp.LpProblem, model: Model) -> None:
    """capex, TCO = capex x horizon x (CRF + maintenance) + horizon x sum kW x opex/kW-year; budgets."""
    catalog, scenario = model.catalog, model.scenario
    capex_pairs: list[tuple[Any, float]] = []
    kw_cost: list[tuple[Any, float]] = []
    for sm in model.sites:
        site = catalog.sites[sm.site]
        capex_pairs.extend(sm.capex)
        for q, pairs in sm.kw_by_cooling.items():
            rate = opex_usd_per_kw_year(site, catalog.cooling[q].pue, scenario) * scenario.horizon_years
            kw_cost.extend((v, c * rate) for v, c in pairs)
    model.capex = lin(capex_pairs)
    per_capex = tco_per_capex_usd(scenario)
    model.tco = lin([(v, c * per_capex) for v, c in capex_pairs] + kw_cost)
    # Performance: effective FP8 PFLOPs (peak x the workload's efficiency; peak itself without a workload).
    model.perf = lin(
        [(v, o.effective_fp8_pflops) for sm in model.sites for v, o in zip(sm.n, sm.options, strict=True)]
    )
    budget = scenario.budget
    if budget.capex_usd is not None:
        add_capacity_row(prob, model, "budget_capex", capex_pairs, budget.capex_usd, "capex budget", "USD", 1)
        model.coupling.append("budget_capex")
    if budget.tco_usd is not None:
        add_capacity_row(
            prob, model, "budget_tco", list(model.tco.items()), budget.tco_usd, "TCO budget", "USD", 1
        )
        model.coupling.append("budget_tco")


def define_unlocks(prob: pulp.LpProblem, model: Model) -> None:
    """Elastic mode: a blocked option may be used only behind a binary per (site, reason)."""
    groups: dict[str, list[tuple[Any, int]]] = defaultdict(list)
    for sm in model.sites:
        for i, why in sorted(sm.blocked.items()):
            for why_not in why:
                groups[why_not.text].append((sm.n[i], sm.upper[i]))
    for g_index, reason in enumerate(sorted(groups)):
        unlock = prob.add_variable(f"unlock_{g_index}", 0, 1, pulp.LpBinary)
        model.unlocks[f"unlock_{g_index}"] = (unlock, reason)
        for v, upper in groups[reason]:
            prob += lin([(v, 1), (unlock, -upper)]) <= 0, f"unlock_{g_index}_{v.name}"
