"""Build a plan from a solution: its body (totals, sites, BOM), economics, what binds and alternatives.

`plan_scenario` is the whole pipeline for one scenario: solve, build, verify; what the CLI calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trnplan.catalog import Catalog, Scenario, inputs_digest
from trnplan.costs import (
    Evaluation,
    crf,
    form_efficiency,
    objective_unit,
    objective_value,
    tco_per_capex_usd,
)
from trnplan.costs.phased import PhasedEvaluation, evaluate_decisions
from trnplan.errors import InputError, SolverError
from trnplan.numbers import usd
from trnplan.optimize.solution import AlternativeSolution, Solution
from trnplan.plan.check import binding_rows, check_plan, plan_rows
from trnplan.plan.model import (
    PHASED_FORMAT,
    PLAN_FORMAT,
    Alternative,
    DeploymentRow,
    Economics,
    Inputs,
    Objective,
    Plan,
    PlanPeriod,
    ScaleOut,
    SiteSection,
    SolverInfo,
    Totals,
    Utilization,
    WorkloadPart,
)

if TYPE_CHECKING:
    from trnplan.costs import SiteFigures
    from trnplan.optimize.progress import Deadline

MAX_PLAN_USD = 1e13
"""Largest capex or TCO a plan may state. Money is kept to the cent in binary floating point, which is
exact to about 9e13 USD; and a ten-trillion-dollar deployment is a unit slip, not a plan."""

MONEY_TOTALS = (
    "capex_usd",
    "opex_usd_per_year",
    "energy_usd_per_year",
    "colocation_usd_per_year",
    "maintenance_usd_per_year",
    "tco_usd",
)


def economics(scenario: Scenario) -> Economics:
    """The scenario's money terms, so a plan alone can attribute its TCO: TCO = capex x tco_per_capex_usd
    + horizon_years x (energy + colocation) per year."""
    return Economics(
        horizon_years=scenario.horizon_years,
        cost_of_capital=scenario.cost_of_capital,
        crf=crf(scenario.cost_of_capital, scenario.horizon_years),
        maintenance_rate=scenario.maintenance_rate,
        utilization=scenario.utilization,
        tco_per_capex_usd=tco_per_capex_usd(scenario),
    )


def check_money_range(evaluation: Evaluation | PhasedEvaluation) -> None:
    """Refuse a plan whose capex or TCO is beyond MAX_PLAN_USD (InputError, exit 3): each spec value can be
    plausible while their product is not (100 million chips at 10 million USD), and past it the plan's
    BOM no longer adds up to its capex to the cent. The largest BOM line points at the likely slip."""
    totals = evaluation.totals
    key = max(("capex_usd", "tco_usd"), key=lambda k: abs(getattr(totals, k)))
    value = getattr(totals, key)
    if abs(value) <= MAX_PLAN_USD:
        return
    what = "capex" if key == "capex_usd" else "TCO"
    hint = ""
    if evaluation.bom:
        top = max(evaluation.bom, key=lambda line: abs(line.extended_usd))
        hint = (
            f"; its largest BOM line is {top.site}: {top.item} ({top.category}), "
            f"{top.quantity:,.6g} x ${top.unit_usd:,.6g} = ${top.extended_usd:.3g}"
        )
    raise InputError(
        f"the best plan's {what} is ${value:.3g}, beyond the ${MAX_PLAN_USD:.0e} a plan can account for to "
        f"the cent: a spec value is likely in the wrong unit, or the demand too large{hint}"
    )


def site_section(s: SiteFigures, workload: bool) -> SiteSection:
    """A site's section; with a workload, each deployment states its efficiency and effective PFLOPs."""
    fab = s.fabric
    assert fab is not None
    return SiteSection(
        cooling_used=s.cooling_used,
        scale_out=ScaleOut(
            switch=fab.switch,
            tiers=fab.tiers,
            ports=fab.ports,
            switches=fab.switches,
            optics=fab.optics,
            network_racks=fab.network_racks,
            it_power_kw=fab.it_power_kw,
            capex_usd=usd(s.fabric_capex_usd),
        ),
        deployments=[
            DeploymentRow(
                form=f.deployment.form,
                cooling=f.deployment.cooling,
                scale_up_switch=f.deployment.scale_up_switch,
                units=f.deployment.units,
                racks=f.racks,
                chips=f.chips,
                domains=f.domains,
                fp8_pflops=f.fp8_pflops,
                it_power_kw=f.it_power_kw,
                capex_usd=usd(f.capex_usd),
                efficiency=f.efficiency if workload else None,
                effective_fp8_pflops=f.effective_fp8_pflops if workload else None,
            )
            for f in s.deployments
        ],
        racks=s.compute_racks,
        it_power_kw=s.it_power_kw,
        facility_power_kw=s.facility_power_kw,
        capex_usd=usd(s.capex_usd),
        opex_usd_per_year=usd(s.opex_usd_per_year),
        energy_usd_per_year=usd(s.energy_usd_per_year),
        colocation_usd_per_year=usd(s.colocation_usd_per_year),
        utilization=Utilization(**s.utilization),
    )


