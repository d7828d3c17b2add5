"""The acceleration, apart from the model: what makes a proof come sooner, never what is proven.

- `cuts`: per-site capacity cuts, valid rows added when the model is built (a tighter LP);
- `start` (on `blocks` and `columns`): a MIP start from column generation over the site blocks, and the
  reduced-cost rows and fixings its Lagrangian bound proves keep every optimum;
- `frontier`: an exact program over the sites' frontiers for large single-demand portfolios.
- `relaxed`: a first plan for a large phased model (the counts relaxed, then the fabric fixed), handed to
  the search as its MIP start where `start` gives none (within a gap, to a lean search beside HiGHS's).

The core calls `accelerate` once before its search (and `add_capacity_cuts` when it builds a model).
How much each saves is measured in bench/README.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pulp

from trnplan.optimize import progress
from trnplan.optimize.accelerate import frontier
from trnplan.optimize.accelerate.cuts import add_capacity_cuts
from trnplan.optimize.accelerate.start import Start, mip_start, proves, relative_gap, tightened
from trnplan.optimize.highs import version as highs_version
from trnplan.optimize.model import Model
from trnplan.optimize.progress import OutOfTime
from trnplan.optimize.solution import SolveResult, SolveStatus, Termination

__all__ = ["Acceleration", "Start", "accelerate", "add_capacity_cuts", "tightened"]


@dataclass(frozen=True)
class Acceleration:
    """What the acceleration gives a search: its MIP start (None: none), a proof that makes the search
    unneeded (the model's variables then hold its plan), and the time left for the search."""

    start: Start | None
    proof: SolveResult | None
    time_limit: float | None


def accelerate(model: Model, solver: str, time_limit: float | None, gap: float = 0.0) -> Acceleration:
    """The MIP start (HiGHS, models that ask for one: `Model.use_start`), then the frontier program where
    it applies; each takes its time out of `time_limit`. With a `gap` asked for (min_tco), a start whose
    own bound already proves it within that gap is the answer: no search follows."""
    start, time_limit = _mip_start(model, solver, time_limit, gap)
    within = _within_gap(model, start, gap)
    if within is not None:
        return Acceleration(start, within, time_limit)
    proof, time_limit = _frontier_proof(model, start, time_limit)
    return Acceleration(start, proof, time_limit)


def _within_gap(model: Model, start: Start | None, gap: float) -> SolveResult | None:
    """The start as the result when its Lagrangian bound (complete: `Start.prices`) proves it within the
    relative `gap` of the optimum (HiGHS's measure: (plan - bound) / |plan|); the model's variables then
    hold it. min_tco only (the start's figures are HiGHS's minimised costs, the constant left out)."""
    if start is None or start.prices is None or not proves(model, start.objective, start.bound, gap):
        return None
    for v in model.prob.variables():
        v.varValue = start.values[v.name]
    objective = pulp.value(model.prob.objective)
    bound = start.bound + float(model.prob.objective.constant)
    reached = relative_gap(model, start.objective, start.bound)
    return SolveResult(
        SolveStatus.FEASIBLE, "HiGHS", highs_version(), reached, objective, Termination.OPTIMAL, bound, gap
    )


def _left(time_limit: float | None, began: float) -> float | None:
    return None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - began))


def _mip_start(model: Model, solver: str, time_limit: float | None, gap: float
               ) -> tuple[Start | None, float | None]:
    if not model.use_start or solver != "highs":
        return None, time_limit
    began = time.perf_counter()
    try:
        start = mip_start(model, gap)
    except OutOfTime:
        return None, 0.0  # the deadline passed: no start, and no time for a search
    return start, _left(time_limit, began)


def _frontier_proof(
    model: Model, start: Start | None, time_limit: float | None
) -> tuple[SolveResult | None, float | None]:
    """The program's proven optimum with the model's variables set to its plan, or None and the time
    limit left for HiGHS's search."""
    if frontier.applicable(model, start) is None:
        return None, time_limit
    began = time.perf_counter()
    proof = frontier.prove(model, start, time_limit)
    time_limit = _left(time_limit, began)
    if proof is None and not (progress.interrupted() and start is not None):
        return None, time_limit
    # proven, or Ctrl-C in a session that keeps the best plan: the start, unproven
    values = proof.values if proof is not None else start.values if start is not None else {}
    for v in model.prob.variables():
        v.varValue = values[v.name]
    objective, version = pulp.value(model.prob.objective), highs_version()
    if proof is not None:
        return SolveResult(SolveStatus.OPTIMAL, "HiGHS", version, 0.0, objective, Termination.OPTIMAL), None
    assert start is not None
    gap = (start.objective - start.bound) / max(abs(start.objective), 1e-12)
    return SolveResult(SolveStatus.FEASIBLE, "HiGHS", version, gap, objective, Termination.INTERRUPT), None
