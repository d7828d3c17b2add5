"""The scenario's constraints evaluated on a plan, as rows of used and limit: demand and site limits in each
period (named "in 2026-07 ..." when the scenario has periods), supply caps and budgets over the window; and
what binds, in words."""

from __future__ import annotations

from dataclasses import dataclass, replace

from trnplan.catalog import Catalog, Scenario
from trnplan.costs import Evaluation, WindowEvaluation
from trnplan.costs.figures import Totals


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


DEMAND_ROWS = (
    ("chips", "chips"),
    ("fp8_pflops", "PFLOPs"),
    ("hbm_tb", "TB HBM"),
    ("effective_fp8_pflops", "effective PFLOPs"),
)


def plan_rows(scenario: Scenario, ev: WindowEvaluation) -> list[Row]:
    """The scenario's rows evaluated on a plan: demand and site rows in each period (a phased plan's named
    "in 2026-07 ..."), then its supply caps (on all bought) and budgets (over the window)."""
    rows = []
    for pf in ev.periods:
        named = constraint_rows(pf.catalog, pf.scenario, pf.evaluation, window=False)
        if ev.phased:
            named = [replace(row, name=f"in {pf.period.start} {row.name}") for row in named]
        rows += named
    return rows + window_rows(scenario, ev.supply_used, ev.totals)


def window_rows(scenario: Scenario, supply_used: dict[str, int], totals: Totals) -> list[Row]:
    """Supply caps and budgets."""
    rows = [
        Row(f"supply of {key}", supply_used.get(key, 0), cap, "units")
        for key, cap in sorted(scenario.supply.items())
    ]
    if scenario.budget.capex_usd is not None:
        rows.append(Row("capex budget", totals.capex_usd, scenario.budget.capex_usd, "USD"))
    if scenario.budget.tco_usd is not None:
        rows.append(Row("TCO budget", totals.tco_usd, scenario.budget.tco_usd, "USD"))
    return rows


def constraint_rows(catalog: Catalog, scenario: Scenario, ev: Evaluation, window: bool = True) -> list[Row]:
    """One installed base's demand, per-site power, grid and positions, and (`window`) supply caps and
    budgets, evaluated."""
    rows: list[Row] = []
    totals = ev.totals
    demand = scenario.demand
    for key, unit in DEMAND_ROWS:
        need = getattr(demand, key)
        if need is not None:
            rows.append(Row(f"demand {key}", totals.figure(key), need, unit, ">="))
        cap = demand.cap(key) if key != "effective_fp8_pflops" else None
        if cap is not None:
            rows.append(Row(f"demand cap {key}", totals.figure(key), cap, unit))
    for site_id in sorted(ev.sites):
        s = ev.sites[site_id]
        site = catalog.sites[site_id]
        rows.append(Row(f"{site_id} IT power", s.it_power_kw / 1000, catalog.usable_it_power_mw(site), "MW"))
        for q, cap in sorted(site.cooling_capacity_mw.items()):
            kw = s.kw_by_cooling.get(q, 0.0)
            rows.append(Row(f"{site_id} {q} cooling capacity", kw / 1000, cap, "MW"))
        if site.grid_power_mw is not None:
            rows.append(Row(f"{site_id} grid power", s.facility_power_kw / 1000, site.grid_power_mw, "MW"))
        positions = s.compute_racks + (s.fabric.network_racks if s.fabric else 0)
        rows.append(Row(f"{site_id} rack positions", positions, site.rack_positions, "positions"))
    return rows + (window_rows(scenario, ev.supply_used, totals) if window else [])


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
