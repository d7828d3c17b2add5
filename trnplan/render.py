"""Terminal rendering: the only module that uses rich.

Every function returns a renderable (a table or a group of them); the CLI decides where to print it.
Numbers are formatted by one helper, `fmt`, so a dollar or a megawatt reads the same everywhere.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from trnplan.catalog import DERIVED, Catalog
from trnplan.errors import Problem
from trnplan.plan import Plan

if TYPE_CHECKING:
    from trnplan.bom import Bom
    from trnplan.diff import PlanDiff

ESTIMATE_MARK = "*"
ESTIMATE_NOTE = "* estimate, not a published figure (the entity lists it under `estimates`)"
BOX = box.SIMPLE_HEAD


PIPE_WIDTH = 160


def console(stderr: bool = False) -> Console:
    """A console on stdout (results) or stderr (messages).

    rich honours NO_COLOR, FORCE_COLOR, TERM=dumb and COLUMNS, and writes no colour to a pipe. A pipe has
    no width, so there tables get up to PIPE_WIDTH columns (not rich's 80) and stay whole in CI logs.
    """
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if "COLUMNS" not in os.environ and not _isatty(stream):
        width = PIPE_WIDTH
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# --- numbers --------------------------------------------------------------------------------------


def fmt(value: Any, unit: str = "num", signed: bool = False) -> str:
    """One number as text, by unit.

    usd: $1,234,567 (cents under $100: $1.43); kw: 1,234 kW (from kW); mw: 12.3 MW (from kW);
    pct: a fraction as a percentage (0.97 -> 97%); int: 1,234; num: a plain number, trimmed;
    gbps, tbps, pflops, tflops, w, tb, gb: the number and its unit. `signed` adds a + to gains.
    """
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    v = float(value)
    sign = "+" if signed and v > 0 else ""
    if unit == "usd":
        a = abs(v)
        if a >= 100 or a == 0 or float(a).is_integer():
            text = f"${a:,.0f}"
        elif a >= 1:
            text = f"${a:,.2f}"
        else:
            text = f"${a:.3g}"
        return f"{'-' if v < 0 else sign}{text}"
    if unit == "pct":
        p = v * 100
        a = abs(p)
        if a == 0:
            return "0%"
        if a >= 0.1:
            digits = 0 if a >= 10 else 1 if a >= 1 else 2
            text = f"{p:,.{digits}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
        else:
            text = f"{p:.2g}"
        return f"{sign}{text}%"
    if unit == "mw":
        mw = v / 1000
        text = "0" if mw == 0 else f"{mw:,.1f}" if abs(mw) >= 1 else f"{mw:.3g}"
        return f"{sign}{text} MW"
    if unit == "int":
        return f"{sign}{round(v):,}"
    suffix = {
        "kw": " kW", "w": " W", "gbps": " Gb/s", "tbps": " TB/s", "pflops": " PF", "tflops": " TF",
        "tb": " TB", "gb": " GB", "num": "",
    }.get(unit, f" {unit}")
    return f"{sign}{_plain(v)}{suffix}"


def _plain(v: float) -> str:
    """Whole numbers with separators; others trimmed to a readable precision."""
    a = abs(v)
    if float(v).is_integer():
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:,.1f}".rstrip("0").rstrip(".")
    if a >= 0.01:
        return f"{v:.3f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


class _Table(Table):
    """A table whose cells fold instead of ending in an ellipsis: a narrow terminal wraps a figure,
    never hides it."""

    def add_column(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        kwargs.setdefault("overflow", "fold")
        super().add_column(*args, **kwargs)


def _table(title: str | None = None, caption: str | None = None) -> Table:
    return _Table(title=title, caption=caption, box=BOX, title_justify="left", caption_justify="left",
                 show_edge=False, pad_edge=False, collapse_padding=True)


def _num_col(table: Table, header: str) -> None:
    table.add_column(header, justify="right", no_wrap=True)


# --- catalog --------------------------------------------------------------------------------------


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


def _chips_table(catalog: Catalog, chips: dict[str, Any], mark: _Marks) -> Table:
    t = _table()
    t.add_column("chip")
    t.add_column("name, vendor", min_width=18, ratio=1)
    for h in ("TDP W", "FP8 TF", "BF16 TF", "HBM GB", "HBM TB/s", "scale-up TB/s", "out Gb/s", "price $"):
        _num_col(t, h)
    t.add_column("from")
    for cid, c in sorted(chips.items()):
        d = DERIVED["chips"](c, catalog)
        h = c.hbm
        su = c.scale_up
        link = f"PCIe{su.pcie_gen}" if su.pcie_gen is not None else f"{fmt(su.lane_gbps)}G"
        bf16 = c.dense_tflops.get("bf16")
        t.add_row(
            cid,
            f"{c.name}, {c.vendor}",
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


def _forms_table(catalog: Catalog, forms: dict[str, Any], mark: _Marks) -> Table:
    """The Rosetta stone: brand name, codename and topology name together, with the rack figures."""
    t = _table()
    t.add_column("form")
    t.add_column("brand name\ncodename\ntopology", min_width=12)
    t.add_column("chip\nchips/rack x racks\ndomain (FP8)", min_width=12)
    t.add_column("cooling", min_width=7)
    t.add_column("scale-up switch:\nrack IT kW", min_width=14)
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
            fid,
            "\n".join([names.brand or "-", names.codename or "-", names.topology or f.topology]),
            "\n".join([
                f.chip,
                f"{f.chips_per_rack} x {f.racks_per_unit} = {fmt(d['unit_chips'], 'int')}",
                f"{fmt(d['domain_chips'], 'int')} ({fmt(d['domain_fp8_pflops'], 'pflops')})",
            ]),
            "\n".join(f.cooling),
            "\n".join(options),
            end_section=True,
        )
    return t


def _switches_table(catalog: Catalog, switches: dict[str, Any], mark: _Marks) -> Table:
    t = _table()
    t.add_column("switch")
    t.add_column("name")
    t.add_column("role")
    t.add_column("protocol")
    _num_col(t, "size")
    _num_col(t, "power")
    _num_col(t, "unit price")
    _num_col(t, "optic")
    t.add_column("from")
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


def _cooling_table(catalog: Catalog, cooling: dict[str, Any], mark: _Marks) -> Table:
    t = _table()
    t.add_column("cooling")
    t.add_column("name")
    _num_col(t, "max rack")
    _num_col(t, "PUE")
    _num_col(t, "capex per kW")
    for cid, c in sorted(cooling.items()):
        t.add_row(
            cid,
            c.name or "",
            mark(fmt(c.max_rack_kw, "kw"), _estimated(c, "max_rack_kw")),
            mark(f"{c.pue:.2f}", _estimated(c, "pue")),
            mark(fmt(c.capex_usd_per_kw, "usd"), _estimated(c, "capex_usd_per_kw")),
        )
    return t


def _sites_table(catalog: Catalog, sites: dict[str, Any], mark: _Marks) -> Table:
    t = _table()
    t.add_column("site")
    t.add_column("name")
    t.add_column("location")
    _num_col(t, "IT power")
    _num_col(t, "grid")
    _num_col(t, "positions")
    t.add_column("cooling")
    _num_col(t, "max rack")
    _num_col(t, "$/kWh")
    _num_col(t, "colo $/kW-mo")
    for sid, s in sorted(sites.items()):
        cooling = [
            mark(f"{q} (+{fmt(s.cooling_fixed_usd[q], 'usd')})", _estimated(s, "cooling_fixed_usd"))
            if q in s.cooling_fixed_usd else q
            for q in s.cooling
        ]
        t.add_row(
            sid,
            s.name or "",
            s.location or "",
            mark(fmt(s.it_power_mw * 1000, "mw"), _estimated(s, "it_power_mw")),
            (mark(fmt(s.grid_power_mw * 1000, "mw"), _estimated(s, "grid_power_mw"))
             if s.grid_power_mw else "-"),
            mark(fmt(s.rack_positions, "int"), _estimated(s, "rack_positions")),
            ", ".join(cooling),
            mark(fmt(s.max_rack_kw, "kw"), _estimated(s, "max_rack_kw")) if s.max_rack_kw else "-",
            mark(f"{s.electricity_usd_per_kwh:.3f}", _estimated(s, "electricity_usd_per_kwh")),
            mark(fmt(s.colocation_usd_per_kw_month, "usd"), _estimated(s, "colocation_usd_per_kw_month")),
        )
    return t


def _scenarios_table(catalog: Catalog, scenarios: dict[str, Any], mark: _Marks) -> Table:
    t = _table()
    t.add_column("scenario")
    t.add_column("sites")
    t.add_column("chips / forms")
    t.add_column("demand")
    t.add_column("objective")
    _num_col(t, "min domain")
    t.add_column("as of")
    t.add_column("money")
    for sid, s in sorted(scenarios.items()):
        demand = [
            text for text in (
                f"{fmt(s.demand.chips, 'int')} chips" if s.demand.chips is not None else "",
                fmt(s.demand.fp8_pflops, "pflops") if s.demand.fp8_pflops is not None else "",
                fmt(s.demand.hbm_tb, "tb") if s.demand.hbm_tb is not None else "",
            ) if text
        ]
        objective = s.objective
        budget = [
            f"capex <= {fmt(s.budget.capex_usd, 'usd')}" if s.budget.capex_usd is not None else "",
            f"TCO <= {fmt(s.budget.tco_usd, 'usd')}" if s.budget.tco_usd is not None else "",
        ]
        objective = "\n".join([objective, *(b for b in budget if b)])
        chips = ", ".join(s.chips) if s.chips is not None else "all chips"
        if s.forms is not None:
            chips += "\n" + ", ".join(s.forms)
        if s.supply:
            chips += "\n" + ", ".join(f"{k} <= {fmt(v, 'int')}" for k, v in sorted(s.supply.items()))
        money = (f"{s.horizon_years} y @ {fmt(s.cost_of_capital, 'pct')}, util {fmt(s.utilization, 'pct')}, "
                 f"maint {fmt(s.maintenance_rate, 'pct')}/y")
        t.add_row(
            sid,
            ", ".join(s.sites),
            chips,
            ", ".join(demand) or "-",
            objective,
            fmt(s.min_domain_chips, "int"),
            s.as_of or "-",
            mark(money, _estimated(s, "cost_of_capital", "utilization", "maintenance_rate")),
        )
    return t


_CATALOG_TABLES = {
    "chips": _chips_table,
    "forms": _forms_table,
    "switches": _switches_table,
    "cooling": _cooling_table,
    "sites": _sites_table,
    "scenarios": _scenarios_table,
}


# --- problems -------------------------------------------------------------------------------------


def render_problems(problems: Iterable[Problem]) -> Text:
    """Located problems, one per line (`path:line:col: key.path: message`), then a count."""
    items = sorted(problems)
    text = Text()
    for p in items:
        where = f"{p.file}:{p.line}:{p.col}" if p.line else p.file
        text.append(where, style="bold")
        text.append(": ")
        if p.path:
            text.append(p.path, style="cyan")
            text.append(": ")
        text.append(p.message + "\n")
    n = len(items)
    text.append(f"{n} problem{'s' if n != 1 else ''} found", style="bold red")
    return text


# --- plans ----------------------------------------------------------------------------------------


def solver_line(plan: Plan) -> str:
    """'HiGHS 1.16.0, optimal, gap 0%'."""
    s = plan.solver
    gap = float(s.get("mip_gap") or 0.0)
    name = f"{s.get('name', '?')} {s.get('version', '')}".strip()
    return f"{name}, {s.get('status', '?')}, gap {fmt(gap, 'pct')}"


def render_plan(plan: Plan) -> RenderableType:
    """A plan as tables: headline, deployments, scale-out fabric, power and cost, binding, alternatives."""
    parts: list[RenderableType] = [_headline(plan), _deployments(plan), _fabric(plan), _costs(plan)]
    if plan.binding:
        b = _table("What binds")
        b.add_column("constraint at or near its limit")
        for line in plan.binding:
            b.add_row(line)
        parts.append(b)
    if plan.alternatives:
        parts.append(_alternatives(plan))
    return Group(*_spaced(parts))


def _spaced(parts: Sequence[RenderableType]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for i, p in enumerate(parts):
        if i:
            out.append(Text(""))
        out.append(p)
    return out


def _headline(plan: Plan) -> Table:
    t = plan.totals
    e = plan.economics
    years = e.get("horizon_years")
    objective = plan.objective
    status = str(plan.solver.get("status", "?"))
    rows = [
        ("objective", _objective_text(objective)),
        ("chips", f"{fmt(t.get('chips'), 'int')} in {fmt(t.get('units'), 'int')} units, "
                  f"{fmt(t.get('domains'), 'int')} scale-up domains"),
        ("FP8", f"{fmt(t.get('fp8_pflops'), 'pflops')}LOPs dense"),
        ("HBM", fmt(t.get("hbm_tb"), "tb")),
        ("racks", f"{fmt(t.get('racks'), 'int')} compute + {fmt(t.get('network_racks'), 'int')} network"),
        ("IT power", fmt(t.get("it_power_kw"), "mw")),
        ("facility power", fmt(t.get("facility_power_kw"), "mw")),
        ("capex", fmt(t.get("capex_usd"), "usd")),
        ("opex per year", fmt(t.get("opex_usd_per_year"), "usd")),
        (_tco_label(years), fmt(t.get("tco_usd"), "usd")),
        ("per PFLOP-hour", fmt(t.get("usd_per_pflop_hour"), "usd")),
        ("per chip-hour", fmt(t.get("usd_per_chip_hour"), "usd")),
        ("solver", solver_line(plan)),
    ]
    table = _table(f"Plan for {plan.scenario}")
    table.add_column("", style="bold", no_wrap=True, min_width=1)
    table.add_column("")
    table.show_header = False
    for key, value in rows:
        style = "bold yellow" if key == "solver" and status != "optimal" else None
        table.add_row(key, Text(value, style=style or ""))
    return table


def _tco_label(years: Any) -> str:
    if not years:
        return "TCO"
    return f"TCO over {years:g} year{'' if years == 1 else 's'}"


def _objective_text(objective: dict[str, Any]) -> str:
    """'min_tco = $3,858,592,407', or the value and its unit for the other objectives."""
    unit = objective.get("unit", "")
    if unit == "USD":
        return f"{objective.get('kind')} = {fmt(objective.get('value'), 'usd')}"
    return f"{objective.get('kind')} = {fmt(objective.get('value'))} {unit}".rstrip()


def _deployments(plan: Plan) -> Table:
    t = _table("Deployments")
    for h in ("site", "form", "cooling", "scale-up"):
        t.add_column(h)
    for h in ("units", "racks", "chips", "domains", "FP8", "IT power", "capex"):
        _num_col(t, h)
    for site_id, s in sorted(plan.sites.items()):
        for d in s.get("deployments", []):
            t.add_row(
                site_id, d["form"], d["cooling"], d["scale_up_switch"],
                fmt(d.get("units"), "int"), fmt(d.get("racks"), "int"), fmt(d.get("chips"), "int"),
                fmt(d.get("domains"), "int"), fmt(d.get("fp8_pflops"), "pflops"),
                fmt(d.get("it_power_kw"), "kw"), fmt(d.get("capex_usd"), "usd"),
            )
    return t


def _fabric(plan: Plan) -> Table:
    t = _table("Scale-out fabric and site use")
    t.add_column("site")
    t.add_column("switch")
    for h in ("tiers", "ports", "switches", "optics", "net racks", "net power", "capex",
              "IT power", "positions", "grid"):
        _num_col(t, h)
    for site_id, s in sorted(plan.sites.items()):
        f = s.get("scale_out", {})
        u = s.get("utilization", {})
        t.add_row(
            site_id, str(f.get("switch", "-")),
            fmt(f.get("tiers"), "int"), fmt(f.get("ports"), "int"), fmt(f.get("switches"), "int"),
            fmt(f.get("optics"), "int"), fmt(f.get("network_racks"), "int"), fmt(f.get("it_power_kw"), "kw"),
            fmt(f.get("capex_usd"), "usd"),
            fmt(u.get("it_power"), "pct"), fmt(u.get("rack_positions"), "pct"),
            fmt(u.get("grid_power"), "pct"),
        )
    t.caption = "IT power, positions and grid: share of each site's limit the plan uses"
    return t


def _costs(plan: Plan) -> Table:
    """Capex by BOM category, then the yearly costs, then TCO."""
    t = _table("Power and cost")
    t.add_column("", no_wrap=True, min_width=1)
    _num_col(t, "amount")
    _num_col(t, "share")
    totals = plan.totals
    capex = float(totals.get("capex_usd") or 0)
    by_category: dict[str, float] = defaultdict(float)
    for line in plan.bom:
        by_category[str(line.get("category"))] += float(line.get("extended_usd") or 0)
    for category, usd in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0])):
        t.add_row(f"capex: {category}", fmt(usd, "usd"), fmt(usd / capex, "pct") if capex else "-")
    t.add_row("capex", fmt(capex, "usd"), "", style="bold", end_section=True)
    opex = float(totals.get("opex_usd_per_year") or 0)
    for key, label in (("energy_usd_per_year", "energy per year"),
                       ("colocation_usd_per_year", "colocation per year"),
                       ("maintenance_usd_per_year", "maintenance per year")):
        if key in totals:
            value = float(totals[key])
            t.add_row(label, fmt(value, "usd"), fmt(value / opex, "pct") if opex else "-")
    t.add_row("opex per year", fmt(opex, "usd"), "", style="bold", end_section=True)
    t.add_row("IT power", fmt(totals.get("it_power_kw"), "mw"), "")
    t.add_row("facility power (x PUE)", fmt(totals.get("facility_power_kw"), "mw"), "", end_section=True)
    years = plan.economics.get("horizon_years")
    t.add_row(_tco_label(years), fmt(totals.get("tco_usd"), "usd"), "", style="bold")
    return t


def _alternatives(plan: Plan) -> Table:
    t = _table("Alternatives: the best plan without each choice made")
    _num_col(t, "#")
    t.add_column("without")
    t.add_column("choice")
    _num_col(t, "TCO")
    _num_col(t, "FP8")
    _num_col(t, "vs plan")
    for i, alt in enumerate(plan.alternatives, 1):
        feasible = alt.get("tco_usd") is not None
        t.add_row(
            str(i),
            str(alt.get("without", "")),
            str(alt.get("choice", "")).replace("; ", "\n"),  # one line per site
            fmt(alt.get("tco_usd"), "usd") if feasible else "-",
            fmt(alt.get("fp8_pflops"), "pflops") if feasible else "-",
            fmt(float(alt.get("delta_pct") or 0) / 100, "pct", signed=True) if feasible else "infeasible",
        )
    t.caption = "vs plan: change in the scenario's objective"
    return t


# --- bill of materials ----------------------------------------------------------------------------


def render_bom(bom: Bom) -> RenderableType:
    """BOM lines grouped by site and category, with a subtotal per site and the total (= plan capex)."""
    t = _table(f"Bill of materials: {bom.scenario}")
    t.add_column("site")
    t.add_column("category")
    t.add_column("item")
    for h in ("quantity", "unit", "extended", "share", "IT kW"):
        _num_col(t, h)
    by_site: dict[str, list[Any]] = defaultdict(list)
    for line in bom.lines:
        by_site[line.site].append(line)
    capex = float(bom.capex_usd or 0)
    for site in sorted(by_site):
        lines = sorted(by_site[site], key=lambda ln: (ln.category, ln.item))
        previous = None
        for line in lines:
            t.add_row(
                site if previous is None else "",
                line.category if line.category != previous else "",
                line.item,
                fmt(line.quantity),
                fmt(line.unit_usd, "usd"),
                fmt(line.extended_usd, "usd"),
                fmt(line.extended_usd / capex, "pct") if capex else fmt(line.share, "pct"),
                fmt(line.it_kw, "kw") if line.it_kw is not None else "",
            )
            previous = line.category
        subtotal = sum(float(ln.extended_usd) for ln in lines)
        t.add_row("", "", f"{site} subtotal", "", "", fmt(subtotal, "usd"),
                  fmt(subtotal / capex, "pct") if capex else "", "", style="italic", end_section=True)
    t.add_row("total", "", "", "", "", fmt(bom.total_usd, "usd"), "100%" if bom.total_usd else "", "",
              style="bold")
    t.caption = f"plan capex {fmt(bom.capex_usd, 'usd')}"
    return t


# --- diffs ----------------------------------------------------------------------------------------


def _metric(value: Any, unit: str, signed: bool = False) -> str:
    """A summary metric in its unit: USD as dollars ($/year as $ .../y), kW, PFLOPs, counts."""
    if value is None:
        return "-"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    if unit.startswith("USD"):
        rest = unit[3:]
        text = fmt(value, "usd", signed)
        return text + {"/year": "/y", "": ""}.get(rest, rest)
    kind = {"kW": "kw", "PFLOPs": "pflops", "MW": "mw", "TB": "tb"}.get(unit, "num")
    return fmt(value, kind, signed)


def _field(name: str, value: Any) -> str:
    """A deployment field of a diff: money as dollars, the rest as numbers."""
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt(value, "usd" if name.endswith("_usd") else "kw" if name.endswith("_kw") else "num")
    return str(value)


def render_diff(d: PlanDiff) -> RenderableType:
    """Summary first, then choices, deployments (+ added, - removed, ~ changed), BOM, attribution and
    provenance (both digests and solvers)."""
    from trnplan.diff import SUMMARY_METRICS

    labels = {metric: label for metric, _unit, label in SUMMARY_METRICS}
    parts: list[RenderableType] = []
    head = Text()
    head.append(f"{d.base_label} -> {d.head_label}: ", style="bold")
    head.append("plans differ" if d.different else "no differences",
                style="bold yellow" if d.different else "bold green")
    for note in getattr(d, "notes", []):
        head.append(f"\nnote: {note}")
    parts.append(head)

    summary = _table("Summary")
    summary.add_column("metric")
    for h in ("base", "head", "change", "%"):
        _num_col(summary, h)
    for m in d.summary:
        pct = fmt(m.pct / 100, "pct", signed=True) if m.pct is not None else "-"
        delta = _metric(m.delta, m.unit, signed=True)
        summary.add_row(labels.get(m.metric, m.metric), _metric(m.old, m.unit), _metric(m.new, m.unit), delta,
                        pct, style=None if m.delta else "dim")
    parts.append(summary)

    if d.choices:
        c = _table("Choices")
        c.add_column("site")
        c.add_column("choice")
        c.add_column("base")
        c.add_column("head")
        for ch in d.choices:
            c.add_row(ch.site, ch.field, "-" if ch.old is None else ch.old, "-" if ch.new is None else ch.new)
        parts.append(c)

    if d.deployments:
        t = _table("Deployments")
        t.add_column("", no_wrap=True, min_width=1)
        t.add_column("site")
        t.add_column("form/cooling/scale-up")
        t.add_column("base -> head")
        for dep in d.deployments:
            changes = []
            for name, (old, new) in dep.fields.items():
                if dep.sign == "+":
                    changes.append(f"{name} {_field(name, new)}")
                elif dep.sign == "-":
                    changes.append(f"{name} {_field(name, old)}")
                else:
                    changes.append(f"{name} {_field(name, old)} -> {_field(name, new)}")
            sign = Text(dep.sign, style=_SIGN_STYLE.get(dep.sign, ""))
            t.add_row(sign, dep.site, dep.key, ", ".join(changes))
        t.caption = "+ added, - removed, ~ changed"
        parts.append(t)

    if d.bom:
        b = _table("BOM lines")
        b.add_column("", no_wrap=True, min_width=1)
        b.add_column("site")
        b.add_column("category")
        b.add_column("item")
        for h in ("qty base", "qty head", "base", "head", "change"):
            _num_col(b, h)
        for line in d.bom:
            b.add_row(
                Text(line.sign, style=_SIGN_STYLE.get(line.sign, "")), line.site, line.category, line.item,
                fmt(line.old_qty), fmt(line.new_qty), fmt(line.old_usd, "usd"), fmt(line.new_usd, "usd"),
                fmt(line.delta_usd, "usd", signed=True),
            )
        parts.append(b)

    if d.attribution:
        a = _table("TCO change by category")
        a.add_column("category")
        for h in ("base", "head", "change"):
            _num_col(a, h)
        for cat in d.attribution:
            a.add_row(cat.category, fmt(cat.old_usd, "usd"), fmt(cat.new_usd, "usd"),
                      fmt(cat.delta_usd, "usd", signed=True), style=None if cat.delta_usd else "dim")
        a.caption = ("capex categories carry their share of capex x (CRF + maintenance) x horizon; "
                     "energy and colocation over the horizon")
        parts.append(a)

    prov = _table("Provenance")
    prov.add_column("", style="bold")
    prov.add_column("plan")
    prov.add_column("inputs digest", overflow="fold")
    prov.add_column("solver")
    prov.add_row("base", d.base_label, d.base_digest or "-", _solver_text(d.base_solver) or "-")
    prov.add_row("head", d.head_label, d.head_digest or "-", _solver_text(d.head_solver) or "-")
    parts.append(prov)
    return Group(*_spaced(parts))


_SIGN_STYLE = {"+": "green", "-": "red", "~": "yellow"}


def _solver_text(solver: Any) -> str:
    if isinstance(solver, dict):
        gap = solver.get("mip_gap")
        name = f"{solver.get('name', '?')} {solver.get('version', '')}".strip()
        text = f"{name}, {solver.get('status', '?')}"
        return text + (f", gap {fmt(float(gap), 'pct')}" if gap is not None else "")
    return str(solver or "")