def plan_body(evaluation: Evaluation | PhasedEvaluation) -> tuple[Totals, dict[str, SiteSection]]:
    """Totals (money to the cent) and per-site sections of a plan, from the cost model's evaluation."""
    check_money_range(evaluation)
    totals = evaluation.totals.model_copy(
        update={key: usd(getattr(evaluation.totals, key)) for key in MONEY_TOTALS}
    )
    workload = evaluation.totals.effective_fp8_pflops is not None
    sites = {site_id: site_section(s, workload) for site_id, s in evaluation.sites.items()}
    return totals, sites


def alternative_entry(
    catalog: Catalog, scenario_id: str, alt: AlternativeSolution, best_value: float
) -> Alternative:
    """An alternative as the plan states it: its choices, TCO, PFLOPs and change of objective."""
    if alt.decisions is None or not alt.decisions.deployments:
        return Alternative(
            without=alt.without, status=alt.result.status.value, choice="no plan meets the scenario"
        )
    scenario = catalog.scenarios[scenario_id]
    ev = evaluate_decisions(catalog, scenario_id, alt.decisions)
    value = objective_value(scenario.objective, ev.totals)
    delta = (value - best_value) / best_value * 100 if best_value else 0.0
    return Alternative(
        without=alt.without,
        choice=alt.decisions.describe(),
        tco_usd=round(ev.totals.tco_usd, 2),
        fp8_pflops=ev.totals.fp8_pflops,
        effective_fp8_pflops=ev.totals.effective_fp8_pflops,
        objective=value,
        delta_pct=round(delta, 4),
        status=alt.result.status.value,
    )


def workload_part(catalog: Catalog, scenario: Scenario) -> WorkloadPart | None:
    """The scenario's workload and what it delivers on each form the scenario allows; None without one."""
    if scenario.workload is None:
        return None
    forms = [
        f
        for f, form in sorted(catalog.forms.items())
        if (scenario.forms is None or f in scenario.forms)
        and (scenario.chips is None or form.chip in scenario.chips)
    ]
    return WorkloadPart(
        id=scenario.workload,
        name=catalog.workloads[scenario.workload].name,
        efficiency={f: form_efficiency(catalog, scenario, f) for f in forms},
    )


def _period_parts(ev: Evaluation | PhasedEvaluation) -> list[PlanPeriod] | None:
    from trnplan.plan.phased import period_parts

    return period_parts(ev) if isinstance(ev, PhasedEvaluation) else None


def build_plan(catalog: Catalog, solution: Solution) -> Plan:
    """The plan of a solution, in its canonical form (exactly what its file reads back as)."""
    from trnplan.plan.file import plan_from_dict

    scenario = catalog.scenarios[solution.scenario_id]
    ev = evaluate_decisions(catalog, solution.scenario_id, solution.decisions)
    phased = isinstance(ev, PhasedEvaluation)
    totals, sites = plan_body(ev)
    value = objective_value(scenario.objective, ev.totals)
    result = solution.result
    solver = SolverInfo(
        name=result.solver,
        version=result.version,
        status=result.status.value,
        mip_gap=result.mip_gap,
        dinkelbach_iterations=solution.dinkelbach_iterations,
    )
    plan = Plan(
        format=PHASED_FORMAT if phased else PLAN_FORMAT,
        scenario=solution.scenario_id,
        inputs_digest=inputs_digest(catalog, solution.scenario_id),
        solver=solver,
        objective=Objective(
            kind=scenario.objective, value=value, unit=objective_unit(scenario.objective, ev.totals)
        ),
        totals=totals,
        sites=sites,
        bom=ev.bom,
        binding=binding_rows(plan_rows(catalog, solution.scenario_id, ev)),
        alternatives=[
            alternative_entry(catalog, solution.scenario_id, a, value) for a in solution.alternatives
        ],
        economics=economics(scenario),
        inputs=Inputs.of(catalog.sources),
        workload=workload_part(catalog, scenario),
        periods=_period_parts(ev),
    )
    # Round-trip through the canonical form so the value returned is exactly what gets written.
    return plan_from_dict(plan.to_dict())


def plan_scenario(
    catalog: Catalog,
    scenario_id: str,
    *,
    solver: str = "highs",
    time_limit: float | Deadline | None = None,
    alternatives: int = 3,
) -> Plan:
    """Solve a scenario to proven optimality and return its plan, re-checked without PuLP.

    Raises InfeasibleError (with what must give) when no plan exists, SolverError when the solver fails
    or stops at a limit with no feasible plan.
    """
    from trnplan.optimize import optimize

    solution = optimize(catalog, scenario_id, solver=solver, time_limit=time_limit, alternatives=alternatives)
    plan = build_plan(catalog, solution)
    violations = check_plan(plan, catalog)
    if violations:
        raise SolverError("internal: the solved plan fails its re-check:\n" + "\n".join(violations))
    return plan
