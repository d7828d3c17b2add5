"""The one bridge from a PuLP problem to highspy, as linopy's `to_highspy`: build HiGHS's model from the
problem once (columns in `prob.variables()` order, rows in `prob.constraints` order, as PuLP itself
numbers them), set options, a MIP start and extra rows, run, and read the values back onto the PuLP
variables. No PuLP solver class is used or patched.

`run` lets Ctrl-C stop a solve at once: highspy solves in its worker thread while the main thread waits
in short steps (where SIGINT lands), then HiGHS is asked to stop through its interrupt callbacks.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pulp

from trnplan.optimize import progress

HIGHS_SEED = 0
"""HiGHS's random seed for `trnplan.optimize.solve.solve` (the acceleration's own solves keep 0). Always 0
in trnplan; bench/ sets others in its own processes to see how much a proof's time depends on the search."""

PROGRESS_STEP_S = 0.1
"""How often the waiting main thread looks at a solve (and reports progress)."""

_banner_silenced = False


def silence_banner() -> None:
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


def version() -> str:
    """HiGHS's version, as a plan records it."""
    import highspy

    silence_banner()
    return f"{highspy.Highs().version()}"  # type: ignore[no-untyped-call]


SEARCH_THREADS = 2
"""The threads of a large phased model's search (`search_threads`): HiGHS runs its branch and bound on as
many workers, which exchange what they found only at fixed points, so the search is the same whatever
the machine and its load (bench/README.md, issue 35, thirteenth round)."""

PARALLEL_MIN_SITE_PERIODS = 80
"""...for phased models of at least this many site-periods (sites x periods), as measured in
bench/README.md ("Why the optimizer's thresholds are what they are")."""

_THREADS: ContextVar[int] = ContextVar("trnplan_highs_threads", default=1)


@contextmanager
def threads(count: int) -> Iterator[None]:
    """Every HiGHS instance made within the block (`new_highs`; in the threads run in its context too)
    asks for `count` threads; outside, one."""
    token = _THREADS.set(count)
    try:
        yield
    finally:
        _THREADS.reset(token)


def search_threads(model: Any, solver: str) -> int:
    """The threads of the search of `model` (an `optimize.model.Model`): SEARCH_THREADS for a phased model
    of PARALLEL_MIN_SITE_PERIODS site-periods or more solved by HiGHS, else one."""
    big = model.multi and model.site_periods >= PARALLEL_MIN_SITE_PERIODS
    return SEARCH_THREADS if big and solver == "highs" else 1


def new_highs(seed: int = 0) -> Any:
    """A silent HiGHS with a fixed seed, on one thread (or those of the `threads` block it is made in)."""
    import highspy

    silence_banner()
    h = highspy.Highs()  # type: ignore[no-untyped-call]
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", _THREADS.get())
    h.setOptionValue("random_seed", seed)
    keep_within(h, progress.current_deadline())
    return h


def keep_within(h: Any, deadline: progress.Deadline | None) -> None:
    """Give `h` what is left of `deadline` as its time limit. HiGHS's clock starts again at each run, so an
    instance made earlier and run again (a site's pricing MILP, the polish) would otherwise have the
    limit it was made with each time, and a command could run on past its deadline."""
    set_time_left(h, None if deadline is None else deadline.remaining())


def set_time_left(h: Any, seconds: float | None) -> None:
    """HiGHS's time limit for its next run: `seconds` (at least 1 ms: HiGHS refuses 0), or as it is."""
    if seconds is not None:
        h.setOptionValue("time_limit", max(seconds, 1e-3))


WIDE_INTEGER = 100
"""An integer column with at least this many values above a lower bound of 0 is one `HighsModel(split=True)`
gives HiGHS as two."""

