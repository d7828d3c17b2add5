"""Alternatives: for each choice the optimum makes (a form, a cooling, a switch), the best solution
without it anywhere, re-solved on the same model with that choice's variables fixed to zero."""

from __future__ import annotations

from typing import Any

from trnplan.catalog import Catalog
from trnplan.costs import evaluate, objective_value
from trnplan.optimize.model import Model, build_model
from trnplan.solution import AlternativeSolution, Decisions

CHOICE_FIELDS = {"form": "form", "cooling": "cooling", "scale-up switch": "scale_up_switch"}


def _exclude(model: Model, kind: str, item: str) -> list[tuple[Any, Any]]:
    """Forbid one choice everywhere by zeroing the bounds of its variables; returns (var, old bound) pairs."""
    touched = []
    for sm in model.sites:
        if kind == "scale-out switch":
            variables = [y for (o, _t), y in sm.y.items() if o == item]
        else:
            field = CHOICE_FIELDS[kind]
            variables = [v for v, o in zip(sm.n, sm.options, strict=True) if getattr(o, field) == item]
        for var in variables:
            touched.append((var, var.upBound))
            var.upBound = 0
    return touched


def _rank(alt: AlternativeSolution, objective: str, best_value: float) -> tuple[int, float, str]:
    """Feasible first, then by how much worse than the optimum, then by name."""
    if alt.objective is None:
        return (1, 0.0, alt.without)
    delta = (alt.objective - best_value) / best_value * 100 if best_value else 0.0
    return (0, delta if objective == "min_tco" else -delta, alt.without)


def find_alternatives(
    catalog: Catalog,
    scenario_id: str,
    best: Decisions,
    k: int,
    solver: str,
    time_limit: float | None,
) -> list[AlternativeSolution]:
    """The best solution without each choice the optimum makes, ranked by the objective; top k.

    Each answers "what would it cost not to choose X?", and each chooses differently from the plan.
    """
    from trnplan.optimize import solve_objective

    if k <= 0:
        return []
    scenario = catalog.scenarios[scenario_id]
    best_ev = evaluate(catalog, scenario, best.deployments, dict(best.scale_out))
    best_value = objective_value(scenario.objective, best_ev.totals)
    model = build_model(catalog, scenario_id)
    found = []
    seeds: list[tuple[list[tuple[str, str]], float]] = []  # (choices, PFLOPs per USD) of plans found so far
    for kind, item in best.chosen_items():
        touched = _exclude(model, kind, item)
        # A plan found for an earlier exclusion that does not choose `item` is feasible here too: its ratio
        # (a hair less, for rounding) is a valid Dinkelbach start.
        start = max((r for items, r in seeds if (kind, item) not in items), default=0.0) * (1 - 1e-9)
        result, decisions, _iterations = solve_objective(model, solver, time_limit, start)
        for var, bound in touched:
            var.upBound = bound
        if decisions is None or not decisions.deployments:
            found.append(AlternativeSolution(f"{kind} {item}", result))
            continue
        ev = evaluate(catalog, scenario, decisions.deployments, dict(decisions.scale_out))
        if ev.totals.tco_usd > 0:
            seeds.append((decisions.chosen_items(), ev.totals.fp8_pflops / ev.totals.tco_usd))
        value = objective_value(scenario.objective, ev.totals)
        found.append(AlternativeSolution(f"{kind} {item}", result, decisions, value))
    found.sort(key=lambda a: _rank(a, scenario.objective, best_value))
    return found[:k]
