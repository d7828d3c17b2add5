"""Run a solver and normalise its outcome into one `SolveStatus`, in one place.

HiGHS runs through `trnplan.optimize.highs` and its own model status and MIP gap are read, so "optimal"
here always means proven optimal. Ctrl-C stops a HiGHS solve at once and surfaces as KeyboardInterrupt,
which the CLI turns into exit 130; nothing is written, because plans are written only after every solve
has returned. CBC runs through PuLP's own interface.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any

import pulp

from trnplan.errors import InputError, SolverError
from trnplan.optimize import highs
from trnplan.optimize.highs import HighsModel, Total, confirm_infeasible
from trnplan.optimize.solution import SolveResult, SolveStatus, Termination

__all__ = ["SOLVERS", "SolveResult", "SolveStatus", "Termination", "check_solver_available", "solve"]

SOLVERS = ("highs", "cbc")
MIN_HIGHSPY = "1.15"


@functools.cache
def _highspy_version() -> tuple[int, ...] | None:
    """The installed highspy's (major, minor), or None when its metadata cannot be read."""
    try:
        text = package_version("highspy")
    except PackageNotFoundError:
        return None
    parts = []
    for part in text.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        if not digits:
            return None
        parts.append(int(digits))
    return tuple(parts)


def check_solver_available(name: str) -> None:
    """Raise a SolverError that names the fix when a solver cannot run here."""
    if name == "highs":
        try:
            import highspy  # noqa: F401
        except ImportError as exc:
            # A missing package, or one whose compiled part cannot load (wrong platform, broken install).
            missing = isinstance(exc, ModuleNotFoundError) and exc.name == "highspy"
            what = "is not installed" if missing else f"cannot be imported ({exc})"
            raise SolverError(
                f"the HiGHS solver (Python package 'highspy') {what}; install it with "
                f"`pip install 'highspy>={MIN_HIGHSPY}'`, or solve with `--solver cbc`"
            ) from None
        version = _highspy_version()
        if version is not None and version < tuple(int(p) for p in MIN_HIGHSPY.split(".")):
            raise SolverError(
                f"highspy {'.'.join(map(str, version))} is too old (1.14 has a MIP presolve bug); "
                f"upgrade it with `pip install -U 'highspy>={MIN_HIGHSPY}'`, or solve with `--solver cbc`"
            )
    elif name == "cbc":
        if _cbc_command() is None:
            raise SolverError(
                "the CBC solver is not available: PuLP 4 no longer bundles it; "
                "install `pulp[cbc]` or a `cbc` executable, or use `--solver highs`"
            )
    else:
        raise SolverError(f"unknown solver '{name}'; choose one of {', '.join(SOLVERS)}")


def _cbc_command() -> pulp.LpSolver | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cls_name in ("PULP_CBC_CMD", "COIN_CMD"):
            cls = getattr(pulp, cls_name, None)
            if cls is None:
                continue
            solver = cls(msg=False)
            if solver.available():
                return cls
    return None


Bound = tuple[list[tuple[str, float]], float]
"""A row `sum coef x var <= upper` over variables named as in the problem."""


def solve(
    prob: pulp.LpProblem,
    solver: str = "highs",
    time_limit: float | None = None,
    start: dict[str, float] | None = None,
    bounds: list[Bound] | None = None,
    gap: float = 0.0,
    totals: list[Total] | None = None,
    options: dict[str, Any] | None = None,
) -> SolveResult:
    """Solve to a proven optimum (relative gap 0; `gap` > 0: to a plan proven within that relative gap of
    the optimum) unless `time_limit` stops the search first.

    `start` (variable name -> value, HiGHS only) is a MIP start: HiGHS checks it and searches from it;
    it changes how soon the proof comes, never what is proven. `bounds` (HiGHS only) are extra rows for
    this solve alone, added to HiGHS's copy of the model (the PuLP problem is not changed): the caller
    vouches that they keep every optimum (`trnplan.optimize.accelerate.start`'s reduced-cost rows).
    `totals` (HiGHS only, a proof of gap 0 only: `highs.totals_pay`) are integer columns of the same
    problem that HiGHS may branch on (`build.unit_totals`). `options` (HiGHS only): HiGHS options over
    trnplan's for this solve."""
    check_solver_available(solver)
    if solver == "highs":
        result = _solve_highs(prob, time_limit, start, bounds or [], gap, totals or [], options)
    else:
        result = _solve_cbc(prob, time_limit, gap)
    if result.status is SolveStatus.NO_SOLUTION and time_limit is None:
        # "Stopped at a limit with no solution" when no limit was set is a solver failure, not a time-out.
        result = SolveResult(SolveStatus.ERROR, result.solver, result.version, None, None, result.termination)
    return replace(result, target=gap)


