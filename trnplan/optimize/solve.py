"""Run a solver and normalise its outcome into one `SolveStatus`, in one place.

PuLP 3.x reports a time-limited HiGHS run with an incumbent as "Optimal"; HiGHS's own model status
and MIP gap are read instead, so "optimal" here always means proven optimal.

Ctrl-C stops a HiGHS solve at once (see `_run_highs`) and surfaces as KeyboardInterrupt, which the CLI
turns into exit 130; nothing is written, because plans are written only after every solve has returned.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import pulp

from trnplan.errors import InputError, SolverError
from trnplan.optimize.solution import SolveResult, SolveStatus, Termination

__all__ = ["SOLVERS", "SolveResult", "SolveStatus", "Termination", "check_solver_available", "solve"]

SOLVERS = ("highs", "cbc")
MIN_HIGHSPY = "1.15"


_banner_silenced = False

HIGHS_SEED = 0
"""HiGHS's random seed in `solve` (the MIP start's own solves keep 0). Always 0 in trnplan; bench/ sets
others in its own processes to measure how much a proof's time depends on the search alone (the same
model and start, the same optimum, another path through the tree)."""


def silence_highs_banner() -> None:
    """highspy prints a banner to fd 1 on the first Highs() of a process; swallow it once."""
    global _banner_silenced
    if _banner_silenced:
        return
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        highspy.Highs()  # type: ignore[no-untyped-call]
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    _banner_silenced = True


def highs_version() -> str:
    try:
        import highspy

        h = highspy.Highs()  # type: ignore[no-untyped-call]
        return f"{h.version()}" if hasattr(h, "version") else "unknown"
    except Exception:  # pragma: no cover - version lookup must never fail a solve
        return "unknown"


@functools.cache
def _highspy_version() -> tuple[int, ...] | None:
    """The installed highspy's (major, minor), or None when its metadata cannot be read."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        text = version("highspy")
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
) -> SolveResult:
    """Solve to a proven optimum (relative gap 0) unless `time_limit` stops the search first.

    `start` (variable name -> value, HiGHS only) is a MIP start: HiGHS checks it and searches from it;
    it changes how soon the proof comes, never what is proven. `bounds` (HiGHS only) are extra rows for
    this solve alone, added to HiGHS's copy of the model (the PuLP problem is not changed): the caller
    vouches that they keep every optimum (`trnplan.optimize.start`'s reduced-cost rows)."""
    check_solver_available(solver)
    if solver == "highs":
        result = _solve_highs(prob, time_limit, start, bounds or [])
    else:
        result = _solve_cbc(prob, time_limit)
    if result.status is SolveStatus.NO_SOLUTION and time_limit is None:
        # "Stopped at a limit with no solution" when no limit was set is a solver failure, not a time-out.
        result = SolveResult(SolveStatus.ERROR, result.solver, result.version, None, None, result.termination)
    return result


HIGHS_MAX_COEFFICIENT = 1e15
"""HiGHS refuses a constraint with a coefficient above this (its `large_matrix_value`)."""


def _check_loaded(h: Any, prob: pulp.LpProblem) -> None:
    """Refuse a model HiGHS did not take whole. HiGHS drops a row holding a coefficient above 1e15 and
    PuLP does not notice: the solve would run without that constraint (a budget, a power limit), then PuLP
    fails reading the solution back. Such a number comes from specs whose values span too many orders of
    magnitude, so this is bad input (exit 3), said in its terms."""
    if h.getNumRow() == len(prob.constraints) and h.getNumCol() == len(prob.variables()):
        return
    worst = max(
        ((abs(c), name) for name, row in prob.constraints.items() for c in row.values() if c == c),
        default=(0.0, "?"),
    )
    raise InputError(
        f"the specs' numbers are too far apart to solve reliably: constraint '{worst[1]}' needs a "
        f"coefficient of {worst[0]:.3g}, beyond the solver's limit of {HIGHS_MAX_COEFFICIENT:.0e}. "
        "Look for a value in the wrong unit (a price per rack given per chip, a rack_bom item priced in "
        "cents) or scale the scenario down."
    )


