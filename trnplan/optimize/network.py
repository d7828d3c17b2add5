"""The scale-out fabric's rows of one site: ports cover its bandwidth, one switch type and tier count,
switches and optics by tier (see `trnplan.optimize.model` for the variables)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pulp

from trnplan.catalog import RACK_UNITS_PER_RACK, Catalog, Fabric, Scenario, Switch
from trnplan.costs import network_rack_limit_kw
from trnplan.costs.fabric import MAX_TIERS, switch_ports_per_port, switch_side_optics_per_port, tier_capacity
from trnplan.optimize.model import SiteModel, lin, name


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


def tier_port_limit(catalog: Catalog, scenario: Scenario, sm: SiteModel, sw: Switch, tiers: int) -> float:
    """The most endpoint ports the site's units can need on a `tiers`-tier fabric of switch `sw`: each of
    the site's IT power, grid and rack positions rows alone, with what one unit of each option takes of it
    with its share of this fabric at the least (its switches at ports x (2t - 1) / k, their optics less its
    copper links, its rack-side optics and copper power; network racks by rack units and by kW), allows at
    most rhs x max over options of (ports / usage) ports. Every row holds in any plan, and a plan's ports
    N can be cut to the units' need at no cost (`define_fabric`), so N <= this limit keeps an optimal
    plan: the perspective N <= cap y is then as tight as the site allows, where the topology's capacity
    alone leaves the LP free to buy most of a site's ports at the cheaper tier's price. inf: no bound."""
    site = catalog.sites[sm.site]
    port_gbps = sw.port_gbps or 1.0
    per_port = switch_ports_per_port(tiers, scenario.fabric.oversubscription)
    pue_fabric = catalog.cooling[scenario.fabric.cooling].pue
    rack_kw = network_rack_limit_kw(catalog, scenario, sm.site)
    rows: list[tuple[float, list[tuple[float, float]]]] = [
        (catalog.usable_it_power_mw(site) * 1000, []),
        (float(site.rack_positions), []),
        (float(site.rack_positions), []),
    ]
    if site.grid_power_mw is not None:
        rows.append((site.grid_power_mw * 1000, []))
    for o in sm.options:
        ports = o.scale_out_gbps / port_gbps
        if ports <= 0:
            continue
        switches = ports * per_port / sw.radix
        optics = ports * per_port - o.copper_links + o.endpoint_optics
        switch_rack_kw = (switches * sw.power_w + (ports * per_port - o.copper_links) * sw.optic_w) / 1000
        fabric_kw = o.copper_kw + (switches * sw.power_w + optics * sw.optic_w) / 1000
        usage = [
            o.it_kw + fabric_kw,
            o.racks + switches * (sw.rack_units or 1) / RACK_UNITS_PER_RACK,
            o.racks + switch_rack_kw / rack_kw,
        ]
        if site.grid_power_mw is not None:
            usage.append(o.it_kw * catalog.cooling[o.cooling].pue + fabric_kw * pue_fabric)
        for (_rhs, pairs), used in zip(rows, usage, strict=True):
            pairs.append((ports, used))
    limit = math.inf
    for rhs, pairs in rows:
        if pairs and all(used > 0 for _ports, used in pairs):
            limit = min(limit, rhs * max(ports / used for ports, used in pairs))
    return limit


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
class FabricTerms:
    """What `define_fabric` adds for one site: its variables (y, N, S, E, T and the extensions' U and K),
    its kW (all of it; within the network racks) and capex terms."""

    y: dict[tuple[str, int], Any] = field(default_factory=dict)
    ports: dict[tuple[str, int], Any] = field(default_factory=dict)
    switches: dict[str, Any] = field(default_factory=dict)
    optics: dict[str, Any] = field(default_factory=dict)
    total: Any = None  # T[s]
    extras: list[Any] = field(default_factory=list)
    network_kw: list[tuple[Any, float]] = field(default_factory=list)
    network_rack_kw: list[tuple[Any, float]] = field(default_factory=list)  # switches + switch-side optics
    capex: list[tuple[Any, float]] = field(default_factory=list)
    priced: dict[str, list[tuple[Any, float]]] = field(default_factory=dict)  # switch type -> its capex terms


@dataclass
class _FabricRows:
    """What each switch type adds to the site's fabric rows, gathered for the rows that sum over types."""

    terms: FabricTerms
    tier_sum: list[tuple[Any, float]] = field(default_factory=list)
    port_cover: list[tuple[Any, float]] = field(default_factory=list)
    optics_split: list[tuple[Any, float]] = field(default_factory=list)
    switch_count: list[tuple[Any, float]] = field(default_factory=list)
    copper_split: list[tuple[Any, float]] = field(default_factory=list)
    max_count: int = 0


def _uplinks(prob: pulp.LpProblem, key: str, ports: Any, cap: int, y: Any, oversubscription: float) -> Any:
    """Leaf uplink ports of a tier count's N: N itself when non-blocking, else an integer U >= N / r."""
    if oversubscription == 1:
        return ports
    bound = math.ceil(cap / oversubscription - 1e-9)
    up = prob.add_variable(name("U", key), 0, bound, pulp.LpInteger)
    prob += lin([(up, oversubscription), (ports, -1)]) >= 0, name("uplinks", key)
    prob += lin([(up, 1), (y, -bound)]) <= 0, name("uplinks_on", key)
    return up


def _copper_ports(
    prob: pulp.LpProblem, sm: SiteModel, o_index: int, n_terms: list[tuple[Any, int]], cap: int
) -> Any:
    """K[s,o] <= N[s,o]: the leaf down-ports of switch o that copper links take (their ends carry no optic);
    the site's K sum to at most its copper links (`define_fabric`), so K = min(N, copper links)."""
    k_var = prob.add_variable(name("K", sm.tag, o_index), 0, cap, pulp.LpContinuous)
    prob += lin([(k_var, 1)] + [(p, -1) for p, _t in n_terms]) <= 0, name("copper_on", sm.tag, o_index)
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
    limits: dict[int, float],
) -> tuple[list[Any], list[tuple[Any, int]], list[tuple[Any, int]]]:
    """Per tier count t: y[s,o,t], N[s,o,t] <= cap_t y, and (oversubscribed, t > 1) the leaf uplinks U;
    cap_t is the tier's capacity, no more than the site's most ports, or the site allows at t (`limits`)."""
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
        limit = limits.get(t, math.inf)
        if limit < cap:  # whole ports: the need is whole too; else N is an integer >= the need
            cap = math.floor(limit * (1 + 1e-9)) if whole else math.ceil(limit * (1 - 1e-9))
        y = prob.add_variable(name("y", sm.tag, o_index, t), 0, 1, pulp.LpBinary)
        ports = prob.add_variable(name("N", sm.tag, o_index, t), 0, cap, port_cat)
        prob += lin([(ports, 1), (y, -cap)]) <= 0, name("portcap", sm.tag, o_index, t)
        rows.terms.y[(switch_id, t)] = y
        rows.terms.ports[(switch_id, t)] = ports
        y_o.append(y)
        n_terms.append((ports, t))
        if t > 1 and r != 1:
            up = _uplinks(prob, f"{sm.tag}_{o_index}_{t}", ports, cap, y, r)
            rows.terms.extras.append(up)
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
    limits: dict[int, float] | None = None,
) -> None:
    """Switch type o at the site: y[s,o,t] and N[s,o,t] <= cap_t y per tier; leaf uplinks U[s,o,t] >= N / r;
    S[s,o] >= (N + 2(t-1) U) / k ((2t-1) N / k non-blocking), zero unless o is chosen; switch-side optics =
    the same ports less the copper links' leaf ends; rack-side optics E[s,o] <= optics per port x N; its
    power and capex terms."""
    sw = catalog.switches[o]
    port_gbps = sw.port_gbps or 1.0
    k = sw.radix
    y_o, n_terms, up_terms = _tier_variables(
        prob, sm, o_index, (o, sw), tiers, max_ports, fabric, rows, limits or {}
    )
    if fabric.oversubscription == 1:  # non-blocking: (2t - 1) N switch ports, as the first version
        port_pairs = [(p, float(switch_side_optics_per_port(t))) for p, t in n_terms]
        above = [(p, float(2 * (t - 1))) for p, t in n_terms if t > 1]
    else:
        above = [(u, float(2 * (t - 1))) for u, t in up_terms]
        port_pairs = [(p, 1.0) for p, _t in n_terms] + above
    max_switches = math.ceil(max(switch_side_optics_per_port(t) for t in tiers) * max_ports / k)
    # Continuous: zero unless one of this switch's tiers is chosen, then equal to the integer T[s].
    s_var = prob.add_variable(name("S", sm.tag, o_index), 0, max_switches, pulp.LpContinuous)
    rows.terms.switches[o] = s_var
    prob += lin([(s_var, 1)] + [(y, -max_switches) for y in y_o]) <= 0, name("switch_on", sm.tag, o_index)
    rows.switch_count.append((s_var, 1))
    rows.max_count = max(rows.max_count, max_switches)
    prob += lin([(s_var, k)] + [(v, -c) for v, c in port_pairs]) >= 0, name("switches", sm.tag, o_index)
    # Rack-side optics go with the switch that serves the ports: E_o <= (optics per port at most) x N_o.
    optics_per_port = max(o_.endpoint_optics * port_gbps / o_.scale_out_gbps for o_ in sm.options)
    e_var = prob.add_variable(name("E", sm.tag, o_index), 0, max_optics, pulp.LpContinuous)
    rows.terms.optics[o] = e_var
    prob += (
        lin([(e_var, 1)] + [(p, -optics_per_port) for p, _t in n_terms]) <= 0,
        name("optics_on", sm.tag, o_index),
    )
    rows.optics_split.append((e_var, 1))
    rows.tier_sum.extend((y, 1) for y in y_o)
    switch_optics = port_pairs
    if any(o_.copper_links for o_ in sm.options):
        k_var = _copper_ports(prob, sm, o_index, n_terms, max_ports)
        rows.terms.extras.append(k_var)
        rows.copper_split.append((k_var, 1))
        switch_optics = [*port_pairs, (k_var, -1.0)]
    optic_pairs = switch_optics + [(e_var, 1)]
    rows.terms.network_rack_kw.append((s_var, sw.power_w / 1000))
    rows.terms.network_rack_kw.extend((v, c * sw.optic_w / 1000) for v, c in switch_optics)
    rows.terms.network_kw.append((s_var, sw.power_w / 1000))
    rows.terms.network_kw.extend((v, c * sw.optic_w / 1000) for v, c in optic_pairs)
    priced = [(s_var, sw.unit_usd), *((v, c * sw.optic_usd) for v, c in optic_pairs)]
    rows.terms.capex.extend(priced)
    rows.terms.priced[o] = priced