PROVEN_GAP = 1e-9
"""A relative gap at or below this is rounding: the solve proved its plan optimal."""


def proven(status: SolveStatus, gap: float | None, target: float) -> tuple[SolveStatus, float | None]:
    """A solver's "optimal" with a gap left, when a gap was asked (`target` > 0: it stopped at that relative
    gap), is a plan proven within that gap, not proven optimal: FEASIBLE. Asked for gap 0, "optimal" is the
    optimum within the solver's absolute tolerance, whatever relative gap it reports (an objective at 0,
    as Dinkelbach's last step has, makes any relative gap huge). A gap within rounding of 0 is 0."""
    if status is SolveStatus.OPTIMAL:
        if target <= 0 or gap is None or gap <= PROVEN_GAP:
            return status, 0.0
        return SolveStatus.FEASIBLE, gap
    return status, gap


HIGHS_MAX_COEFFICIENT = 1e15
"""HiGHS refuses a constraint with a coefficient above this (its `large_matrix_value`)."""


def _check_loaded(model: HighsModel) -> None:
    """Refuse a model HiGHS did not take whole. HiGHS drops a row holding a coefficient above 1e15: the
    solve would run without that constraint (a budget, a power limit). Such a number comes from specs
    whose values span too many orders of magnitude, so this is bad input (exit 3), said in its terms."""
    prob = model.prob
    if model.loaded:
        return
    worst = max(
        ((abs(c), row.name) for row in prob.constraints() for c in row.values() if c == c),
        default=(0.0, "?"),
    )
    raise InputError(
        f"the specs' numbers are too far apart to solve reliably: constraint '{worst[1]}' needs a "
        f"coefficient of {worst[0]:.3g}, beyond the solver's limit of {HIGHS_MAX_COEFFICIENT:.0e}. "
        "Look for a value in the wrong unit (a price per rack given per chip, a rack_bom item priced in "
        "cents) or scale the scenario down."
    )


def highs_outcome(model_status: Any, has_primal: bool) -> tuple[SolveStatus, Termination]:
    """HiGHS's model status as (what the result is worth, why HiGHS stopped)."""
    import highspy

    S = highspy.HighsModelStatus
    limits = {
        S.kTimeLimit: Termination.TIME_LIMIT,
        S.kIterationLimit: Termination.ITERATION_LIMIT,
        S.kSolutionLimit: Termination.SOLUTION_LIMIT,
        S.kInterrupt: Termination.INTERRUPT,
    }
    if model_status == S.kOptimal:
        return SolveStatus.OPTIMAL, Termination.OPTIMAL
    if model_status == S.kInfeasible:
        return SolveStatus.INFEASIBLE, Termination.INFEASIBLE
    if model_status == S.kUnbounded:
        return SolveStatus.UNBOUNDED, Termination.UNBOUNDED
    if model_status == S.kUnboundedOrInfeasible:
        return SolveStatus.INFEASIBLE, Termination.INFEASIBLE
    termination = limits.get(model_status, Termination.OTHER)
    if has_primal:
        return SolveStatus.FEASIBLE, termination
    if termination is not Termination.OTHER:
        return SolveStatus.NO_SOLUTION, termination
    return SolveStatus.ERROR, termination


HIGHS_OPTIONS: dict[str, Any] = {
    "mip_rel_gap": 0.0,
    "mip_abs_gap": 1e-9,
    # HiGHS 1.16.0's RENS sub-MIP can loop forever, past the time limit, on some fabric models (a shipped
    # scenario with copper rack-to-leaf links); the other heuristics and the proof are unchanged.
    "mip_heuristic_run_rens": False,
}
"""With a fixed thread count and seed (`highs.new_highs`): the same model gives the same plan anywhere."""


