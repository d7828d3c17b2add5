"""PuLP-free re-check of a plan: every constraint and every stated figure, from the plan's decisions alone."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trnplan.catalog import Catalog, Scenario
from trnplan.costs import Evaluation, evaluate, option_problems, scale_out_problems
from trnplan.plan import Plan, plan_body

REL_TOL = 1e-6


@dataclass(frozen=True)
class Row:
    """One constraint of the scenario, as used and limit in report units (`used <= limit` or `>=`)."""

    name: str
    used: float
    limit: float
    unit: str
    sense: str = "<="

    @property
    def violated(self) -> bool:
        tol = 1e-6 * max(1.0, abs(self.limit))
        return self.used > self.limit + tol if self.sense == "<=" else self.used < self.limit - tol

    @property
    def slack(self) -> float:
        return self.limit - self.used if self.sense == "<=" else self.used - self.limit


def constraint_rows(catalog: Catalog, scenario: Scenario, ev: Evaluation) -> list[Row]:
    """Demand, per-site power, grid and positions, supply caps and budgets, evaluated."""
    rows: list[Row] = []
    totals = ev.totals
    demand = scenario.demand
    for key, unit in (("chips", "chips"), ("fp8_pflops", "PFLOPs"), ("hbm_tb", "TB HBM")):
        need = getattr(demand, key)
        if need is not None:
            rows.append(Row(f"demand {key}", totals[key], need, unit, ">="))
    for site_id in sorted(ev.sites):
        s = ev.sites[site_id]
        site = catalog.sites[site_id]
        rows.append(Row(f"{site_id} IT power", s.it_power_kw / 1000, site.it_power_mw, "MW"))
        if site.grid_power_mw is not None:
            rows.append(Row(f"{site_id} grid power", s.facility_power_kw / 1000, site.grid_power_mw, "MW"))
        positions = s.compute_racks + (s.fabric.network_racks if s.fabric else 0)
        rows.append(Row(f"{site_id} rack positions", positions, site.rack_positions, "positions"))
    for key, cap in sorted(scenario.supply.items()):
        rows.append(Row(f"supply of {key}", ev.supply_used.get(key, 0), cap, "units"))
    if scenario.budget.capex_usd is not None:
        rows.append(Row("capex budget", totals["capex_usd"], scenario.budget.capex_usd, "USD"))
    if scenario.budget.tco_usd is not None:
        rows.append(Row("TCO budget", totals["tco_usd"], scenario.budget.tco_usd, "USD"))
    return rows


def _fmt(value: float, unit: str) -> str:
    if unit == "USD":
        return f"${value:,.0f}"
    if unit in ("MW",):
        return f"{value:,.1f} {unit}"
    if float(value).is_integer():
        return f"{value:,.0f} {unit}"
    return f"{value:,.1f} {unit}"


def describe(row: Row) -> str:
    return f"{row.name}: {_fmt(row.used, row.unit)} of {_fmt(row.limit, row.unit)}"


def binding_rows(rows: list[Row], threshold: float = 0.97) -> list[str]:
    """What holds the plan back, in words: rows at or near their limits (demand met exactly counts)."""
    out = []
    for row in rows:
        if row.sense == ">=":
            if row.limit and row.used <= row.limit * (1 + 1e-9) + 1e-9:
                out.append(f"{describe(row)} (met exactly)")
        elif row.limit and row.used >= threshold * row.limit:
            out.append(describe(row))
    return out


def _close(a: float, b: float, rel: float = REL_TOL, abs_tol: float = 0.011) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def check_plan(plan: Plan, catalog: Catalog) -> list[str]:
    """Every violation found in the plan, in words; [] means it holds."""
    problems: list[str] = []
    scenario = catalog.scenarios.get(plan.scenario)
    if scenario is None:
        return [f"scenario '{plan.scenario}' is not in the specs"]
    deployments = plan.deployments()
    scale_out = plan.scale_out()
    for d in deployments:
        if d.site not in scenario.sites:
            problems.append(f"site {d.site} is not among the scenario's sites")
            continue
        if d.form not in catalog.forms or d.cooling not in catalog.cooling:
            problems.append(f"{d.site}: unknown form or cooling {d.form}/{d.cooling}")
            continue
        form = catalog.forms[d.form]
        known_switch = d.scale_up_switch in {o.switch for o in form.scale_up} or (
            not form.scale_up and d.scale_up_switch == "none"
        )
        if not known_switch:
            problems.append(f"{d.site}: form {d.form} does not accept scale-up switch {d.scale_up_switch}")
            continue
        if d.units <= 0:
            problems.append(f"{d.site}: {d.form} has {d.units} units")
        for why in option_problems(catalog, scenario, d.site, d.form, d.cooling, d.scale_up_switch):
            problems.append(f"{d.site}: {why}")
    for site_id, switch_id in sorted(scale_out.items()):
        if switch_id not in catalog.switches:
            problems.append(f"{site_id}: unknown scale-out switch {switch_id}")
            continue
        problems.extend(f"{site_id}: {why}" for why in scale_out_problems(catalog, scenario, switch_id))
    if problems:
        return problems
    ev = evaluate(catalog, scenario, deployments, scale_out)
    for row in constraint_rows(catalog, scenario, ev):
        if row.violated:
            problems.append(f"violated: {describe(row)}")
    totals, sites, bom = plan_body(ev)
    for key, value in sorted(totals.items()):
        stated = plan.totals.get(key)
        if stated is None or not _close(float(stated), float(value)):
            problems.append(f"totals.{key}: plan says {stated}, the cost model gives {value}")
    for site_id, section in sorted(sites.items()):
        stated_site = plan.sites.get(site_id, {})
        for key in ("switch", "tiers", "ports", "switches", "optics", "network_racks"):
            if stated_site.get("scale_out", {}).get(key) != section["scale_out"][key]:
                problems.append(
                    f"sites.{site_id}.scale_out.{key}: "
                    f"plan says {stated_site.get('scale_out', {}).get(key)}, "
                    f"the cost model gives {section['scale_out'][key]}"
                )
    if len(bom) != len(plan.bom):
        problems.append(f"bom: plan has {len(plan.bom)} lines, the cost model gives {len(bom)}")
    else:
        for ours, theirs in zip(bom, plan.bom, strict=True):
            for key in ("site", "category", "item"):
                if ours[key] != theirs.get(key):
                    problems.append(f"bom line {ours['item']}: {key} differs ({theirs.get(key)})")
            for key in ("quantity", "unit_usd", "extended_usd"):
                if not _close(float(ours[key]), float(theirs.get(key, math.nan)), abs_tol=1e-6):
                    problems.append(
                        f"bom line {ours['item']}: {key} is {theirs.get(key)}, expected {ours[key]}"
                    )
    bom_cents = sum(round(float(line.get("extended_usd", 0)) * 100) for line in plan.bom)
    if bom_cents != round(float(plan.totals.get("capex_usd", 0)) * 100):
        problems.append(
            f"bom lines sum to ${bom_cents / 100:,.2f}, plan capex is ${plan.totals.get('capex_usd')}"
        )
    return problems
