"""Turn a scenario into a proven-optimal solution: build -> solve -> extract, plus alternatives and
explanations. What it returns is a `Solution` (decisions and how the solver ended); plans are built from
it by `trnplan.plan.build`.

This package is the only user of PuLP; `trnplan.optimize` is imported lazily by the CLI.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from trnplan.catalog import Catalog
from trnplan.costs import Deployment
from trnplan.errors import InfeasibleError, SolverError, UsageError, did_you_mean
from trnplan.optimize import (
    accelerate,  # the module: its `accelerate` is the one call
    highs,
    progress,
)
from trnplan.optimize.accelerate import relaxed
from trnplan.optimize.alternatives import ALTERNATIVE_GAP, Ahead, begin_ahead, find_alternatives, ranked
from trnplan.optimize.build import build_model, unit_totals
from trnplan.optimize.explain import explain_infeasible
from trnplan.optimize.model import MONEY_SCALE, Model, set_objective
from trnplan.optimize.progress import Deadline, OutOfTime, SearchInterrupted
from trnplan.optimize.solution import (
    AlternativeSolution,
    Decisions,
    Solution,
    SolveResult,
    SolveStatus,
    Termination,
)
from trnplan.optimize.solve import check_solver_available, solve

__all__ = ["optimize", "SolveStatus", "build_model", "solve"]

MAX_DINKELBACH = 40


def extract(model: Model) -> Decisions:
    """Round the integer values and read which options and scale-out switch each site uses; a phased model's
    decisions are its last period's, with every period's in `periods`."""
    if model.multi:
        per = tuple(_extract_sites(pm.sites) for pm in model.periods)
        return Decisions(per[-1].deployments, per[-1].scale_out, per)
    return _extract_sites(model.sites)


def _extract_sites(sites: list[Any]) -> Decisions:
    deployments = []
    scale_out = []
    for sm in sites:
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
    model: Model,
    solver: str,
    time_limit: float | Deadline | None,
    start_ratio: float = 0.0,
    *,
    gap: float = 0.0,
    warm: dict[str, float] | None = None,
) -> tuple[SolveResult, Decisions | None, int]:
    """Solve the scenario's objective; max_perf_per_tco by Dinkelbach iterations of MILPs.

    `time_limit` is a number of seconds or a `Deadline` shared with other solves; each MILP gets what is
    left of it. `gap`: the relative gap to prove (0: optimal); the Dinkelbach steps always prove theirs
    (a ratio within a gap of each step's optimum is not within that gap of the best ratio). `warm`: a
    plan of this model (variable name -> value) to start from when the acceleration gives none (with a
    first plan, `relaxed.first_plan`: when it is the cheaper of the two).
    `start_ratio` (PFLOPs per USD of TCO) must be one that some feasible plan attains (or less):
    Dinkelbach then starts there instead of at 0 and needs fewer MILPs.
    """
    deadline = Deadline.of(time_limit)
    kind = model.scenario.objective
    if kind != "max_perf_per_tco":
        set_objective(model, kind)
        if deadline.expired:
            return out_of_time(solver), None, 0
        fast = accelerate.accelerate(model, solver, deadline.remaining(), gap)
        if fast.proof is not None:
            return fast.proof, extract(model), 1
        if deadline.expired:
            return out_of_time(solver), None, 1
        with highs.threads(highs.search_threads(model, solver)):
            result = _search(model, solver, deadline, gap, warm, fast.start)
        return result, (extract(model) if result.status.has_solution else None), 1
    return _dinkelbach(model, solver, deadline, start_ratio)


def _search(model: Model, solver: str, deadline: Deadline, gap: float, warm: dict[str, float] | None,
            start: accelerate.Start | None) -> SolveResult:
    """`solve_objective`'s search of a single objective, after the acceleration (its `start`, if any): from
    a first plan (`relaxed`) where one is made (with the lean search beside HiGHS's where that pays), else
    HiGHS's (or CBC's) search from the start or `warm`."""
    scale, unit = (1 / MONEY_SCALE, "USD") if model.scenario.objective == "min_tco" else (1.0, "PFLOPs")
    first = None
    if start is None and relaxed.made_for(model, solver):
        first = relaxed.first_plan(model, deadline, gap)
        if progress.interrupted() or deadline.expired:
            return _stopped(model, first, solver)
    with progress.reading(scale, unit), accelerate.tightened(start):
        if first is not None and relaxed.pays(model, solver, gap):
            return relaxed.search(model, deadline, relaxed.cheaper(model, first, warm), gap)
        if first is not None:
            return _from_first_plan(model, solver, deadline, gap, relaxed.cheaper(model, first, warm))
        extra: dict[str, Any] = {"gap": gap} if gap else {}
        totals = unit_totals(model)
        if totals:
            extra["totals"] = totals
        if start is not None or warm:
            extra.update(start=start.values if start else warm, bounds=start.rows if start else None)
        return solve(model.prob, solver, deadline.remaining(), **extra)


def _from_first_plan(model: Model, solver: str, deadline: Deadline, gap: float, plan: relaxed.FirstPlan
                     ) -> SolveResult:
    """HiGHS's search alone from the first plan `plan` (a gap below `relaxed.FIRST_PLAN_MIN_GAP`, such as
    0); one stopped (a limit, Ctrl-C) before HiGHS took that start gives the plan, unproven."""
    totals = plan.totals if plan.totals is not None else unit_totals(model)
    result = solve(model.prob, solver, deadline.remaining(), start=plan, gap=gap, totals=totals or None)
    if not result.status.has_solution and (result.termination.is_limit
                                           or result.termination is Termination.INTERRUPT):
        return replace(_stopped(model, plan, solver), termination=result.termination)
    return result


def _stopped(model: Model, plan: dict[str, float] | None, solver: str) -> SolveResult:
    """Ctrl-C or the deadline ended the first plan's MILPs (`accelerate.relaxed`): that plan, unproven, on
    the model's variables, or none."""
    termination = Termination.INTERRUPT if progress.interrupted() else Termination.TIME_LIMIT
    if plan is None:
        return replace(out_of_time(solver), termination=termination)
    for v in model.prob.variables():
        v.varValue = plan[v.name]
    return SolveResult(SolveStatus.FEASIBLE, "HiGHS", highs.version(), None, value_of(model.prob.objective),
                       termination)


