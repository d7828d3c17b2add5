"""Alternatives: for each choice the optimum makes (a form, a cooling, a switch), the best solution
without it anywhere, re-solved on the same model with that choice's variables fixed to zero."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trnplan.catalog import Catalog
from trnplan.costs import evaluate_decisions, objective_value, perf_of
from trnplan.optimize import progress
from trnplan.optimize.build import build_model
from trnplan.optimize.model import Model
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solution import AlternativeSolution, Decisions, SolveResult, Termination

Search = Callable[[Model, str, Deadline, float], tuple[SolveResult, Decisions | None, int]]
"""How a model is solved (`trnplan.optimize.solve_objective`): model, solver, deadline, a start ratio."""

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
    time_limit: float | Deadline | None,
    search: Search,
    found: list[AlternativeSolution] | None = None,
) -> list[AlternativeSolution]:
    """The best solution without each choice the optimum makes, ranked by the objective; top k.

    Each answers "what would it cost not to choose X?", and each chooses differently from the plan. They are
    searched while `time_limit` (seconds, or a Deadline shared with the search) leaves time; one the limit
    or a Ctrl-C stopped before anything was found is left out, being neither a plan nor proof of none.
    Each is solved by `search` (`trnplan.optimize.solve_objective`). `found`, when given, collects each
    as it is found (for a caller that is interrupted halfway).
    """
    found = [] if found is None else found
    if k <= 0:
        return []
    deadline = Deadline.of(time_limit)
    scenario = catalog.scenarios[scenario_id]
    model = build_model(catalog, scenario_id)
    seeds: list[tuple[list[tuple[str, str]], float]] = []  # (choices, PFLOPs per USD) of plans found so far
    choices = best.chosen_items()
    for i, (kind, item) in enumerate(choices, 1):
        if deadline.expired or progress.interrupted():
            break
        touched = _exclude(model, kind, item)
        # A plan found for an earlier exclusion that does not choose `item` is feasible here too: its ratio
        # (a hair less, for rounding) is a valid Dinkelbach start.
        start = max((r for items, r in seeds if (kind, item) not in items), default=0.0) * (1 - 1e-9)
        with progress.stage(f"alternative {i} of {len(choices)}: without {kind} {item}"):
            result, decisions, _iterations = search(model, solver, deadline, start)
        for var, bound in touched:
            var.upBound = bound
        if progress.interrupted():
            break
        if decisions is None or not decisions.deployments:
            if not result.termination.is_limit and result.termination is not Termination.INTERRUPT:
                found.append(AlternativeSolution(f"{kind} {item}", result))  # proven: none without it
            continue
        ev = evaluate_decisions(catalog, scenario_id, decisions)
        if ev.totals.tco_usd > 0:
            seeds.append((decisions.chosen_items(), perf_of(ev.totals) / ev.totals.tco_usd))
        value = objective_value(scenario.objective, ev.totals)
        found.append(AlternativeSolution(f"{kind} {item}", result, decisions, value))
    return ranked(catalog, scenario_id, best, found, k)


def ranked(
    catalog: Catalog, scenario_id: str, best: Decisions, alternatives: list[AlternativeSolution], k: int
) -> list[AlternativeSolution]:
    """The top k alternatives: feasible ones first, by how much worse than the optimum, then by name."""
    scenario = catalog.scenarios[scenario_id]
    best_ev = evaluate_decisions(catalog, scenario_id, best)
    best_value = objective_value(scenario.objective, best_ev.totals)
    return sorted(alternatives, key=lambda a: _rank(a, scenario.objective, best_value))[:k]
