"""The catalog as tables, one per kind, with derived figures and estimates marked."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType

from trnplan.catalog import Catalog, Demand, Scenario
from trnplan.costs.derived import DERIVED
from trnplan.numbers import fmt
from trnplan.render.tables import Col, Grid

ESTIMATE_MARK = "*"
ESTIMATE_NOTE = "* estimate, not a published figure (the entity lists it under `estimates`)"


def _estimated(entity: Any, *fields: str) -> bool:
    """Whether any of `fields` (or a part of it: 'hbm' covers 'hbm.pin_gbps') is listed as an estimate."""
    for name in getattr(entity, "estimates", ()):
        for f in fields:
            if name == f or name.startswith(f + ".") or f.startswith(name + "."):
                return True
    return False


class _Marks:
    """Appends the estimate mark to a cell and remembers whether any cell was marked."""

    def __init__(self) -> None:
        self.used = False

    def __call__(self, text: str, estimated: bool) -> str:
        if estimated:
            self.used = True
            return text + ESTIMATE_MARK
        return text


def render_catalog(kind: str, catalog: Catalog) -> RenderableType:
    """The catalog's entities of one kind as a table, with derived figures and estimates marked."""
    entities = catalog.of(kind)
    mark = _Marks()
    table = _CATALOG_TABLES[kind](catalog, entities, mark)
    table.title = f"{kind} ({len(entities)})"
    if mark.used:
        table.caption = ESTIMATE_NOTE
    return table


def _chips_table(catalog: Catalog, chips: dict[str, Any], mark: _Marks) -> Grid:
    numbers = ("TDP W", "FP8 TF", "BF16 TF", "HBM GB", "HBM TB/s", "scale-up TB/s", "out Gb/s", "price $")
    t = Grid(
        None,
        [Col("chip"), Col("name", wrap=True, min_width=18), Col("vendor", wrap=True)]
        + [Col(h, right=True) for h in numbers] + [Col("from")],
        stack=[(0, 1), (2, 11), (3, 10), (4, 5), (6, 7), (8, 9)],
    )
    for cid, c in sorted(chips.items()):
        d = DERIVED["chips"](c, catalog)
        h = c.hbm
        su = c.scale_up
        link = f"PCIe{su.pcie_gen}" if su.pcie_gen is not None else f"{fmt(su.lane_gbps)}G"
        bf16 = c.dense_tflops.get("bf16")
        t.add_row(
            cid,
            c.name,
            c.vendor,
            mark(fmt(c.tdp_w), _estimated(c, "tdp_w")),
            mark(fmt(c.fp8_tflops), _estimated(c, "dense_tflops.fp8")),
            mark(fmt(bf16), _estimated(c, "dense_tflops.bf16")) if bf16 is not None else "-",
            mark(f"{fmt(d['hbm_capacity_gb'])} {h.generation}",
                 _estimated(c, "hbm.stacks", "hbm.stack_gb")),
            mark(fmt(d["hbm_bandwidth_tbps"]), _estimated(c, "hbm")),
            mark(f"{fmt(d['scale_up_tbps'])} ({su.lanes}x{link})", _estimated(c, "scale_up")),
            mark(fmt(c.scale_out_gbps), _estimated(c, "scale_out_gbps")),
            mark(fmt(c.unit_usd, "int"), _estimated(c, "unit_usd")),
            c.available_from or "",
        )
    return t


def _forms_table(catalog: Catalog, forms: dict[str, Any], mark: _Marks) -> Grid:
    """The Rosetta stone: brand name, codename and topology name together, with the rack figures; a form
    is a line, and a line per further scale-up option (a narrow terminal leaves the codename, topology
    name and domain FP8 out, and says so)."""
    t = Grid(
        None,
        [Col("form"), Col("brand name", wrap=True, min_width=16), Col("codename", wrap=True, priority=3),
         Col("topology", wrap=True, min_width=15, priority=2), Col("chip", priority=1),
         Col("chips/rack\nx racks", right=True, priority=4), Col("domain", right=True),
         Col("domain\nFP8", right=True, priority=5), Col("cooling"),
         Col("scale-up switch:\nrack IT kW")],
    )
    for fid, f in sorted(forms.items()):
        d = DERIVED["forms"](f, catalog)
        chip = catalog.chips.get(f.chip)
        chip_tdp_est = chip is not None and _estimated(chip, "tdp_w")
        options = []
        for switch_id, kw in d["rack_it_kw"].items():
            switch = catalog.switches.get(switch_id)
            est = chip_tdp_est or _estimated(f, "rack_overhead_kw", "scale_up") or (
                switch is not None and _estimated(switch, "power_w"))
            options.append(mark(f"{switch_id}: {fmt(kw, 'kw')}", est))
        names = f.names
        t.add_row(
            fid, names.brand or "-", names.codename or "-", names.topology or f.topology, f.chip,
            f"{f.chips_per_rack} x {f.racks_per_unit}",
            fmt(d["domain_chips"], "int"), fmt(d["domain_fp8_pflops"], "pflops"),
            "\n".join(f.cooling), "\n".join(options),
        )
    return t


