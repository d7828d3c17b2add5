"""Verify plans: against themselves (`self_check`, run on every plan read; it lives in
trnplan.plan.consistency) and against the specs (`check_plan`, PuLP-free: every constraint and every stated
figure, from the plan's decisions alone).

`bom_capex_problem` is the one "BOM lines sum to capex, to the cent" check every reader relies on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import single_view
from trnplan.costs import Deployment, Evaluation, evaluate, option_problems, scale_out_problems
from trnplan.costs.phased import PhasedEvaluation
from trnplan.plan.consistency import REL_TOL, Mismatch, bom_capex_problem, self_check
from trnplan.plan.model import BomLine, Plan, SiteSection, Totals

__all__ = ["Mismatch", "Row", "bom_capex_problem", "check_plan", "self_check"]

SCALE_OUT_FIELDS = ("switch", "tiers", "ports", "switches", "optics", "network_racks")


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


def plan_rows(catalog: Catalog, scenario_id: str, ev: Evaluation | PhasedEvaluation) -> list[Row]:
    """The scenario's rows evaluated on a plan: a phased plan's demand and site rows in each period, named
    "in 2026-07 ...", then its supply caps (on all bought) and budgets (over the window)."""
    if not isinstance(ev, PhasedEvaluation):
        return constraint_rows(catalog, catalog.scenarios[scenario_id], ev)
    rows = []
    for pf in ev.periods:
        rows += [
            replace(row, name=f"in {pf.period.start} {row.name}")
            for row in constraint_rows(pf.catalog, pf.scenario, pf.evaluation, window=False)
        ]
    last = ev.periods[-1]
    return rows + window_rows(catalog.scenarios[scenario_id], last.evaluation.supply_used, ev.totals)


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
    """Demand, per-site power, grid and positions, and (`window`) supply caps and budgets, evaluated."""
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
        rows.append(Row(f"{site_id} IT power", s.it_power_kw / 1000, site.it_power_mw, "MW"))
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


def _close(a: float, b: float, rel: float = REL_TOL, abs_tol: float = 0.011) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


# --- the plan against the specs ------------------------------------------------------------------


def deployments_of(plan: Plan) -> list[Deployment]:
    """The decisions a plan makes, sorted."""
    return sorted(
        Deployment(site, d.form, d.cooling, d.scale_up_switch, d.units)
        for site, s in plan.sites.items()
        for d in s.deployments
    )


def scale_out_of(plan: Plan) -> dict[str, str]:
    """Each site's scale-out switch."""
    return {site: s.scale_out.switch for site, s in plan.sites.items()}


def decision_problems(
    catalog: Catalog, scenario: Scenario, deployments: list[Deployment], scale_out: dict[str, str]
) -> list[str]:
    """Decisions the specs do not allow: unknown ids, sites outside the scenario, blocked options."""
    problems: list[str] = []
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
    return problems


EFFECTIVE_TOTALS = ("effective_fp8_pflops", "usd_per_effective_pflop_hour")
"""Totals a plan states exactly when its scenario names a workload."""


def _totals_problems(stated: Totals, computed: Totals) -> list[str]:
    problems = []
    for key in sorted(Totals.model_fields):
        value = getattr(computed, key)
        if value is None:
            if key in EFFECTIVE_TOTALS and getattr(stated, key) is not None:
                problems.append(f"totals.{key}: plan states it, but its scenario names no workload")
            continue
        said = getattr(stated, key)
        if said is None or not _close(float(said), float(value)):
            problems.append(f"totals.{key}: plan says {said}, the cost model gives {value}")
    return problems


