"""Turn a scenario into a proven-optimal plan: build -> solve -> extract, plus alternatives and explanations.

This package is the only user of PuLP; `trnplan.optimize` is imported lazily by the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trnplan.catalog import Catalog, inputs_digest
from trnplan.check import binding_rows, check_plan, constraint_rows
from trnplan.costs import NO_SWITCH, Deployment, evaluate
from trnplan.errors import InfeasibleError, SolverError
from trnplan.optimize.model import Model, build_model, set_objective
from trnplan.optimize.solve import SolveResult, SolveStatus, check_solver_available, solve
from trnplan.plan import PLAN_FORMAT, Plan, economics, plan_body

__all__ = ["optimize", "SolveStatus", "build_model", "solve"]

MAX_DINKELBACH = 40


@dataclass(frozen=True)
class Decisions:
    """A solution read back from the MILP: units per option and the scale-out switch per used site."""

    deployments: tuple[Deployment, ...]
    scale_out: tuple[tuple[str, str], ...]


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
    return float(expr.constant) + sum(coef * (var.value() or 0.0) for var, coef in expr.items())


def _solve_objective(
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
    # Dinkelbach: maximise perf - ratio x TCO; when the optimum of that is 0, `ratio` is the best PFLOPs/TCO.
    ratio = start_ratio
    best: tuple[float, SolveResult, Decisions] | None = None
    converged = False
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
        gain = perf - ratio * tco
        if result.status is not SolveStatus.OPTIMAL:
            break
        if gain <= 1e-9 * max(1.0, perf):
            converged = True  # proven: no plan beats `ratio`, which the best plan attains
            break
        ratio = perf / tco
    assert best is not None
    ratio_best, result_best, decisions_best = best
    if not converged:
        # Stopped early (a limit, or too many iterations): the ratio is not proven optimal.
        result_best = SolveResult(
            SolveStatus.FEASIBLE, result_best.solver, result_best.version, None, result_best.objective
        )
    return result_best, decisions_best, iteration


def objective_value(kind: str, totals: dict[str, Any]) -> float:
    if kind == "min_tco":
        return float(totals["tco_usd"])
    if kind == "max_perf":
        return float(totals["fp8_pflops"])
    return float(totals["fp8_pflops"]) / float(totals["tco_usd"]) * 1e6  # PFLOPs per million USD of TCO


OBJECTIVE_UNITS = {
    "min_tco": "USD",
    "max_perf": "FP8 PFLOPs",
    "max_perf_per_tco": "FP8 PFLOPs per million USD TCO",
}


def describe_choices(decisions: Decisions) -> str:
    """'site: form / cooling / scale-up + ... / scale-out' for each site, sorted."""
    by_site: dict[str, list[str]] = {}
    for d in decisions.deployments:
        by_site.setdefault(d.site, []).append(f"{d.form} / {d.cooling} / {d.scale_up_switch}")
    fabric = dict(decisions.scale_out)
    return "; ".join(
        f"{site}: {' + '.join(parts)} / {fabric[site]}" for site, parts in sorted(by_site.items())
    )


def chosen_items(decisions: Decisions) -> list[tuple[str, str]]:
    """The distinct choices a plan makes: forms, coolings, scale-up and scale-out switches used."""
    items = set()
    for d in decisions.deployments:
        items.add(("form", d.form))
        items.add(("cooling", d.cooling))
        if d.scale_up_switch != NO_SWITCH:
            items.add(("scale-up switch", d.scale_up_switch))
    items.update(("scale-out switch", switch) for _site, switch in decisions.scale_out)
    return sorted(items)


def _exclude(model: Model, kind: str, item: str) -> list[tuple[Any, Any]]:
    """Forbid one choice everywhere by zeroing the bounds of its variables; returns (var, old bound) pairs."""
    touched = []
    for sm in model.sites:
        if kind == "scale-out switch":
            variables = [y for (o, _t), y in sm.y.items() if o == item]
        else:
            field = {"form": "form", "cooling": "cooling", "scale-up switch": "scale_up_switch"}[kind]
            variables = [v for v, o in zip(sm.n, sm.options, strict=True) if getattr(o, field) == item]
        for var in variables:
            touched.append((var, var.upBound))
            var.upBound = 0
    return touched


def find_alternatives(
    catalog: Catalog,
    scenario_id: str,
    best: Decisions,
    best_value: float,
    k: int,
    solver: str,
    time_limit: float | None,
) -> list[dict[str, Any]]:
    """The best plan without each choice the optimum makes (a form, a cooling, a switch), ranked; top k.

    Each answers "what would it cost not to choose X?", and each chooses differently from the plan.
    """
    if k <= 0:
        return []
    scenario = catalog.scenarios[scenario_id]
    model = build_model(catalog, scenario_id)
    found = []
    seeds: list[tuple[list[tuple[str, str]], float]] = []  # (choices, PFLOPs per USD) of plans found so far
    for kind, item in chosen_items(best):
        touched = _exclude(model, kind, item)
        # A plan found for an earlier exclusion that does not choose `item` is feasible here too: its ratio
        # (a hair less, for rounding) is a valid Dinkelbach start.
        start = max((r for items, r in seeds if (kind, item) not in items), default=0.0) * (1 - 1e-9)
        result, decisions, _iterations = _solve_objective(model, solver, time_limit, start)
        for var, bound in touched:
            var.upBound = bound
        entry: dict[str, Any] = {"without": f"{kind} {item}"}
        if decisions is None or not decisions.deployments:
            entry.update({"status": result.status.value, "choice": "no plan meets the scenario"})
            found.append((1, 0.0, entry))
            continue
        ev = evaluate(catalog, scenario, decisions.deployments, dict(decisions.scale_out))
        if ev.totals["tco_usd"] > 0:
            seeds.append((chosen_items(decisions), ev.totals["fp8_pflops"] / ev.totals["tco_usd"]))
        value = objective_value(scenario.objective, ev.totals)
        delta = (value - best_value) / best_value * 100 if best_value else 0.0
        entry.update(
            {
                "choice": describe_choices(decisions),
                "tco_usd": round(ev.totals["tco_usd"], 2),
                "fp8_pflops": ev.totals["fp8_pflops"],
                "objective": value,
                "delta_pct": round(delta, 4),
                "status": result.status.value,
            }
        )
        worse = delta if scenario.objective == "min_tco" else -delta
        found.append((0, worse, entry))
    found.sort(key=lambda f: (f[0], f[1], f[2]["without"]))
    return [entry for _, _, entry in found[:k]]


def optimize(
    catalog: Catalog,
    scenario_id: str,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    alternatives: int = 3,
) -> Plan:
    """Solve a scenario to proven optimality and return its plan (re-checked without PuLP).

    Raises InfeasibleError (with what must give) when no plan exists, SolverError when the solver
    fails or stops at a limit with no feasible plan.
    """
    if scenario_id not in catalog.scenarios:
        from trnplan.errors import UsageError, did_you_mean

        raise UsageError(f"unknown scenario '{scenario_id}'{did_you_mean(scenario_id, catalog.scenarios)}")
    check_solver_available(solver)
    scenario = catalog.scenarios[scenario_id]
    model = build_model(catalog, scenario_id)
    result, decisions, iterations = _solve_objective(model, solver, time_limit)
    if result.status in (SolveStatus.INFEASIBLE,) or (decisions is not None and not decisions.deployments):
        from trnplan.optimize.explain import explain_infeasible

        raise InfeasibleError(scenario_id, explain_infeasible(catalog, scenario_id, solver, time_limit))
    if decisions is None:
        if result.status is SolveStatus.NO_SOLUTION:
            raise SolverError(
                f"the {result.solver} solver stopped at the time limit ({time_limit:g} s) "
                "with no feasible plan; "
                "raise --time-limit"
            )
        raise SolverError(
            f"the {result.solver} solver failed on scenario '{scenario_id}' ({result.status.value})"
        )
    ev = evaluate(catalog, scenario, decisions.deployments, dict(decisions.scale_out))
    totals, sites, bom = plan_body(ev)
    value = objective_value(scenario.objective, ev.totals)
    rows = constraint_rows(catalog, scenario, ev)
    solver_info: dict[str, Any] = {
        "name": result.solver,
        "version": result.version,
        "status": result.status.value,
        "mip_gap": result.mip_gap,  # None (null) when a stopped search could not bound it
    }
    if scenario.objective == "max_perf_per_tco":
        solver_info["dinkelbach_iterations"] = iterations
    alts = find_alternatives(catalog, scenario_id, decisions, value, alternatives, solver, time_limit)
    plan = Plan(
        scenario=scenario_id,
        inputs_digest=inputs_digest(catalog, scenario_id),
        solver=solver_info,
        objective={"kind": scenario.objective, "value": value, "unit": OBJECTIVE_UNITS[scenario.objective]},
        totals=totals,
        sites=sites,
        bom=bom,
        binding=binding_rows(rows),
        alternatives=alts,
        economics=economics(scenario),
        format=PLAN_FORMAT,
    )
    # Round-trip through the canonical form so the value returned is exactly what gets written.
    from trnplan.plan import plan_from_dict

    plan = plan_from_dict(plan.to_dict())
    violations = check_plan(plan, catalog)
    if violations:
        raise SolverError("internal: the solved plan fails its re-check:\n" + "\n".join(violations))
    return plan
