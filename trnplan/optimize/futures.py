"""One plan across futures: the extensive form of a two-stage plan (here-and-now, then recourse), as
PyPSA's stochastic optimisation builds it: one copy of the phased model per future, its variables named
by the future, in one problem.

Per future k the scenario's whole phased model (every row of `trnplan.optimize.build`), read against that
future's catalog. Non-anticipativity: for every period p up to `decide` (the first `shared` periods),
site s and option i, n_k[s,i,p] = n_0[s,i,p] (an option a future cannot take counts as 0 units); a site
with compute by then (h[s] = 1, sum_i n_0[s,i,decide] <= U_s h[s]) keeps one scale-out switch type in
every future, |x_k[s,o] - x_0[s,o]| <= 1 - h[s]. Objective, in millions of USD: the expected TCO
(1/K) sum_k TCO_k, or its CVaR at level a (Rockafellar-Uryasev): eta + 1/((1-a) K) sum_k u_k with
u_k >= TCO_k - eta, u_k >= 0. Options another one dominates are kept (dominance depends on prices,
which differ between futures), so every future has the same options.

`recourse` solves one future with the shared purchases fixed: the plan made for the average future,
priced in each future (the value of the stochastic solution).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulp

from trnplan.catalog import Catalog
from trnplan.errors import SolverError, UsageError
from trnplan.optimize import extract
from trnplan.optimize.build import build_model
from trnplan.optimize.model import MONEY_SCALE, Model, lin, name
from trnplan.optimize.solution import Decisions, SolveResult, SolveStatus
from trnplan.optimize.solve import check_solver_available, solve

Key = tuple[str, str, str]


@dataclass(frozen=True)
class FuturesSolution:
    """The solved extensive form: each future's decisions over the whole window (the first `shared`
    periods the same in all), and how the solver ended."""

    result: SolveResult
    decisions: tuple[Decisions, ...]


def shared_periods(catalog: Catalog, scenario_id: str) -> int:
    """How many periods are shared: those that start at or before the scenario's `decide` (the first one
    when it has none); UsageError for a scenario a plan across futures cannot take."""
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is None:
        raise UsageError(f"--futures needs a phased scenario (periods); '{scenario_id}' has none")
    if scenario.objective != "min_tco":
        raise UsageError(f"--futures minimises expected TCO: scenario '{scenario_id}' has objective "
                         f"{scenario.objective}, not min_tco")
    decide = scenario.decide
    return 1 if decide is None or decide not in scenario.periods else scenario.periods.index(decide) + 1


def _future_model(catalog: Catalog, scenario_id: str, prefix: str) -> Model:
    """The phased model of one future, its variables renamed by `prefix` so futures share one problem."""
    model = build_model(catalog, scenario_id, prune=False, start=False)
    seen = {id(v): v for v in model.prob.variables()}
    seen.update({id(v): v for v, _ in model.tco.items()})
    for var in seen.values():
        var.name = f"{prefix}{var.name}"
    return model


def _units(model: Model, p: int) -> list[dict[Key, Any]]:
    """Per site (sorted), option key -> its units variable in period p."""
    return [{o.key: v for v, o in zip(sm.n, sm.options, strict=True)} for sm in model.periods[p].sites]


def _equal(prob: pulp.LpProblem, a: Any, b: Any, label: str) -> None:
    """a = b where either may be absent (a future that cannot take an option: 0 units)."""
    pairs = [(v, c) for v, c in ((a, 1.0), (b, -1.0)) if v is not None]
    if pairs:
        prob += lin(pairs) == 0, label


def define_shared(prob: pulp.LpProblem, models: Sequence[Model], shared: int) -> None:
    """Purchases in the shared periods are the same in every future; a site with compute by the last of
    them keeps one scale-out switch type in every future."""
    first = models[0]
    for k, model in enumerate(models[1:], start=1):
        for p in range(shared):
            for s, (mine, theirs) in enumerate(zip(_units(model, p), _units(first, p), strict=True)):
                for i, key in enumerate(sorted(set(mine) | set(theirs))):
                    _equal(prob, mine.get(key), theirs.get(key), name("na", k, p, s, i))
    for s, sm in enumerate(first.periods[shared - 1].sites):
        has = prob.add_variable(name("has", s), 0, 1, pulp.LpBinary)
        prob += lin([(v, 1.0) for v in sm.n] + [(has, -float(max(sum(sm.upper), 1)))]) <= 0, name("has", s)
        for k, model in enumerate(models[1:], start=1):
            own, base = model.window[s], first.window[s]
            for o_index, o in enumerate(sorted(set(own) | set(base))):
                a, b = own.get(o), base.get(o)
                for sign, label in ((1.0, "up"), (-1.0, "down")):
                    pairs = [(v, c) for v, c in ((a, sign), (b, -sign)) if v is not None]
                    prob += lin([*pairs, (has, 1.0)]) <= 1, name("same_out", label, k, s, o_index)


def _objective(prob: pulp.LpProblem, models: Sequence[Model], risk: float | None) -> None:
    """Expected TCO, or its CVaR at level `risk`, in millions of USD."""
    share = 1.0 / len(models)
    if risk is None:
        prob.setObjective(lin([(v, c * share * MONEY_SCALE) for m in models for v, c in m.tco.items()],
                              sum(m.tco.constant for m in models) * share * MONEY_SCALE))
        return
    eta = prob.add_variable("cvar_eta", None, None)
    tails = []
    for k, model in enumerate(models):
        u = prob.add_variable(name("cvar_tail", k), 0, None)
        tails.append((u, share / (1 - risk)))
        terms = [(v, c * MONEY_SCALE) for v, c in model.tco.items()] + [(u, -1.0), (eta, -1.0)]
        prob += lin(terms, model.tco.constant * MONEY_SCALE) <= 0, name("cvar_tail", k)
    prob.setObjective(lin([(eta, 1.0), *tails]))


def optimize_futures(
    catalogs: Sequence[Catalog], scenario_id: str, shared: int, *, risk: float | None = None,
    solver: str = "highs", time_limit: float | None = None, gap: float = 0.0,
) -> FuturesSolution:
    """Minimise expected TCO (or its CVaR at `risk`) over the futures (one catalog each) with the first
    `shared` periods' purchases the same in all, proven optimal (`gap` > 0: within that relative gap, as
    the bench measures the target); SolverError when no plan holds in every future."""
    check_solver_available(solver)
    models = [_future_model(c, scenario_id, f"f{k}_") for k, c in enumerate(catalogs)]
    prob = pulp.LpProblem(f"trnplan_futures_{scenario_id}".replace("-", "_").replace(".", "_"),
                          pulp.LpMinimize)
    for k, model in enumerate(models):
        for row in model.prob.constraints():
            prob.addConstraint(row, f"f{k}_{row.name}")
    define_shared(prob, models, shared)
    _objective(prob, models, risk)
    result = solve(prob, solver, time_limit, gap=gap)
    if not result.status.has_solution:
        if result.status is SolveStatus.INFEASIBLE:
            raise SolverError(f"no plan of scenario '{scenario_id}' holds in every future with the purchases "
                              "up to decide shared (each future alone may still have one)")
        raise SolverError(f"the solver ended with {result.status.value} on the futures of '{scenario_id}'")
    return FuturesSolution(result, tuple(extract(m) for m in models))


def shared_part(decisions: Decisions, shared: int) -> Decisions:
    """The shared periods of a future's decisions (what the plan across futures buys for sure)."""
    periods = decisions.periods[:shared]
    return Decisions(periods[-1].deployments, periods[-1].scale_out, periods)