def _deployment_problems(stated: dict[str, SiteSection], computed: dict[str, SiteSection]) -> list[str]:
    """Each deployment's efficiency and effective FP8 PFLOPs are the workload's (absent without one)."""
    problems = []
    for site_id, section in sorted(computed.items()):
        theirs = {d.key: d for d in stated[site_id].deployments} if site_id in stated else {}
        for ours in section.deployments:
            said = theirs.get(ours.key)
            for key in ("efficiency", "effective_fp8_pflops"):
                value, claim = getattr(ours, key), getattr(said, key) if said is not None else None
                same = (value is None and claim is None) or (
                    value is not None and claim is not None and _close(float(claim), float(value))
                )
                if not same:
                    problems.append(
                        f"sites.{site_id}.deployments {ours.key}: {key}: plan says {claim}, "
                        f"the cost model gives {value}"
                    )
    return problems


def _fabric_problems(stated: dict[str, SiteSection], computed: dict[str, SiteSection]) -> list[str]:
    problems = []
    for site_id, section in sorted(computed.items()):
        ours = section.scale_out
        theirs = stated[site_id].scale_out if site_id in stated else None
        for key in SCALE_OUT_FIELDS:
            said, expected = (getattr(theirs, key) if theirs is not None else None), getattr(ours, key)
            if said != expected:
                problems.append(
                    f"sites.{site_id}.scale_out.{key}: plan says {said}, the cost model gives {expected}"
                )
    return problems


def _bom_problems(stated: list[BomLine], computed: list[BomLine]) -> list[str]:
    if len(computed) != len(stated):
        return [f"bom: plan has {len(stated)} lines, the cost model gives {len(computed)}"]
    problems = []
    for ours, theirs in zip(computed, stated, strict=True):
        for key in ("site", "category", "item", "period"):
            if getattr(ours, key) != getattr(theirs, key):
                problems.append(f"bom line {ours.item}: {key} differs ({getattr(theirs, key)})")
        for key in ("quantity", "unit_usd", "extended_usd"):
            if not _close(getattr(ours, key), getattr(theirs, key), abs_tol=1e-6):
                problems.append(
                    f"bom line {ours.item}: {key} is {getattr(theirs, key)}, expected {getattr(ours, key)}"
                )
    return problems


def check_plan(plan: Plan, catalog: Catalog) -> list[str]:
    """Every violation found in the plan, in words; [] means it holds."""
    scenario = catalog.scenarios.get(plan.scenario)
    if scenario is None:
        return [f"scenario '{plan.scenario}' is not in the specs"]
    if plan.periods is not None or scenario.periods is not None:
        if plan.periods is None:
            return [f"scenario '{plan.scenario}' has periods; a plan of one moment is not its plan"]
        from trnplan.plan.phased import check_phased

        return check_phased(plan, catalog)
    catalog = single_view(catalog, plan.scenario)
    scenario = catalog.scenarios[plan.scenario]
    problems = decision_problems(catalog, scenario, deployments_of(plan), scale_out_of(plan))
    if problems:
        return problems
    ev = evaluate(catalog, scenario, deployments_of(plan), scale_out_of(plan))
    return check_evaluation(plan, catalog, ev)


def check_evaluation(plan: Plan, catalog: Catalog, ev: Evaluation | PhasedEvaluation) -> list[str]:
    """The plan's rows, totals, sites, fabric, BOM and workload against the cost model's evaluation."""
    from trnplan.plan.build import plan_body, workload_part

    scenario = catalog.scenarios[plan.scenario]
    problems = [f"violated: {describe(row)}" for row in plan_rows(catalog, plan.scenario, ev) if row.violated]
    totals, sites = plan_body(ev)
    problems += _totals_problems(plan.totals, totals)
    problems += _deployment_problems(plan.sites, sites)
    problems += _fabric_problems(plan.sites, sites)
    problems += _bom_problems(plan.bom, ev.bom)
    expected = workload_part(catalog, scenario)
    if plan.workload != expected:
        problems.append(f"workload: plan says {plan.workload}, the specs give {expected}")
    mismatch = bom_capex_problem(plan.bom, plan.totals.capex_usd)
    if mismatch:
        problems.append(mismatch)
    return problems