def _switches_table(catalog: Catalog, switches: dict[str, Any], mark: _Marks) -> Grid:
    t = Grid(
        None,
        [Col("switch"), Col("name", wrap=True, min_width=16), Col("role"), Col("protocol"),
         Col("size", right=True, wrap=True), Col("power", right=True), Col("unit price", right=True),
         Col("optic", right=True), Col("from")],
        stack=[(0, 1), (2, 3), (4,), (5, 6), (7, 8)],
    )
    for sid, s in sorted(switches.items()):
        if s.role == "scale_out":
            size = mark(f"{fmt((s.bandwidth_gbps or 0) / 1000, 'Tb/s')}, {s.radix} x {fmt(s.port_gbps)}G, "
                        f"{s.rack_units}U", _estimated(s, "bandwidth_gbps", "port_gbps", "rack_units"))
            optic = mark(f"{fmt(s.optic_usd, 'usd')}, {fmt(s.optic_w, 'w')}",
                         _estimated(s, "optic_usd", "optic_w"))
        else:
            parts = [f"{s.lanes} lanes" if s.lanes else "", f"{s.ports} ports" if s.ports else ""]
            size = mark(", ".join(p for p in parts if p), _estimated(s, "lanes", "ports"))
            optic = ""
        t.add_row(
            sid,
            s.name or "",
            s.role.replace("_", "-"),
            s.protocol,
            size,
            mark(fmt(s.power_w, "w"), _estimated(s, "power_w")),
            mark(fmt(s.unit_usd, "usd"), _estimated(s, "unit_usd")),
            optic,
            s.available_from,
        )
    return t


def _cooling_table(catalog: Catalog, cooling: dict[str, Any], mark: _Marks) -> Grid:
    t = Grid(
        None,
        [Col("cooling"), Col("name", wrap=True, min_width=16)]
        + [Col(h, right=True) for h in ("max rack", "PUE", "capex per kW")],
        stack=[(0, 1), (2, 3), (4,)],
    )
    for cid, c in sorted(cooling.items()):
        t.add_row(
            cid,
            c.name or "",
            mark(fmt(c.max_rack_kw, "kw"), _estimated(c, "max_rack_kw")),
            mark(f"{c.pue:.2f}", _estimated(c, "pue")),
            mark(fmt(c.capex_usd_per_kw, "usd"), _estimated(c, "capex_usd_per_kw")),
        )
    return t


def _power_chains_table(catalog: Catalog, chains: dict[str, Any], mark: _Marks) -> Grid:
    """Each redundancy level: the share of a hall's power it leaves usable and its cost per MW of IT."""
    t = Grid(
        None,
        [Col("power chain"), Col("name", wrap=True, min_width=16), Col("usable", right=True),
         Col("$/MW of IT", right=True)],
        stack=[(0, 1), (2, 3)],
    )
    for cid, c in sorted(chains.items()):
        t.add_row(
            cid,
            c.name or "",
            mark(fmt(c.usable_share, "pct"), _estimated(c, "usable_share")),
            mark(fmt(c.usd_per_mw, "usd"), _estimated(c, "usd_per_mw")),
        )
    return t


