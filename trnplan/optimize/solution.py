"""What the optimizer returns: decisions and how the solver ended, knowing nothing of plan files.

Status and termination are kept apart (as linopy does): `SolveStatus` says what the result is worth
(proven optimal, feasible but unproven, infeasible, ...), `Termination` says why the solver stopped
(HiGHS's own reason: a time limit, an iteration limit and an interrupt are not all "no solution").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from trnplan.costs.decisions import Decisions as Decisions  # re-exported


class SolveStatus(enum.Enum):
    OPTIMAL = "optimal"  # proven optimal (gap 0)
    FEASIBLE = "feasible"  # stopped at a limit, or at the asked gap, with an incumbent; see the gap
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NO_SOLUTION = "no_solution"  # stopped at a limit without any feasible solution
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)


class Termination(enum.Enum):
    """Why the solver stopped, in its own terms."""

    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time limit"
    ITERATION_LIMIT = "iteration limit"
    SOLUTION_LIMIT = "solution limit"
    INTERRUPT = "interrupt"
    OTHER = "other"

    @property
    def is_limit(self) -> bool:
        return self in (Termination.TIME_LIMIT, Termination.ITERATION_LIMIT, Termination.SOLUTION_LIMIT)


@dataclass(frozen=True)
class SolveResult:
    """One solver run: what the result is worth, why the solver stopped, and the gap it proved; `bound`
    is the proven bound on the objective (the problem's own units and sense; None when unknown), `target`
    the relative gap that was asked for (0: a proof of optimality). A run that stopped at its target
    (termination OPTIMAL, gap above 0) is FEASIBLE: proven within `mip_gap`, not proven optimal."""

    status: SolveStatus
    solver: str
    version: str
    mip_gap: float | None
    objective: float | None
    termination: Termination = Termination.OTHER
    bound: float | None = None
    target: float = 0.0


@dataclass(frozen=True)
class AlternativeSolution:
    """The best solution without one choice of the optimum (`without`: 'form trn3-nl32x2'); decisions is
    None when nothing meets the scenario without it. `objective` is the scenario's objective value."""

    without: str
    result: SolveResult
    decisions: Decisions | None = None
    objective: float | None = None


@dataclass(frozen=True)
class Solution:
    """A solved scenario: the optimum's decisions, the run that proved (or did not prove) it, and the
    ranked alternatives."""

    scenario_id: str
    decisions: Decisions
    result: SolveResult
    dinkelbach_iterations: int | None = None
    alternatives: tuple[AlternativeSolution, ...] = field(default_factory=tuple)
    gap_target: float = 0.0  # the relative gap the plan was asked to be proven within (0: optimal)
