"""Turn a scenario into a proven-optimal solution: build -> solve -> extract, plus alternatives and
explanations. What it returns is a `Solution` (decisions and how the solver ended); plans are built from
it by `trnplan.plan.build`.

This package is the only user of PuLP; `trnplan.optimize` is imported lazily by the CLI.
"""

from __future__ import annotations

from typing import Any

from trnplan.catalog import Catalog
from trnplan.costs import Deployment
from trnplan.errors import InfeasibleError, SolverError, UsageError, did_you_mean
from trnplan.optimize.model import Model, build_model, set_objective
from trnplan.optimize.solve import check_solver_available, solve
from trnplan.solution import Decisions, Solution, SolveResult, SolveStatus, Termination

__all__ = ["optimize", "SolveStatus", "build_model", "solve"]

MAX_DINKELBACH = 40


def extract(model: Model) -> Decisions:
    """Round the integer values and read which options and scale-out switch each site uses."""
    deployments = []
    scale_out = []
    for sm in model.sites:
        site_units = 0
        for v, o in zip(sm.n, sm.options, strict=True):
            units = round(v.value() or 0)
            if units > 0:
                deployments.append(Deployment(sm.site, o.form, o.cooling, o.scale_up_switch, units))
                site_units += units
        if site_units:
            chosen = sorted(o for (o, _t), y in sm.y.items() if round(y.value() or 0) == 1)
            if len(chosen) != 1:
                raise SolverError(f"internal: site {sm.site} has chips but {len(chosen)} scale-out switches")
            scale_out.append((sm.site, chosen[0]))
    return Decisions(tuple(sorted(deployments)), tuple(scale_out))


def value_of(expr: Any) -> float:
    """An expression's value; variables the solver never saw (zero coefficients everywhere) count as 0."""
    return float(expr.constant) + sum(float(coef) * (var.value() or 0.0) for var, coef in expr.items())


def solve_objective(
    model: Model, solver: str, time_limit: float | None, start_ratio: float = 0.0
) -> tuple[SolveResult, Decisions | None, int]:
    """Solve the scenario's objective; max_perf_per_tco by Dinkelbach iterations of MILPs.

    `start_ratio` (PFLOPs per USD of TCO) must be one that some feasible plan attains (or less): Dinkelbach
    then starts there instead of at 0 and needs fewer MILPs.
    """
    kind = model.scenario.objective
    if kind != "max_perf_per_tco":
        set_objective(model, kind)
        result = solve(model.prob, solver, time_limit)
        return result, (extract(model) if result.status.has_solution else None), 1
    return _dinkelbach(model, solver, time_limit, start_ratio)


def _dinkelbach(
    model: Model, solver: str, time_limit: float | None, ratio: float
) -> tuple[SolveResult, Decisions | None, int]:
    """Maximise perf - ratio x TCO; when the optimum of that is 0, `ratio` is the best PFLOPs/TCO."""
    best: tuple[float, SolveResult, Decisions] | None = None
    converged = False
    iteration = 0
    for iteration in range(1, MAX_DINKELBACH + 1):
        set_objective(model, "dinkelbach", ratio)
        result = solve(model.prob, solver, time_limit)
        if not result.status.has_solution:
            if best is None:
                return result, None, iteration
            break
        perf, tco = value_of(model.perf), value_of(model.tco)
        decisions = extract(model)
        if tco <= 0:
            raise SolverError("internal: a plan with zero TCO")
        if best is None or perf / tco > best[0] * (1 + 1e-12):
            best = (perf / tco, result, decisions)
        if result.status is not SolveStatus.OPTIMAL:
            break
        if perf - ratio * tco <= 1e-9 * max(1.0, perf):
            converged = True  # proven: no plan beats `ratio`, which the best plan attains
            break
        ratio = perf / tco
    assert best is not None
    _ratio, result_best, decisions_best = best
    if not converged:
        # Stopped early (a limit, or too many iterations): the ratio is not proven optimal.
        result_best = SolveResult(
            SolveStatus.FEASIBLE,
            result_best.solver,
            result_best.version,
            None,
            result_best.objective,
            result_best.termination,
        )
    return result_best, decisions_best, iteration


def no_solution_message(result: SolveResult, scenario_id: str, time_limit: float | None) -> str:
    """Why the solver gave no plan, in its own terms: a time limit, an iteration limit, an interrupt..."""
    name = result.solver
    if result.status is SolveStatus.NO_SOLUTION:
        if result.termination is Termination.ITERATION_LIMIT:
            return f"the {name} solver stopped at its iteration limit with no feasible plan"
        if result.termination is Termination.SOLUTION_LIMIT:
            return f"the {name} solver stopped at its solution limit with no feasible plan"
        if result.termination is Termination.INTERRUPT:
            return f"the {name} solver was interrupted before it found a feasible plan"
        limit = f" ({time_limit:g} s)" if time_limit is not None else ""
        return f"the {name} solver stopped at the time limit{limit} with no feasible plan; raise --time-limit"
    return f"the {name} solver failed on scenario '{scenario_id}' ({result.status.value})"


def optimize(
    catalog: Catalog,
    scenario_id: str,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    alternatives: int = 3,
) -> Solution:
    """Solve a scenario to proven optimality: the optimum's decisions and the ranked alternatives.

    Raises InfeasibleError (with what must give) when no plan exists, SolverError when the solver
    fails or stops at a limit with no feasible plan.
    """
    if scenario_id not in catalog.scenarios:
        raise UsageError(f"unknown scenario '{scenario_id}'{did_you_mean(scenario_id, catalog.scenarios)}")
    check_solver_available(solver)
    model = build_model(catalog, scenario_id)
    result, decisions, iterations = solve_objective(model, solver, time_limit)
    if result.status is SolveStatus.INFEASIBLE or (decisions is not None and not decisions.deployments):
        from trnplan.optimize.explain import explain_infeasible

        raise InfeasibleError(scenario_id, explain_infeasible(catalog, scenario_id, solver, time_limit))
    if decisions is None:
        raise SolverError(no_solution_message(result, scenario_id, time_limit))
    from trnplan.optimize.alternatives import find_alternatives

    alts = find_alternatives(catalog, scenario_id, decisions, alternatives, solver, time_limit)
    return Solution(
        scenario_id=scenario_id,
        decisions=decisions,
        result=result,
        dinkelbach_iterations=iterations if model.scenario.objective == "max_perf_per_tco" else None,
        alternatives=tuple(alts),
    )
