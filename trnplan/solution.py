"""What the optimizer returns: decisions and how the solver ended, knowing nothing of plan files.

Status and termination are kept apart (as linopy does): `SolveStatus` says what the result is worth
(proven optimal, feasible but unproven, infeasible, ...), `Termination` says why the solver stopped
(HiGHS's own reason: a time limit, an iteration limit and an interrupt are not all "no solution").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from trnplan.costs import NO_SWITCH, Deployment


class SolveStatus(enum.Enum):
    OPTIMAL = "optimal"  # proven optimal (gap 0)
    FEASIBLE = "feasible"  # stopped at a limit with an incumbent; see the gap
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
    """One solver run: what the result is worth, why the solver stopped, and the gap it proved."""

    status: SolveStatus
    solver: str
    version: str
    mip_gap: float | None
    objective: float | None
    termination: Termination = Termination.OTHER


@dataclass(frozen=True)
class Decisions:
    """A solution read back from the MILP: units per option and the scale-out switch per used site."""

    deployments: tuple[Deployment, ...]
    scale_out: tuple[tuple[str, str], ...]
    periods: tuple[Decisions, ...] = ()  # a phased plan: what is installed in each period (the last above)

    def describe(self) -> str:
        """'site: form / cooling / scale-up + ... / scale-out' for each site, sorted."""
        by_site: dict[str, list[str]] = {}
        for d in self.deployments:
            by_site.setdefault(d.site, []).append(f"{d.form} / {d.cooling} / {d.scale_up_switch}")
        fabric = dict(self.scale_out)
        return "; ".join(
            f"{site}: {' + '.join(parts)} / {fabric[site]}" for site, parts in sorted(by_site.items())
        )

    def chosen_items(self) -> list[tuple[str, str]]:
        """The distinct choices made: forms, coolings, scale-up and scale-out switches used."""
        items = set()
        for d in self.deployments:
            items.add(("form", d.form))
            items.add(("cooling", d.cooling))
            if d.scale_up_switch != NO_SWITCH:
                items.add(("scale-up switch", d.scale_up_switch))
        items.update(("scale-out switch", switch) for _site, switch in self.scale_out)
        return sorted(items)


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