SPLIT_MIN_WORK = 5e7
"""A MILP is solved with its wide integer columns split (`split_pays`) from this much `domain_work` on.
HiGHS 1.16's root reduced-cost fixing keeps a lurking bound per value of each integer column's domain (at
most 1,024 of them), and adds each one after a walk over those already kept: after every root LP, time
that grows with the square of the domain. At 25 sites x 8 quarters (units up to 3,000 a site-quarter,
switches up to 63,299; a work of 3.4e8) that was over half of the root's time; split, 25 x 8 reached 1e-4
in 30-33 s against 41-62 s. The shipped trn3-life (1.2e7) only changed its search: its alternatives took
5.3 s against 4.7 s. Single-period 50 and 200 sites (8.4e7, 3.2e8): the same times (bench/README.md,
issue 35, fifth round)."""

SPLIT_MIN_GAP = 1e-6
"""...and only when the relative gap asked is at least this, or the unit totals are given with few members
(`SPLIT_TOTALS_MAX_MEMBERS`). A proof of gap 0 is a tree search, where branching on a part (b splits x's
values into residue classes) is weaker than on x: without the totals, HiGHS alone on 10 x 8's model to
gap 0 proved it in 155 s plain and was 0.0024% off after 240 s split (seed 1; seed 0: 0.0015% against
0.0023% after 240 s), while 25 x 8 proved in 156 s either way (bench/README.md, issue 35, sixth round)."""

SPLIT_TOTALS_MAX_MEMBERS = 50
"""A proof of gap 0 given the unit totals (`totals_pay`) is solved split too where the totals have at most
this many members on average (about 1.2 to 1.5 per site: 12.4 at 10 sites, 30.4 at 25, 72.4 at 50). The
tree then branches on the totals, whole, and the root's reduced-cost work on the split counts is small:
10 x 8 to gap 0 in 29.5, 24.7 and 25.8 s against 46.3, 64.5 and 45.0 s (HiGHS seeds 0, 1, 2), 25 x 4
14.3 s against 21.0 s, 25 x 8 45.1 and 56.1 s against 63.4 and 54.4 s; but 50 x 4 131, 104, 100 and 107 s
against 80, 100, a loop and 80 s (seeds 0 to 3: bench/README.md, issue 35, sixteenth round)."""


TOTALS_MAX_GAP = 1e-6
"""A phased model solved to a relative gap below this (a proof of gap 0) is given to HiGHS with each
period's count of each kind of unit summed over its sites as an integer column of its own
(`HighsModel.add_totals`): a branch on "this quarter holds at most 130 of these units, or at least 131,
wherever they stand" decides what a branch on one site's count moves to the next site. Within a gap such
as 1e-4 the root and the heuristics decide, and the extra columns slowed every case measured
(bench/README.md, "Why the optimizer's thresholds are what they are")."""


@dataclass(frozen=True)
class Total:
    """N = the sum of the integer columns `members`, integer itself. In each of `rows` (name, coefficient:
    every member's there) N takes the members' place, and N >= the total at index `follows` of the same
    list (one whose members each only grow into one of these), if any. The same problem: every plan has
    exactly one value of each N, and the rows say the same of it."""

    members: tuple[str, ...]
    rows: tuple[tuple[str, float], ...]
    follows: int | None = None


def totals_pay(totals: list[Total], gap: float) -> bool:
    """Whether to give HiGHS `totals` for a solve within the relative `gap` (TOTALS_MAX_GAP)."""
    return bool(totals) and gap < TOTALS_MAX_GAP


def domain_work(prob: pulp.LpProblem) -> float:
    """The steps HiGHS's root reduced-cost fixing may take per root LP on the wide integer columns:
    sum of min(u, 1024)^2 / 2 over integer x in [0, u], u >= WIDE_INTEGER."""
    return sum(min(float(v.upBound), 1024.0) ** 2 / 2 for v in prob.variables() if _wide(v))


