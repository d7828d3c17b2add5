"""One plan across futures (design.md, "Uncertainty"): N futures drawn from the specs' `ranges` (as
`sweep --sample` draws them), one extensive-form solve (`trnplan.optimize.futures`) whose purchases up to
`decide` are shared, and what the uncertainty is worth:

- WS, wait-and-see: each future's own optimum, as if it were known (a per-future solve);
- EEV: the plan made for the average future (every drawn input at its mean over the futures), its shared
  purchases kept and each future's best recourse to them (a per-future solve);
- VSS = EEV - RP and EVPI = RP - WS, where RP is the plan across futures' expected TCO (with `--risk
  cvar:A`, each is the CVaR of the futures' TCOs instead of their mean). Both are >= 0 when every solve
  is proven optimal: RP minimises over every choice of shared purchases, EEV's are one of them, and no
  future does better than its own optimum.

The per-future solves go through `mapper` (the caller's: Dask, as sweeps, or a local map).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trnplan.catalog import Catalog
from trnplan.catalog.periods import shared_view
from trnplan.costs import evaluate_decisions
from trnplan.costs.decisions import Decisions
from trnplan.numbers import risk_of

Mapper = Callable[[Callable[[Any], Any], list[Any]], list[Any]]


def local_map(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    """The per-future solves one after another, in this process."""
    return [fn(item) for item in items]


@dataclass(frozen=True)
class FutureTask:
    """One per-future solve: its catalog, and the shared purchases to keep (None: its own optimum)."""

    catalog: Catalog
    scenario_id: str
    fixed: Decisions | None = None
    solver: str = "highs"


def solve_future(task: FutureTask) -> float | None:
    """A future's best TCO (with `fixed`'s purchases kept when given); None when it cannot keep them."""
    from trnplan.optimize import optimize
    from trnplan.optimize.futures import recourse

    if task.fixed is None:
        decisions: Decisions | None = optimize(task.catalog, task.scenario_id, solver=task.solver,
                                               alternatives=0).decisions
    else:
        decisions = recourse(task.catalog, task.scenario_id, task.fixed, solver=task.solver)
    if decisions is None:
        return None
    return evaluate_decisions(task.catalog, task.scenario_id, decisions).totals.tco_usd


@dataclass(frozen=True)
class FuturesOutcome:
    """The plan across futures: each future's decisions and TCO, the shared periods, the risk measure's
    value (RP), and the per-future solves' figures."""

    shared: int
    risk: float | None
    decisions: tuple[Decisions, ...]
    tco_usd: tuple[float, ...]
    objective_usd: float
    wait_and_see_usd: tuple[float, ...]
    average_plan_usd: tuple[float | None, ...]  # EEV per future: None where the average plan cannot go on
    status: str
    mip_gap: float | None
    solver: str
    solver_version: str

    @property
    def vss_usd(self) -> float | None:
        if any(v is None for v in self.average_plan_usd):
            return None
        return risk_of([v for v in self.average_plan_usd if v is not None], self.risk) - self.objective_usd

    @property
    def evpi_usd(self) -> float:
        return self.objective_usd - risk_of(self.wait_and_see_usd, self.risk)