def recourse(
    catalog: Catalog, scenario_id: str, fixed: Decisions, *, solver: str = "highs",
    time_limit: float | None = None,
) -> Decisions | None:
    """One future's best plan with the purchases of `fixed`'s periods (the shared ones) and the scale-out
    switch of each site with compute by then fixed; None when no plan of the future keeps them."""
    check_solver_available(solver)
    model = build_model(catalog, scenario_id, prune=False, start=False)
    prob = model.prob
    for p, bought in enumerate(fixed.periods):
        units = {(d.site, d.form, d.cooling, d.scale_up_switch): d.units for d in bought.deployments}
        for s, sm in enumerate(model.periods[p].sites):
            for i, (v, o) in enumerate(zip(sm.n, sm.options, strict=True)):
                prob += lin([(v, 1.0)]) == units.pop((sm.site, *o.key), 0), name("fixed", p, s, i)
        if units:
            return None  # a unit the future cannot take at all
    switches = dict(fixed.periods[-1].scale_out)
    for s, sm in enumerate(model.sites):
        if sm.site in switches:
            x = model.window[s].get(switches[sm.site])
            if x is None:
                return None
            prob += lin([(x, 1.0)]) == 1, name("fixed_out", s)
    prob.setObjective(model.tco * MONEY_SCALE)
    prob.sense = pulp.LpMinimize
    result = solve(prob, solver, time_limit)
    if result.status is SolveStatus.INFEASIBLE:
        return None
    if result.status is not SolveStatus.OPTIMAL:
        raise SolverError(f"the solver ended with {result.status.value} on a future's recourse")
    return extract(model)