def _solve_highs(
    prob: pulp.LpProblem,
    time_limit: float | None,
    start: dict[str, float] | None,
    bounds: list[Bound],
    gap_target: float,
    totals: list[Total],
    options: dict[str, Any] | None = None,
) -> SolveResult:
    pending = start_highs(prob, time_limit, start, gap_target, bounds, totals, options)
    highs.run(pending.model.h)
    return _finish_highs(pending)


@dataclass
class Pending:
    """A HiGHS solve made ready from a problem as it stood (`start_highs`), run by `highs.run` or, with
    others, on a `highs.Background`, then read back onto the problem's variables by `finish`."""

    model: HighsModel
    time_limit: float | None
    start: dict[str, float] | None
    gap: float
    began: float = field(default_factory=time.perf_counter)


def start_highs(
    prob: pulp.LpProblem,
    time_limit: float | None,
    start: dict[str, float] | None = None,
    gap: float = 0.0,
    bounds: list[Bound] | None = None,
    totals: list[Total] | None = None,
    options: dict[str, Any] | None = None,
) -> Pending:
    """HiGHS's copy of `prob` with its bounds as they are now, trnplan's options, the `gap` asked, unit
    totals where they pay, extra rows, a MIP start and `options` over trnplan's, ready to run (the problem
    may change after this: the copy does not)."""
    return armed(highs_copy(prob, gap, bounds, totals, options, time_limit), time_limit, start, gap)


def highs_copy(
    prob: pulp.LpProblem,
    gap: float = 0.0,
    bounds: list[Bound] | None = None,
    totals: list[Total] | None = None,
    options: dict[str, Any] | None = None,
    time_limit: float | None = None,
) -> HighsModel:
    """`start_highs`'s copy of `prob` before its MIP start is given (`armed`). One made ahead (on another
    thread while something else runs) without a time limit is given one by its caller before it runs
    (`highs.keep_within`)."""
    model = HighsModel(prob, seed=highs.HIGHS_SEED, split=highs.split_pays(prob, gap, totals))
    if time_limit is not None:
        model.set_options(time_limit=float(time_limit))
    model.set_options(**HIGHS_OPTIONS)
    if gap > 0:
        model.set_options(mip_rel_gap=float(gap))
    model.set_options(**(options or {}))
    limit_nodes(model)
    _check_loaded(model)
    if highs.totals_pay(totals or [], gap):
        model.add_totals(totals or [])
    model.add_rows(bounds or [])
    return model


_NODES: ContextVar[int | None] = ContextVar("trnplan_search_nodes", default=None)


@contextmanager
def node_limit(nodes: int | None) -> Iterator[None]:
    """Within the block (and the threads run in its context), every HiGHS search made by `highs_copy` (and
    the first plan's MILPs, `relaxed`) stops after `nodes` branch-and-bound nodes at most (HiGHS's
    `mip_max_nodes`; the lean search's own limit stays where it is lower); None: no limit. A node limit
    stops a search at the same place on every machine, as a time limit does not: the alternatives'
    searches (`alternatives.ALTERNATIVE_NODES`)."""
    token = _NODES.set(nodes)
    try:
        yield
    finally:
        _NODES.reset(token)


def limit_nodes(model: HighsModel) -> None:
    """`model`'s node limit: the lower of its own and that of the `node_limit` block it is made in."""
    nodes = _NODES.get()
    if nodes is not None:
        model.set_options(mip_max_nodes=min(nodes, int(model.h.getOptionValue("mip_max_nodes")[1])))


def armed(model: HighsModel, time_limit: float | None, start: dict[str, float] | None, gap: float) -> Pending:
    """`model` (from `highs_copy`, its time limit `time_limit`) with its MIP start, ready to run."""
    model.set_start(start)
    return Pending(model, time_limit, start, gap)