def out_of_time(solver: str) -> SolveResult:
    """What a solve that had no time left gives: no solution, stopped at the time limit."""
    return SolveResult(SolveStatus.NO_SOLUTION, "HiGHS" if solver == "highs" else "CBC", "", None, None,
                       Termination.TIME_LIMIT)


def _dinkelbach(
    model: Model, solver: str, deadline: Deadline, ratio: float
) -> tuple[SolveResult, Decisions | None, int]:
    """Maximise perf - ratio x TCO; when the optimum of that is 0, `ratio` is the best PFLOPs/TCO."""
    best: tuple[float, SolveResult, Decisions] | None = None
    converged = False
    iteration = 0
    stopped_by = Termination.ITERATION_LIMIT  # what ended the steps unconverged: MAX_DINKELBACH, or a step's
    for iteration in range(1, MAX_DINKELBACH + 1):
        set_objective(model, "dinkelbach", ratio)
        if deadline.expired:
            if best is None:
                return out_of_time(solver), None, iteration
            stopped_by = Termination.TIME_LIMIT
            break
        with progress.reading(1.0, "", f"ratio step {iteration}"):
            result = solve(model.prob, solver, deadline.remaining())
        if not result.status.has_solution:
            if best is None:
                return result, None, iteration
            stopped_by = result.termination
            break
        perf, tco = value_of(model.perf), value_of(model.tco)
        decisions = extract(model)
        if tco <= 0:
            raise SolverError("internal: a plan with zero TCO")
        if best is None or perf / tco > best[0] * (1 + 1e-12):
            best = (perf / tco, result, decisions)
        if result.status is not SolveStatus.OPTIMAL or progress.interrupted():
            stopped_by = Termination.INTERRUPT if progress.interrupted() else result.termination
            break
        if perf - ratio * tco <= 1e-9 * max(1.0, perf):
            converged = True  # proven: no plan beats `ratio`, which the best plan attains
            break
        ratio = perf / tco
    assert best is not None
    _ratio, result_best, decisions_best = best
    if not converged:
        # Stopped early (a limit, or too many iterations): the ratio is not proven optimal, and the step
        # that stopped says why (the best plan may be an earlier step's, proven for its own ratio).
        result_best = SolveResult(
            SolveStatus.FEASIBLE,
            result_best.solver,
            result_best.version,
            None,
            result_best.objective,
            stopped_by,
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
    time_limit: float | Deadline | None = None,
    alternatives: int = 3,
    gap: float | None = None,
) -> Solution:
    """Solve a scenario to proven optimality (or within the relative `gap`; None: the scenario's `gap`,
    0 unless it says otherwise): the plan's decisions and the ranked alternatives.

    `time_limit` bounds the whole call: building the model, the start heuristic, the search, its
    Dinkelbach steps, the alternatives and the explanation of an infeasible scenario share one deadline,
    each stage checks it, and the alternatives get what the search leaves. Raises InfeasibleError (with
    what must give) when no plan exists, SolverError when the solver fails or the time runs out with no
    feasible plan; inside a `progress.watch` session that keeps the best plan on Ctrl-C,
    SearchInterrupted with the best solution found so far.
    """
    if scenario_id not in catalog.scenarios:
        raise UsageError(f"unknown scenario '{scenario_id}'{did_you_mean(scenario_id, catalog.scenarios)}")
    check_solver_available(solver)
    deadline = Deadline.of(time_limit)
    target = catalog.scenarios[scenario_id].gap if gap is None else gap
    with progress.limited(deadline):
        try:
            return _optimize(catalog, scenario_id, solver, deadline, alternatives, target)
        except OutOfTime as stop:
            raise SolverError(out_of_time_message(stop.stage, deadline.seconds)) from None