def confirm_infeasible(h: Any, rerun: Callable[[Any], None] | None = None) -> bool:
    """Re-check a HiGHS "infeasible" once with presolve off; True if a second run was made.

    HiGHS 1.16.0's presolve has called a feasible MILP infeasible: a site's block with a reduced-cost row
    and a demand row (`tests/fixtures/highs/presolve_infeasible.mps`; HiGHS accepts a plan of it as
    feasible, and solves it with presolve off). Everything here that acts on "infeasible" (a fabric mode
    fixed off, a capacity cut of 0, a scenario reported as having no plan) asks twice: the second run's
    outcome is the answer. `rerun` runs the model again (default `h.run()`); it costs a solve only where
    HiGHS says infeasible."""
    import highspy

    if h.getModelStatus() != highspy.HighsModelStatus.kInfeasible:
        return False
    h.setOptionValue("presolve", "off")
    try:
        (rerun or _plain_run)(h)
    finally:
        h.setOptionValue("presolve", "choose")  # trnplan never sets another
    return True


def _plain_run(h: Any) -> None:
    h.run()


def _run_highs(h: Any) -> None:
    """Run HiGHS so that Ctrl-C stops it at once; replaces PuLP's `h.run()`.

    `run()` keeps the main thread in C until the solve ends, and Python acts on SIGINT only then (Ctrl-C
    on a 40-site portfolio took 40 s to take effect). Here highspy runs the solve in its worker thread
    while the main thread waits in short steps, where SIGINT lands at once; HiGHS is then asked to stop
    through its interrupt callbacks (checked every few milliseconds), waited for, and the
    KeyboardInterrupt re-raised. The solve itself is unchanged: same options, same thread, same result.

    Inside a `progress.watch` session, HiGHS's MIP callbacks record the incumbent, bound and gap, and the
    waiting main thread reports them; a session that keeps the best plan on Ctrl-C gets the stopped solve
    back as it is (HiGHS says "interrupted", with its incumbent if it has one) instead of the exception.
    """
    if not all(hasattr(h, name) for name in ("startSolve", "wait", "cancelSolve", "HandleUserInterrupt")):
        h.run()  # an older highspy: Ctrl-C waits for the solve
        return
    from trnplan.optimize import progress

    session = progress.current()
    latest = _watch_mip(h) if session is not None and session.progress is not None else None
    h.HandleUserInterrupt = True
    h.startSolve()
    try:
        while not h.wait(PROGRESS_STEP_S)[0]:
            if latest is not None and session is not None:
                session.report(*latest)
    except KeyboardInterrupt:
        h.cancelSolve()
        h.wait()
        if session is None or not session.keep_best_on_interrupt:
            raise
        session.interrupted = True


PROGRESS_STEP_S = 0.1
"""How often the waiting main thread looks at the solve (and reports progress)."""


def _watch_mip(h: Any) -> list[float | None] | None:
    """Subscribe to HiGHS's MIP callbacks; the list returned holds [incumbent, bound, gap] as they change
    (written by the solver's thread, read by the main thread: three floats, no lock needed)."""
    latest: list[float | None] = [None, None, None]

    def record(event: Any) -> None:
        out = event.data_out
        primal, dual, gap = out.mip_primal_bound, out.mip_dual_bound, out.mip_gap
        latest[0] = primal if abs(primal) < 1e300 else None
        latest[1] = dual if abs(dual) < 1e300 else None
        latest[2] = gap if latest[0] is not None and 0 <= gap < 1e300 else None

    try:
        h.cbMipInterrupt.subscribe(record)
        h.cbMipImprovingSolution.subscribe(record)
    except (AttributeError, TypeError):  # an older highspy without the callback API: no progress
        return None
    return latest


def _highs_outcome(model_status: Any, has_primal: bool) -> tuple[SolveStatus, Termination]:
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