def _sites_table(catalog: Catalog, sites: dict[str, Any], mark: _Marks) -> Grid:
    t = Grid(
        None,
        [Col("site"), Col("name", wrap=True, min_width=12), Col("location", wrap=True, min_width=12),
         Col("ownership", wrap=True), Col("IT power", right=True), Col("grid", right=True),
         Col("positions", right=True), Col("cooling", wrap=True), Col("max rack", right=True),
         Col("$/kWh", right=True), Col("rent $/kW-mo", right=True)],
        stack=[(0, 1, 2), (4, 5, 3), (6, 8), (7,), (9, 10)],
    )
    for sid, s in sorted(sites.items()):
        t.add_row(
            sid,
            s.name or "",
            s.location or "",
            _ownership(s, mark),
            _power(catalog, s, mark),
            (mark(_stepped(s, "grid_power_mw", 1000, "mw"), _estimated(s, "grid_power_mw"))
             if s.grid_power_mw else "-"),
            mark(_stepped(s, "rack_positions", 1, "int"), _estimated(s, "rack_positions")),
            _cooling(s, mark),
            mark(fmt(s.max_rack_kw, "kw"), _estimated(s, "max_rack_kw")) if s.max_rack_kw else "-",
            mark(_stepped(s, "electricity_usd_per_kwh", 1, "kwh"), _estimated(s, "electricity_usd_per_kwh")),
            _rent(s, mark),
        )
    return t


def _ownership(site: Any, mark: _Marks) -> str:
    """`leased`, or `owned` with its build per MW and the life it is annuitised over."""
    if not site.owned:
        return "leased"
    parts = ["owned"]
    if site.build_usd_per_mw:
        parts.append(mark(f"${site.build_usd_per_mw / 1e6:.3g}M/MW", _estimated(site, "build_usd_per_mw")))
    if site.facility_life_years is not None:
        parts.append(mark(f"{site.facility_life_years:g}y", _estimated(site, "facility_life_years")))
    return " ".join(parts)


def _power(catalog: Catalog, site: Any, mark: _Marks) -> str:
    """IT power as stated, and with a power chain its redundancy and the usable power it leaves."""
    stated = mark(_stepped(site, "it_power_mw", 1000, "mw"), _estimated(site, "it_power_mw"))
    if site.redundancy is None:
        return stated
    usable = fmt(catalog.usable_it_power_mw(site) * 1000, "mw")
    return f"{stated}\n{site.redundancy}: {usable} usable"


def _cooling(site: Any, mark: _Marks) -> str:
    """Each cooling type, with its one-off fit-out and the heat it can remove where the site says."""
    cells = []
    for q in site.cooling:
        text = q
        if q in site.cooling_fixed_usd:
            fixed = f"(+{fmt(site.cooling_fixed_usd[q], 'usd')})"
            text += " " + mark(fixed, _estimated(site, "cooling_fixed_usd"))
        if q in site.cooling_capacity_mw:
            cap = fmt(site.cooling_capacity_mw[q] * 1000, "mw")
            text += " " + mark(f"<= {cap}", _estimated(site, "cooling_capacity_mw"))
        cells.append(text)
    return ", ".join(cells)


def _rent(site: Any, mark: _Marks) -> str:
    """A leased hall's rent (and its liquid premium); none for an owned one."""
    if site.owned:
        return "-"
    name = "colocation_usd_per_kw_month"
    rent = mark(_stepped(site, name, 1, "usd"), _estimated(site, name))
    if not site.liquid_premium_usd_per_kw_month:
        return rent
    premium = _stepped(site, "liquid_premium_usd_per_kw_month", 1, "usd")
    return f"{rent}\n+{mark(premium, _estimated(site, 'liquid_premium_usd_per_kw_month'))} liquid"


def _stepped(site: Any, name: str, scale: float, kind: str) -> str:
    """A site figure, or a step schedule as its first and last steps: `24.0 MW 2026-01 -> 72.0 MW 2027-01`."""

    def one(value: float) -> str:
        return f"{value:.3f}" if kind == "kwh" else fmt(value * scale, kind)

    schedule = site.schedules.get(name)
    if not schedule:
        return one(getattr(site, name))
    months = sorted(schedule)
    if len(months) == 1:
        return f"{one(schedule[months[0]])} from {months[0]}"
    return f"{one(schedule[months[0]])} {months[0]} -> {one(schedule[months[-1]])} {months[-1]}"


