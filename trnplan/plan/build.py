"""Build a plan of one period or many from a solution: its body (`body`: totals, sites, periods, BOM),
economics, what binds and alternatives.

`plan_scenario` is the whole pipeline for one scenario: solve, build, verify; what the CLI calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trnplan.catalog import Catalog, inputs_digest
from trnplan.costs import evaluate_decisions, objective_unit, objective_value
from trnplan.errors import SolverError
from trnplan.optimize.solution import AlternativeSolution, Solution, SolveResult, SolveStatus, Termination
from trnplan.plan.body import economics, period_parts, plan_body, workload_part
from trnplan.plan.check import check_plan
from trnplan.plan.file import plan_from_dict
from trnplan.plan.model import (
    PHASED_FORMAT,
    PLAN_FORMAT,
    Alternative,
    Inputs,
    Objective,
    Plan,
    SolverInfo,
)
from trnplan.plan.rows import binding_rows, plan_rows

if TYPE_CHECKING:
    from trnplan.optimize.progress import Deadline


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
        **_stopped(alt.result),
    )


STOPPED = {
    Termination.TIME_LIMIT: "time limit",
    Termination.SOLUTION_LIMIT: "node limit",  # HiGHS's status at `mip_max_nodes` (`solve.node_limit`)
    Termination.ITERATION_LIMIT: "iteration limit",
    Termination.INTERRUPT: "interrupted",
}


def _stopped(result: SolveResult) -> dict[str, Any]:
    """An alternative's search that a limit or Ctrl-C ended before its gap was proven: what stopped it and
    the gap it reached (None: unknown)."""
    stopped = STOPPED.get(result.termination)
    if stopped is None or result.status is not SolveStatus.FEASIBLE:
        return {}
    return {"stopped": stopped, "mip_gap": result.mip_gap}


def _bound(value: float, result: SolveResult) -> float | None:
    """The proven bound on the optimum in the objective's unit (the plan's value scaled as the solver's
    objective is to its bound), for a plan not proven optimal; None when unknown or proven optimal."""
    if result.status is SolveStatus.OPTIMAL or result.bound is None or not result.objective:
        return None
    return value * result.bound / result.objective


def build_plan(catalog: Catalog, solution: Solution) -> Plan:
    """The plan of a solution, of one period or many, in its canonical form (exactly what its file reads
    back as): `trnplan-plan/2` with its periods when the scenario has periods, else `trnplan-plan/1`."""
    scenario = catalog.scenarios[solution.scenario_id]
    ev = evaluate_decisions(catalog, solution.scenario_id, solution.decisions)
    totals, sites = plan_body(ev)
    value = objective_value(scenario.objective, ev.totals)
    result = solution.result
    solver = SolverInfo(
        name=result.solver,
        version=result.version,
        status=result.status.value,
        mip_gap=result.mip_gap,
        dinkelbach_iterations=solution.dinkelbach_iterations,
        gap_target=solution.gap_target or None,
        bound=_bound(value, result),
    )
    plan = Plan(
        format=PHASED_FORMAT if ev.phased else PLAN_FORMAT,
        scenario=solution.scenario_id,
        inputs_digest=inputs_digest(catalog, solution.scenario_id),
        solver=solver,
        objective=Objective(
            kind=scenario.objective, value=value, unit=objective_unit(scenario.objective, ev.totals)
        ),
        totals=totals,
        sites=sites,
        bom=ev.bom,
        binding=binding_rows(plan_rows(scenario, ev)),
        alternatives=[
            alternative_entry(catalog, solution.scenario_id, a, value) for a in solution.alternatives
        ],
        economics=economics(scenario),
        inputs=Inputs.of(catalog.sources),
        workload=workload_part(catalog, scenario),
        periods=period_parts(ev) if ev.phased else None,
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
    gap: float | None = None,
) -> Plan:
    """Solve a scenario to proven optimality (or within the relative `gap`; None: the scenario's) and
    return its plan, re-checked without PuLP.

    Raises InfeasibleError (with what must give) when no plan exists, SolverError when the solver fails
    or stops at a limit with no feasible plan.
    """
    from trnplan.optimize import optimize

    solution = optimize(catalog, scenario_id, solver=solver, time_limit=time_limit, alternatives=alternatives,
                        gap=gap)
    plan = build_plan(catalog, solution)
    violations = check_plan(plan, catalog)
    if violations:
        raise SolverError("internal: the solved plan fails its re-check:\n" + "\n".join(violations))
    return plan