def plan_across_futures(
    catalogs: Sequence[Catalog], average: Catalog, scenario_id: str, shared: int, *,
    risk: float | None = None, solver: str = "highs", time_limit: float | None = None,
    mapper: Mapper = local_map,
) -> FuturesOutcome:
    """Solve the futures together (shared purchases up to `shared` periods), then the per-future solves
    that price the uncertainty: each future's own optimum, and each future's recourse to the shared
    purchases of the plan made for `average` (the catalog at the futures' mean inputs)."""
    from trnplan.optimize import optimize
    from trnplan.optimize.futures import optimize_futures, shared_part

    solved = optimize_futures(catalogs, scenario_id, shared, risk=risk, solver=solver, time_limit=time_limit)
    tcos = tuple(evaluate_decisions(c, scenario_id, d).totals.tco_usd
                 for c, d in zip(catalogs, solved.decisions, strict=True))
    mean_plan = optimize(average, scenario_id, solver=solver, alternatives=0).decisions
    fixed = shared_part(mean_plan, shared)
    tasks = [FutureTask(c, scenario_id, None, solver) for c in catalogs]
    tasks += [FutureTask(c, scenario_id, fixed, solver) for c in catalogs]
    found = mapper(solve_future, tasks)
    wait_and_see = tuple(float(v) for v in found[: len(catalogs)])
    result = solved.result
    return FuturesOutcome(
        shared=shared, risk=risk, decisions=solved.decisions, tco_usd=tcos,
        objective_usd=risk_of(tcos, risk), wait_and_see_usd=wait_and_see,
        average_plan_usd=tuple(found[len(catalogs):]), status=result.status.value, mip_gap=result.mip_gap,
        solver=result.solver, solver_version=result.version,
    )


def futures_plan(
    catalog: Catalog, scenario_id: str, outcome: FuturesOutcome, catalogs: Sequence[Catalog],
    sets: Sequence[dict[str, Any]], *, seed: int,
) -> Any:
    """The plan file of a plan across futures: top-level, the shared purchases (the scenario cut to its
    shared periods, priced with the specs as they are) and the expected figures (`totals`, each the mean
    over the futures of that future's own); `futures`, each run's inputs, TCO and periods over the whole
    window, and what the uncertainty is worth. Re-checked against the specs and each future's catalog."""
    from trnplan.catalog import inputs_digest
    from trnplan.errors import SolverError
    from trnplan.optimize.futures import shared_part
    from trnplan.optimize.solution import Solution, SolveResult, SolveStatus
    from trnplan.plan.body import expected_totals, period_parts, plan_body
    from trnplan.plan.build import build_plan
    from trnplan.plan.check import check_plan
    from trnplan.plan.file import plan_from_dict
    from trnplan.plan.model import FutureRun, FuturesPart

    scenario = catalog.scenarios[scenario_id]
    assert scenario.periods is not None
    view = shared_view(catalog, scenario_id, outcome.shared)
    result = SolveResult(SolveStatus(outcome.status), outcome.solver, outcome.solver_version,
                         outcome.mip_gap, None)
    top = build_plan(view, Solution(scenario_id, shared_part(outcome.decisions[0], outcome.shared), result))
    runs, each = [], []
    for future, decisions, drawn in zip(catalogs, outcome.decisions, sets, strict=True):
        ev = evaluate_decisions(future, scenario_id, decisions)
        totals = plan_body(ev)[0]
        each.append(totals)
        runs.append(FutureRun(set=dict(sorted(drawn.items())), tco_usd=totals.tco_usd,
                              periods=period_parts(ev)))
    expected = expected_totals(each)
    vss = outcome.vss_usd
    part = FuturesPart(
        n=len(catalogs), seed=seed, decide=scenario.periods[outcome.shared - 1],
        risk=f"cvar:{outcome.risk:g}" if outcome.risk is not None else None,
        expected_tco_usd=expected.tco_usd,
        risk_tco_usd=round(outcome.objective_usd, 2) if outcome.risk is not None else None,
        vss_usd=round(vss, 2) if vss is not None else None, evpi_usd=round(outcome.evpi_usd, 2), runs=runs,
    )
    assert top.objective is not None
    objective = top.objective.model_copy(
        update={"value": part.risk_tco_usd if part.risk_tco_usd is not None else expected.tco_usd})
    plan = plan_from_dict(top.model_copy(update={
        "futures": part, "totals": expected, "objective": objective,
        "inputs_digest": inputs_digest(catalog, scenario_id)}).to_dict())
    violations = check_plan(plan, catalog, catalogs)
    if violations:
        raise SolverError("internal: the plan across futures fails its re-check:\n" + "\n".join(violations))
    return plan