def split_pays(prob: pulp.LpProblem, gap: float, totals: list[Total] | None = None) -> bool:
    """Whether to solve `prob` within the relative `gap`, given `totals` where they pay, with its wide
    integer columns split (SPLIT_MIN_WORK, SPLIT_MIN_GAP, SPLIT_TOTALS_MAX_MEMBERS)."""
    given = totals if totals and totals_pay(totals, gap) else []
    few = bool(given) and sum(len(t.members) for t in given) <= SPLIT_TOTALS_MAX_MEMBERS * len(given)
    return (gap >= SPLIT_MIN_GAP or few) and domain_work(prob) >= SPLIT_MIN_WORK


class HighsModel:
    """A PuLP problem as a HiGHS model: `h` (the highspy instance), `columns` (the PuLP variables, in
    column order) and `col` (variable name -> column). `mip=False` leaves every column continuous.

    `split`: each integer variable x in [0, u] with u >= WIDE_INTEGER is given to HiGHS as x = B a + b,
    a in [0, u // B] and b in [0, B - 1] integers (B = ceil(sqrt(u + 1)); a row B a + b <= u where that
    reaches past u), in x's place in every row and in the cost; x's own column stays, fixed at 0 and in no
    row, so every column keeps its number. The same problem (every integer x has one such a and b, and
    the LP relaxation is the same), with narrow domains for HiGHS. `set_start`, `add_rows` and
    `read_back` speak of x; nothing else may touch such a column by its number. Why: `SPLIT_MIN_WORK`."""

    def __init__(self, prob: pulp.LpProblem, *, mip: bool = True, seed: int = 0, split: bool = False) -> None:
        import highspy
        import numpy as np

        self.prob = prob
        self.h = new_highs(seed)
        self.columns = list(prob.variables())
        self.col = {v.name: i for i, v in enumerate(self.columns)}
        inf = highspy.kHighsInf
        sense = -1.0 if prob.sense == pulp.LpMaximize else 1.0
        objective = prob.objective if prob.objective is not None else pulp.LpAffineExpression()
        n = len(self.columns)
        cost = np.array([sense * objective.get(v, 0.0) for v in self.columns], dtype=float)
        lower = np.array([-inf if v.lowBound is None else v.lowBound for v in self.columns], dtype=float)
        upper = np.array([inf if v.upBound is None else v.upBound for v in self.columns], dtype=float)
        self.h.addCols(n, cost, lower, upper, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        if mip:
            for i, v in enumerate(self.columns):
                if v.cat == pulp.LpInteger:
                    self.h.changeColIntegrality(i, highspy.HighsVarType.kInteger)
        # variable name -> (B, column of a, column of b): the split columns, numbered after the problem's
        self.parts: dict[str, tuple[int, int, int]] = {}
        if mip and split:
            self._split(cost, upper)
        self._problem_rows()
        # what HiGHS took of the problem (it refuses a row holding a coefficient above 1e15)
        self.loaded = self.h.getNumRow() == len(prob.constraints()) and self.h.getNumCol() == n + 2 * len(
            self.parts
        )
        self._cap_parts(upper)
        self.totals: list[tuple[Total, int]] = []  # `add_totals`: each total and its column

    def _problem_rows(self) -> None:
        """The problem's rows, in its order (a split column's terms on its parts)."""
        import highspy
        import numpy as np

        inf = highspy.kHighsInf
        for constraint in self.prob.constraints():
            items = self._terms((var.name, coef) for var, coef in constraint.items() if coef != 0)
            lb, ub = constraint.getLb(), constraint.getUb()
            self.h.addRow(
                -inf if lb is None else lb,
                inf if ub is None else ub,
                len(items),
                np.array([i for i, _ in items], dtype=np.int32),
                np.array([c for _, c in items], dtype=float),
            )

    def _cap_parts(self, upper: Any) -> None:
        """B a + b <= u for each split column whose parts could reach past u (after the problem's rows)."""
        import highspy
        import numpy as np

        for name, (base, a, b) in self.parts.items():
            u = math.floor(upper[self.col[name]] + 1e-9)
            if base * (u // base) + base - 1 > u:
                self.h.addRow(
                    -highspy.kHighsInf, float(u), 2, np.array([a, b], np.int32), np.array([float(base), 1.0])
                )

    def _split(self, cost: Any, upper: Any) -> None:
        """Give each wide integer column to HiGHS as its two parts (see the class)."""
        import highspy
        import numpy as np

        n = len(self.columns)
        for i, v in enumerate(self.columns):
            if _wide(v):
                base = math.ceil(math.sqrt(upper[i] + 1))
                self.parts[v.name] = (base, n + 2 * len(self.parts), n + 2 * len(self.parts) + 1)
        empty = np.zeros(0, np.int32)
        for name, (base, _a, _b) in self.parts.items():
            i = self.col[name]
            caps = np.array([math.floor(upper[i] + 1e-9) // base, base - 1.0])
            prices = np.array([base * cost[i], cost[i]])
            self.h.addCols(2, prices, np.zeros(2), caps, 0, empty, empty, np.zeros(0))
            self.h.changeColsCost(1, np.array([i], np.int32), np.zeros(1))
            self.h.changeColBounds(i, 0.0, 0.0)
        if self.parts:
            added = 2 * len(self.parts)
            self.h.changeColsIntegrality(
                added, np.arange(n, n + added, dtype=np.int32), np.full(added, highspy.HighsVarType.kInteger)
            )

    def _terms(self, terms: Iterable[tuple[str, float]]) -> list[tuple[int, float]]:
        """(column, coefficient) of a row's terms (variable name, coefficient), a split variable's as its
        two parts'."""
        out: list[tuple[int, float]] = []
        for name, coef in terms:
            part = self.parts.get(name)
            if part is None:
                out.append((self.col[name], coef))
            else:
                base, a, b = part
                out += [(a, base * coef), (b, coef)]
        return out

    def set_options(self, **options: Any) -> None:
        for name, value in options.items():
            self.h.setOptionValue(name, value)

    def add_rows(self, rows: list[tuple[list[tuple[str, float]], float]]) -> None:
        """Append rows `sum coef x var <= upper` (after the problem's own, which keep their numbers)."""
        import highspy
        import numpy as np

        for terms, upper in rows:
            items = self._terms(terms)
            idx = np.array([i for i, _ in items], dtype=np.int32)
            coefs = np.array([c for _, c in items], dtype=float)
            self.h.addRow(-highspy.kHighsInf, upper, len(items), idx, coefs)

    def add_totals(self, totals: list[Total]) -> None:
        """Add each total's integer column N and its rows (see `Total`), after the problem's columns and
        rows, which keep their numbers; `read_back` reads the problem's columns alone."""
        import highspy
        import numpy as np

        empty = np.zeros(0, np.int32)
        rows = {constraint.name: i for i, constraint in enumerate(self.prob.constraints())}  # HiGHS's order
        for total in totals:
            upper = float(sum(self.columns[self.col[name]].upBound for name in total.members))
            self.h.addCols(1, np.zeros(1), np.zeros(1), np.array([upper]), 0, empty, empty, np.zeros(0))
            column = self.h.getNumCol() - 1
            self.h.changeColIntegrality(column, highspy.HighsVarType.kInteger)
            parts = self._terms((name, -1.0) for name in total.members)
            self.h.addRow(0.0, 0.0, len(parts) + 1, np.array([column] + [i for i, _ in parts], np.int32),
                          np.array([1.0] + [c for _, c in parts], dtype=float))
            for row_name, coef in total.rows:
                row = rows[row_name]
                for i, _ in parts:
                    self.h.changeCoeff(row, i, 0.0)
                self.h.changeCoeff(row, column, float(coef))
            if total.follows is not None:
                before = self.totals[total.follows][1]
                self.h.addRow(0.0, highspy.kHighsInf, 2, np.array([column, before], np.int32),
                              np.array([1.0, -1.0]))
            self.totals.append((total, column))

    def set_start(self, values: dict[str, float] | None) -> None:
        """Hand HiGHS a MIP start: variable name -> value (variables not named are left to HiGHS)."""
        if not values:
            return
        import numpy as np

        pairs = [(i, values[v.name]) for i, v in enumerate(self.columns) if v.name in values]
        for name, (base, a, b) in self.parts.items():
            if name in values:
                whole = max(0, round(values[name]))
                pairs += [(a, float(whole // base)), (b, float(whole % base))]
        for total, column in self.totals:
            if all(name in values for name in total.members):
                pairs.append((column, float(sum(max(0, round(values[name])) for name in total.members))))
        index = np.array([i for i, _ in pairs], dtype=np.int32)
        self.h.setSolution(len(pairs), index, np.array([x for _, x in pairs], dtype=float))

    def values(self) -> list[float] | None:
        """HiGHS's solution, one value per PuLP variable in column order (a split column's from its parts),
        or None when HiGHS holds none of this model's size."""
        values = list(self.h.getSolution().col_value)
        if len(values) != self.h.getNumCol() or len(values) < len(self.columns):
            return None
        for name, (base, a, b) in self.parts.items():
            values[self.col[name]] = base * values[a] + values[b]
        return values[: len(self.columns)]

    def read_back(self) -> None:
        """Each PuLP variable's value from HiGHS's solution (as PuLP's own HiGHS interface does)."""
        for v, x in zip(self.columns, self.values() or [], strict=False):
            v.varValue = x


def _wide(v: pulp.LpVariable) -> bool:
    """An integer variable in [0, u] with u >= WIDE_INTEGER (`HighsModel(split=True)` splits it)."""
    return (
        v.cat == pulp.LpInteger and v.lowBound == 0 and v.upBound is not None and v.upBound >= WIDE_INTEGER
    )


def run_here(h: Any) -> Any:
    """`h.run()` on the calling thread. HiGHS keeps a scheduler per thread, made for the thread count of
    the first instance it runs there, and refuses a run that asks it for another: an instance of more
    than one thread (`threads`) gets a scheduler of its own, dropped after it, so the thread runs
    one-thread instances (everything else here runs those) before and after it. (`run` runs each
    instance on a fresh thread.)"""
    if h.getOptionValue("threads")[1] == 1:
        return h.run()
    reset = type(h).resetThreadScheduler
    reset(True)
    try:
        return h.run()
    finally:
        reset(True)


OVERRUN_S = 60.0
"""A solve still running this long past its time limit (or half the limit, if that is longer) is given
up on (`run`). HiGHS's root cut rounds check no time limit and have run 26 s past a 31 s one on a
50-site x 8-quarter portfolio; but HiGHS 1.16.0's presolve after a restart can also loop for ever, past
its time limit and a cancel (`tests/fixtures/highs/restart_loop.mps`; a 50-site x 4-quarter portfolio's
search with HiGHS seed 2: bench/README.md, issue 35, sixteenth round)."""

CANCEL_WAIT_S = 10.0
"""How long `run` waits for a solve asked to stop (Ctrl-C, or past `OVERRUN_S`) before leaving it: HiGHS
sees a cancel at its next check, well under a second in every run measured, or never, in that loop."""


def run(h: Any) -> None:
    """Run HiGHS so that Ctrl-C stops it at once (`h.run()` keeps the main thread in C until the solve
    ends: Python would act on SIGINT only then).

    Inside a `progress.watch` session, HiGHS's MIP callbacks record the incumbent, bound and gap, and the
    waiting main thread reports them; a session that keeps the best plan on Ctrl-C gets the stopped solve
    back as it is (HiGHS says "interrupted", with its incumbent if it has one) instead of the exception.

    A solve that does not end `OVERRUN_S` past its time limit is asked to stop (`stopped_past_limit` then
    says so); one that does not stop when asked (that, or Ctrl-C) is left running on its own thread, a
    daemon that ends with the process: past its time limit, a `SolverError` says so; on Ctrl-C, the
    KeyboardInterrupt goes on, as nothing can be read from a solve still running. The solve runs on a
    thread of this function's own, not highspy's `startSolve`, whose lock all instances share: a solve
    left running would hold it, and every later `startSolve` of the process would refuse to begin.
    """
    import threading
    import time

    import highspy

    from trnplan.errors import SolverError

    session = progress.current()
    latest = _watch_mip(h) if session is not None and session.progress is not None else None
    h.HandleUserInterrupt = True
    h._Highs__solver_should_stop = False  # an earlier cancel is not this run's (startSolve resets it too)
    h._trnplan_past_limit = h._trnplan_left = False  # nor what an earlier run of `h` came to
    limit = float(h.getOptionValue("time_limit")[1])
    give_up = limit + max(OVERRUN_S, limit / 2) if limit < 1e20 else math.inf
    ended = threading.Event()
    failed: list[BaseException] = []

    def solve() -> None:
        try:
            run_here(h)
            if h.getOptionValue("threads")[1] == 1:
                type(h).resetThreadScheduler(False)  # this thread's scheduler goes with it (as highspy's)
        except BaseException as exc:  # raised again on the waiting thread
            failed.append(exc)
        finally:
            ended.set()

    began = time.monotonic()
    try:
        threading.Thread(target=solve, name="trnplan-highs", daemon=True).start()
        while not ended.wait(PROGRESS_STEP_S):
            if latest is not None and session is not None:
                session.report(*latest)
            if time.monotonic() - began > give_up:
                h.cancelSolve()
                if not ended.wait(CANCEL_WAIT_S):
                    raise SolverError(
                        f"HiGHS {version()} ran {time.monotonic() - began - limit:.0f} s past this solve's"
                        f" time limit ({limit:g} s) and did not stop when asked (HiGHS 1.16's presolve can"
                        " loop for ever after a restart); no plan from it"
                    )
                # it stopped when asked: as at its time limit, with what it had
                h._trnplan_past_limit = h.getModelStatus() == highspy.HighsModelStatus.kInterrupt
    except KeyboardInterrupt:
        h.cancelSolve()
        if not ended.wait(CANCEL_WAIT_S):
            raise
        if session is None or not session.keep_best_on_interrupt:
            raise
        session.interrupted = True
    finally:
        h._trnplan_left = not ended.is_set()  # still running: nothing may touch it (`confirm_infeasible`)
    if failed:
        raise failed[0]


def stopped_past_limit(h: Any) -> bool:
    """Whether `run` stopped `h`'s solve, running `OVERRUN_S` past its time limit (HiGHS then says
    "interrupted": it is a time limit)."""
    return bool(getattr(h, "_trnplan_past_limit", False))


TOGETHER_THREADS = min(3, os.cpu_count() or 1)
"""At most this many solves of a `Background` run at once (each HiGHS instance on one thread, two in a
large phased model's search: `search_threads`)."""


class Background:
    """HiGHS solves on up to `workers` threads of their own, started now and waited for later (`wait`),
    while the caller does other work; `close` (or leaving the `with`) stops what is still running and
    drops what has not begun. Each instance has a fixed thread count and seed, so each outcome is the one
    `run` would give, whenever it runs."""

    def __init__(self, workers: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(max_workers=max(1, workers))
        self.started: list[tuple[Any, Any]] = []
        self.latest: list[float | None] | None = None  # the watched solve's figures (`submit`)
        self.also: dict[int, list[Any]] = {}  # instances stopped with a solve (`submit`)
        self.join = True  # `close` waits for the threads (`release`: not)

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def submit(self, h: Any, watch: bool = False, work: Any = None, also: Any = (), held: float | None = None
               ) -> Any:
        """Queue a solve of `h` (or `work`, a callable that runs it and the instances `also` names, which are
        stopped with it); returns its future. `watch`: its figures are the ones `wait` reports to a
        `progress.watch` session (HiGHS's callbacks are subscribed here, before it runs); `held`, the
        objective of a plan already held, is its best until HiGHS reports its own."""
        for x in (h, *also):  # cancelSolve stops it, and one cancelled before it begins stops at once
            x.HandleUserInterrupt = True
        session = progress.current()
        if watch and session is not None and session.progress is not None:
            self.latest = _watch_mip(h)
            self.latest[0] = held
        future = self.pool.submit(run_here, h) if work is None else self.pool.submit(work)
        self.started.append((h, future))
        self.also[id(h)] = list(also)
        return future

    def wait(self, jobs: list[tuple[Any, Any]]) -> None:
        """Wait for these solves (instance, future) in short steps, reporting the watched one's figures to
        a `progress.watch` session; Ctrl-C stops every solve of the pool, then as `run` re-raises or (a
        session that keeps the best plan) leaves each with what it had."""
        from concurrent.futures import wait

        session = progress.current()
        latest = self.latest
        futures = [f for _h, f in jobs]
        try:
            while wait(futures, timeout=PROGRESS_STEP_S).not_done:
                if latest is not None and session is not None:
                    session.report(*latest)
        except KeyboardInterrupt:
            self.stop()
            wait(futures)
            if session is None or not session.keep_best_on_interrupt:
                raise
            session.interrupted = True
        for future in futures:
            if not future.cancelled():
                future.result()  # a solve that raised: say so here

    def stop(self, keep: list[Any] | None = None) -> None:
        """Stop every solve of the pool but those of the instances in `keep`: queued ones never begin,
        running ones end at HiGHS's next check."""
        for h, future in self.started:
            if keep is None or all(h is not k for k in keep):
                future.cancel()
                for x in (h, *self.also.get(id(h), [])):
                    x.cancelSolve()

    def release(self, keep: list[Any] | None = None) -> None:
        """`stop`, and let `close` return without waiting for the solves stopped: each ends on its thread at
        HiGHS's next check (about 1.4 s into a 50 x 8 search's strong branching), while the caller goes on.
        For solves whose outcome nobody reads; the interpreter waits for their threads at exit."""
        self.stop(keep)
        self.join = False

    def close(self) -> None:
        """Stop what is left and wait for the threads (unless `release`d)."""
        self.stop()
        self.pool.shutdown(wait=self.join, cancel_futures=True)


def _watch_mip(h: Any) -> list[float | None]:
    """Subscribe to HiGHS's MIP callbacks; the list returned holds [incumbent, bound, gap] as they change
    (written by the solver's thread, read by the main thread: three floats, no lock needed)."""
    latest: list[float | None] = [None, None, None]

    def record(event: Any) -> None:
        out = event.data_out
        primal, dual, gap = out.mip_primal_bound, out.mip_dual_bound, out.mip_gap
        latest[0] = primal if abs(primal) < 1e300 else None
        latest[1] = dual if abs(dual) < 1e300 else None
        latest[2] = gap if latest[0] is not None and 0 <= gap < 1e300 else None

    h.cbMipInterrupt.subscribe(record)
    h.cbMipImprovingSolution.subscribe(record)
    return latest


def confirm_infeasible(h: Any, rerun: Any = None) -> bool:
    """Re-check a HiGHS "infeasible" once with presolve off; True if a second run was made.

    HiGHS 1.16.0's presolve has called a feasible MILP infeasible (`tests/fixtures/highs/
    presolve_infeasible.mps`). Everything here that acts on "infeasible" (a fabric mode fixed off, a
    capacity cut of 0, a scenario reported as having no plan) asks twice: the second run's outcome is the
    answer. `rerun` runs the model again (default `h.run()`); it costs a solve only where HiGHS says
    infeasible."""
    import highspy

    if h.getModelStatus() != highspy.HighsModelStatus.kInfeasible:
        return False
    h.setOptionValue("presolve", "off")
    try:
        if rerun is None:
            run_here(h)
        else:
            rerun(h)
    finally:
        if not getattr(h, "_trnplan_left", False):  # not on a solve `run` left running
            h.setOptionValue("presolve", "choose")  # trnplan never sets another
    return True