def out_of_time_message(stage: str, seconds: float | None) -> str:
    """What a command says when its time limit passed before any plan was found."""
    limit = f" ({seconds:g} s)" if seconds is not None else ""
    return f"the time limit{limit} was used up during {stage}, before any plan was found; raise --time-limit"


def _optimize(
    catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline, alternatives: int, gap: float
) -> Solution:
    model = build_model(catalog, scenario_id)
    ahead = begin_ahead(model, alternatives, solver, deadline, max(ALTERNATIVE_GAP, gap))
    try:
        return _plan_then_alternatives(
            catalog, scenario_id, solver, deadline, alternatives, gap, model, ahead
        )
    finally:
        if ahead is not None:
            ahead.close()


def _plan_then_alternatives(
    catalog: Catalog,
    scenario_id: str,
    solver: str,
    deadline: Deadline,
    alternatives: int,
    gap: float,
    model: Model,
    ahead: Ahead | None,
) -> Solution:
    with progress.stage(f"solving {scenario_id}"):
        result, decisions, iterations = solve_objective(model, solver, deadline, gap=gap)
    if progress.interrupted():
        _interrupted(scenario_id, result, decisions, iterations if model.scenario.objective ==
                     "max_perf_per_tco" else None)
    if result.status is SolveStatus.INFEASIBLE or (decisions is not None and not decisions.deployments):
        with progress.stage(f"explaining why {scenario_id} is infeasible"):
            explanation = explain_infeasible(catalog, scenario_id, solver, deadline)
        if progress.interrupted():
            raise SearchInterrupted(None)  # a Ctrl-C cut the explanation short: say nothing half-true
        raise InfeasibleError(scenario_id, explanation)
    if decisions is None:
        raise SolverError(no_solution_message(result, scenario_id, deadline.seconds))
    solution = Solution(
        scenario_id=scenario_id,
        decisions=decisions,
        result=result,
        dinkelbach_iterations=iterations if model.scenario.objective == "max_perf_per_tco" else None,
        gap_target=gap,
    )
    return _with_alternatives(catalog, solution, alternatives, solver, deadline, model, ahead)


def _interrupted(
    scenario_id: str, result: SolveResult, decisions: Decisions | None, iterations: int | None
) -> None:
    """Ctrl-C stopped the search: raise SearchInterrupted with its best plan (unproven), or none."""
    if decisions is None or not decisions.deployments or not result.status.has_solution:
        raise SearchInterrupted(None)
    stopped = SolveResult(SolveStatus.FEASIBLE, result.solver, result.version, result.mip_gap,
                          result.objective, Termination.INTERRUPT)
    raise SearchInterrupted(Solution(scenario_id, decisions, stopped, iterations))


def _with_alternatives(
    catalog: Catalog,
    solution: Solution,
    k: int,
    solver: str,
    deadline: Deadline,
    model: Model,
    ahead: Ahead | None = None,
) -> Solution:
    """The solution with its alternatives (on the plan's model), found in the time the deadline leaves,
    each within ALTERNATIVE_GAP (or the plan's own gap, when wider); a Ctrl-C meanwhile (in a session
    that keeps the best plan) ends in SearchInterrupted with the alternatives found so far."""
    scenario_id, best = solution.scenario_id, solution.decisions
    found: list[AlternativeSolution] = []
    gap = max(ALTERNATIVE_GAP, solution.gap_target)
    try:
        found = find_alternatives(catalog, scenario_id, best, k, solver, deadline, solve_objective, found,
                                  gap, model, at_once=True, ahead=ahead)
    except OutOfTime:  # the deadline passed mid-way: the alternatives found so far
        found = ranked(catalog, scenario_id, best, found, k)
    except KeyboardInterrupt:
        session = progress.current()
        if session is None or not session.keep_best_on_interrupt:
            raise
        session.interrupted = True
        found = ranked(catalog, scenario_id, best, found, k)
    done = replace(solution, alternatives=tuple(found))
    if progress.interrupted():
        raise SearchInterrupted(done)
    return done