def _add_bounds(h: Any, prob: pulp.LpProblem, bounds: list[Bound]) -> None:
    """Append the rows to HiGHS's model (after PuLP's own, so PuLP reads its rows back unchanged)."""
    if not bounds:
        return
    import highspy
    import numpy as np

    index = {v.name: v.index for v in prob.variables()}
    for terms, upper in bounds:
        idx = np.array([index[name] for name, _ in terms], dtype=np.int32)
        h.addRow(-highspy.kHighsInf, upper, len(terms), idx, np.array([c for _, c in terms], dtype=float))


def _set_start(h: Any, prob: pulp.LpProblem, start: dict[str, float] | None) -> None:
    """Hand HiGHS a MIP start (columns are numbered as PuLP built them: `var.index`)."""
    if not start:
        return
    import numpy as np

    pairs = [(v.index, start[v.name]) for v in prob.variables() if v.name in start]
    index = np.array([i for i, _ in pairs], dtype=np.int32)
    h.setSolution(len(pairs), index, np.array([x for _, x in pairs], dtype=float))


def _solve_highs(
    prob: pulp.LpProblem, time_limit: float | None, start: dict[str, float] | None, bounds: list[Bound]
) -> SolveResult:
    silence_highs_banner()
    # One thread, a fixed seed and gap 0: the same model gives the same plan on any machine.
    options: dict[str, Any] = {
        "msg": False, "gapRel": 0.0, "gapAbs": 1e-9, "threads": 1, "random_seed": HIGHS_SEED
    }
    # HiGHS 1.16.0's RENS sub-MIP can loop forever, past the time limit, on some fabric models (a shipped
    # scenario with copper rack-to-leaf links hit it); the other heuristics and the proof are unchanged.
    options["mip_heuristic_run_rens"] = False
    if time_limit is not None:
        options["timeLimit"] = float(time_limit)
    highs = pulp.HiGHS(**options)

    def call(lp: pulp.LpProblem) -> None:
        h = lp.solverModel
        _check_loaded(h, lp)
        _add_bounds(h, lp, bounds)
        _set_start(h, lp, start)
        began = time.perf_counter()
        _run_highs(h)

        def again(h: Any) -> None:
            if time_limit is not None:
                h.setOptionValue("time_limit", max(0.1, float(time_limit) - (time.perf_counter() - began)))
            _set_start(h, lp, start)
            _run_highs(h)

        confirm_infeasible(h, again)

    highs.callSolver = call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(highs)
    h = prob.solverModel
    info = h.getInfo()
    has_primal = getattr(info, "primal_solution_status", 0) == 2
    status, termination = _highs_outcome(h.getModelStatus(), has_primal)
    gap: float | None = float(getattr(info, "mip_gap", 0.0))
    if gap != gap or gap > 1e300:  # type: ignore[operator]  # NaN or inf when no incumbent
        gap = None
    if status is SolveStatus.OPTIMAL:
        gap = 0.0 if gap is None or gap <= 1e-9 else gap  # proven: any gap left is rounding
    objective = pulp.value(prob.objective) if status.has_solution else None
    return SolveResult(
        status, "HiGHS", highs_version(), gap if status.has_solution else None, objective, termination
    )


def _solve_cbc(prob: pulp.LpProblem, time_limit: float | None) -> SolveResult:
    cls = _cbc_command()
    assert cls is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = cls(msg=False, gapRel=0.0, gapAbs=1e-9, timeLimit=time_limit, threads=1)
        prob.solve(solver)
    status = _cbc_status(pulp.LpStatus.get(prob.status, "Undefined"), getattr(prob, "sol_status", None))
    termination = CBC_TERMINATION.get(status, Termination.OTHER)
    if termination is Termination.OTHER and status is not SolveStatus.ERROR and time_limit is not None:
        termination = Termination.TIME_LIMIT  # CBC says no more than "stopped" with or without a solution
    objective = pulp.value(prob.objective) if status.has_solution else None
    version = getattr(pulp, "__version__", "?")
    return SolveResult(
        status,
        "CBC",
        f"bundled with PuLP {version}",
        0.0 if status is SolveStatus.OPTIMAL else None,
        objective,
        termination,
    )


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