def finish(pending: Pending) -> SolveResult:
    """What a run of `pending` gave, as `solve` says it; its values are on the problem's variables."""
    result = _finish_highs(pending)
    if result.status is SolveStatus.NO_SOLUTION and pending.time_limit is None:
        result = SolveResult(SolveStatus.ERROR, result.solver, result.version, None, None, result.termination)
    return replace(result, target=pending.gap)


def _finish_highs(pending: Pending) -> SolveResult:
    model, time_limit, start, gap_target = pending.model, pending.time_limit, pending.start, pending.gap
    prob = model.prob

    def again(h: Any) -> None:
        if time_limit is not None:
            left = float(time_limit) - (time.perf_counter() - pending.began)
            h.setOptionValue("time_limit", max(0.1, left))
        model.set_start(start)
        highs.run(h)

    confirm_infeasible(model.h, again)
    model.read_back()
    h = model.h
    info = h.getInfo()
    has_primal = info.primal_solution_status == 2
    status, termination = highs_outcome(h.getModelStatus(), has_primal)
    if termination is Termination.INTERRUPT and highs.stopped_past_limit(h):
        termination = Termination.TIME_LIMIT
    gap: float | None = float(info.mip_gap)
    if gap != gap or gap > 1e300:  # type: ignore[operator]  # NaN or inf when no incumbent
        gap = None
    status, gap = proven(status, gap, gap_target)
    objective = pulp.value(prob.objective) if status.has_solution else None
    bound = _dual_bound(prob, float(info.mip_dual_bound), objective, gap)
    return SolveResult(
        status, "HiGHS", highs.version(), gap if status.has_solution else None, objective, termination, bound
    )


def _dual_bound(
    prob: pulp.LpProblem, dual: float, objective: float | None, gap: float | None
) -> float | None:
    """HiGHS's proven bound in the problem's own terms (HiGHS minimises the costs without the constant:
    a maximum's bound is negated back, the constant added); None without a plan or a finite bound. A
    proven optimum's bound is its objective."""
    if objective is None or gap is None:
        return None
    if gap == 0.0:
        return float(objective)
    if abs(dual) >= 1e300:
        return None
    constant = float(prob.objective.constant) if prob.objective is not None else 0.0
    return (-dual if prob.sense == pulp.LpMaximize else dual) + constant


def _solve_cbc(prob: pulp.LpProblem, time_limit: float | None, gap_target: float) -> SolveResult:
    cls = _cbc_command()
    assert cls is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = cls(msg=False, gapRel=gap_target, gapAbs=1e-9, timeLimit=time_limit, threads=1)
        prob.solve(solver)
    status = _cbc_status(pulp.LpStatus.get(prob.status, "Undefined"), getattr(prob, "sol_status", None))
    termination = CBC_TERMINATION.get(status, Termination.OTHER)
    if termination is Termination.OTHER and status is not SolveStatus.ERROR and time_limit is not None:
        termination = Termination.TIME_LIMIT  # CBC says no more than "stopped" with or without a solution
    objective = pulp.value(prob.objective) if status.has_solution else None
    version = getattr(pulp, "__version__", "?")
    gap = None
    if status is SolveStatus.OPTIMAL:
        # CBC says "optimal" once within its gapRel, without the gap it reached: the target bounds it.
        status, gap = proven(status, gap_target, gap_target)
    return SolveResult(status, "CBC", f"bundled with PuLP {version}", gap, objective, termination)


CBC_TERMINATION = {
    SolveStatus.OPTIMAL: Termination.OPTIMAL,
    SolveStatus.INFEASIBLE: Termination.INFEASIBLE,
    SolveStatus.UNBOUNDED: Termination.UNBOUNDED,
}


def _cbc_status(status_name: str, sol: Any) -> SolveStatus:
    """PuLP's status and solution status of a CBC run as one SolveStatus."""
    if sol == pulp.LpSolutionOptimal or (status_name == "Optimal" and sol is None):
        return SolveStatus.OPTIMAL
    if sol == pulp.LpSolutionIntegerFeasible:
        return SolveStatus.FEASIBLE
    return {
        "Infeasible": SolveStatus.INFEASIBLE,
        "Unbounded": SolveStatus.UNBOUNDED,
        "Not Solved": SolveStatus.NO_SOLUTION,
    }.get(status_name, SolveStatus.ERROR)