def define_fabric(
    prob: pulp.LpProblem,
    catalog: Catalog,
    sm: SiteModel,
    n: list[Any],
    out_switches: list[str],
    fabric: Fabric | None = None,
    limits: Scenario | None = None,
) -> FabricTerms:
    """Ports cover the site's scale-out bandwidth (units n); one switch type and tier; switches >= (2t-1)
    N / k; copper links' power goes with the network. `limits` (the scenario, where the site's rows hold
    without slack): each tier's ports are held within what the site allows at that tier
    (`tier_port_limit`)."""
    fabric = fabric or Fabric()
    max_gbps, max_optics = max_fabric_load(catalog, sm)
    units = lin([(v, 1) for v in n])
    terms = FabricTerms()
    rows = _FabricRows(terms)
    for o_index, o in enumerate(out_switches):
        sw = catalog.switches[o]
        port_gbps = sw.port_gbps or 1.0
        max_ports = math.ceil(max_gbps / port_gbps - 1e-9)
        if max_ports == 0:
            continue
        tiers = fabric_tiers(sm, sw.radix, port_gbps, max_ports, fabric.oversubscription)
        if tiers:
            caps = {t: tier_port_limit(catalog, limits, sm, sw, t) for t in tiers} if limits else None
            define_switch_type(
                prob, catalog, sm, o_index, o, tiers, max_ports, max_optics, rows, fabric, caps
            )
    terms.network_kw.extend((v, o.copper_kw) for v, o in zip(n, sm.options, strict=True) if o.copper_kw)
    if rows.copper_split:
        copper = [(v, o.copper_links) for v, o in zip(n, sm.options, strict=True) if o.copper_links]
        prob += lin(rows.copper_split) - lin(copper) <= 0, name("copper", sm.tag)
    if rows.switch_count:
        # One switch type per site (one_fabric), so the one S[s,o] that may be non-zero is this integer.
        total = prob.add_variable(name("T", sm.tag), 0, rows.max_count, pulp.LpInteger)
        terms.total = total
        prob += lin(rows.switch_count + [(total, -1)]) == 0, name("switch_count", sm.tag)
    prob += lin(rows.tier_sum) <= 1, name("one_fabric", sm.tag)
    prob += lin(rows.tier_sum) - units <= 0, name("fabric_if_used", sm.tag)
    ref = min((c for _, c in rows.port_cover), default=1.0)  # Gb/s of the smallest port: coefficients near 1
    gbps = [(v, o.scale_out_gbps / ref) for v, o in zip(n, sm.options, strict=True)]
    prob += lin([(p, c / ref) for p, c in rows.port_cover]) - lin(gbps) >= 0, name("ports", sm.tag)
    eo = [(v, o.endpoint_optics) for v, o in zip(n, sm.options, strict=True)]
    prob += lin(rows.optics_split) - lin(eo) == 0, name("optics", sm.tag)
    return terms