def _scenarios_table(catalog: Catalog, scenarios: dict[str, Any], mark: _Marks) -> Grid:
    t = Grid(
        None,
        [Col("scenario"), Col("sites", wrap=True, min_width=10),
         Col("chips / forms", wrap=True, min_width=14),
         Col("demand", wrap=True), Col("objective", wrap=True), Col("min domain", right=True),
         Col("as of"), Col("money", wrap=True, min_width=12)],
        stack=[(0, 1), (2,), (3, 4), (5, 6), (7,)],
    )
    for sid, s in sorted(scenarios.items()):
        money = (f"{s.horizon_years} y @ {fmt(s.cost_of_capital, 'pct')}, util {fmt(s.utilization, 'pct')}, "
                 f"maint {fmt(s.maintenance_rate, 'pct')}/y")
        t.add_row(
            sid,
            ", ".join(s.sites),
            _scenario_chips(s),
            _scenario_demand(s),
            _scenario_objective(s),
            fmt(s.min_domain_chips, "int"),
            s.as_of or (f"{s.periods[0]} to {s.periods[-1]}, {len(s.periods)} periods" if s.periods else "-"),
            mark(money, _estimated(s, "cost_of_capital", "utilization", "maintenance_rate")),
        )
    return t


def _scenario_chips(s: Scenario) -> str:
    """The chips a scenario allows, then its forms and supply caps, one line each."""
    chips = ", ".join(s.chips) if s.chips is not None else "all chips"
    if s.forms is not None:
        chips += "\n" + ", ".join(s.forms)
    if s.supply:
        chips += "\n" + ", ".join(f"{k} <= {fmt(v, 'int')}" for k, v in sorted(s.supply.items()))
    return chips


def _demand_text(d: Demand) -> list[str]:
    return [
        text for text in (
            f"{fmt(d.chips, 'int')} chips" if d.chips is not None else "",
            fmt(d.fp8_pflops, "pflops") if d.fp8_pflops is not None else "",
            fmt(d.hbm_tb, "tb") if d.hbm_tb is not None else "",
            (f"{fmt(d.effective_fp8_pflops, 'pflops')} effective"
             if d.effective_fp8_pflops is not None else ""),
        ) if text
    ]


def _scenario_demand(s: Scenario) -> str:
    if s.demand_by_month:
        by_month = sorted(s.demand_by_month.items())
        demand = [f"from {m}: {', '.join(_demand_text(d)) or '-'}" for m, d in by_month]
    else:
        demand = _demand_text(s.demand)
    if s.workload is not None:
        demand.append(f"workload {s.workload}")
    return ", ".join(demand) or "-"


def _scenario_objective(s: Scenario) -> str:
    """The objective, then its budgets, one line each."""
    budget = [
        f"capex <= {fmt(s.budget.capex_usd, 'usd')}" if s.budget.capex_usd is not None else "",
        f"TCO <= {fmt(s.budget.tco_usd, 'usd')}" if s.budget.tco_usd is not None else "",
    ]
    return "\n".join([s.objective, *(b for b in budget if b)])


def _rule_text(rule: Any) -> str:
    """A workload rule's conditions in words: 'switched, domain >= 144', 'any form'."""
    parts = [rule.topology] if rule.topology else []
    if rule.min_domain_chips is not None:
        parts.append(f"domain >= {fmt(rule.min_domain_chips, 'int')}")
    if rule.forms is not None:
        parts.append(", ".join(rule.forms))
    return ", ".join(parts) or "any form"


def _workloads_table(catalog: Catalog, workloads: dict[str, Any], mark: _Marks) -> Grid:
    """Each workload's rules, first match wins, and what they give each form of the catalog."""
    from trnplan.costs import form_efficiency, option_efficiency

    t = Grid(
        None,
        [Col("workload"), Col("name", wrap=True, min_width=14), Col("efficiency (first match)", wrap=True),
         Col("per form", wrap=True, min_width=16)],
        stack=[(0, 1), (2,), (3,)],
    )
    for wid, w in sorted(workloads.items()):
        rules = [
            mark(f"{_rule_text(r)}: {fmt(r.value, 'pct')}", _estimated(w, "efficiency")) for r in w.efficiency
        ]
        if w.job is not None:
            lead = "else its job" if rules else "its job"
            rules.append(f"{lead} ({w.job.kind}, {w.job.precision}): trnplan perf {wid}")
        probe = Scenario.model_construct(workload=wid)
        forms = [f"{f} {fmt(form_efficiency(catalog, probe, f), 'pct')}" for f in sorted(catalog.forms)
                 if option_efficiency(catalog, probe, f).fits]
        t.add_row(wid, w.name, "\n".join(rules), "\n".join(forms))
    return t


_CATALOG_TABLES = {
    "chips": _chips_table,
    "forms": _forms_table,
    "switches": _switches_table,
    "cooling": _cooling_table,
    "sites": _sites_table,
    "scenarios": _scenarios_table,
    "workloads": _workloads_table,
    "power_chains": _power_chains_table,
}
