"""A first plan for a large phased model: the counts relaxed, then the fabric fixed.

Two MILPs on HiGHS copies of the model, before its own search, each within the gap asked (below
FIRST_PLAN_MIN_GAP, such as gap 0, within START_GAP): (1) every general integer (unit and switch counts)
continuous, the binaries (fabric tiers, scale-out type, cooling) kept; (2) every binary fixed at (1)'s
plan, the counts whole again.
(2)'s plan is a plan of the model (HiGHS checks it again as the search's MIP start); the search still
proves its own gap, so nothing proven changes. Why: on a large phased portfolio the search's own plans
stay further above the optimum than the gap asked, where this plan is close enough for the root to fix
what a proof within the gap needs in a few nodes (bench/README.md, issue 35, eighth round). The search
from it (`search`) is HiGHS's own and a lean one side by side (ninth round). Where the search's wide
counts are split (`highs.split_pays`), (2) runs on a split copy, whose plan comes sooner and is the lean
search's start; HiGHS's own search starts from (2) made again on a whole copy, first thing on its core
(tenth round: 50 x 8's plan in 8 s against 13.5 s, and proven in 66 s against 72 s, where HiGHS's search
from the split copy's plan left 25 x 16 0.035% off at 240 s against 0.023%). Below FIRST_PLAN_MIN_GAP (a
proof of gap 0, out of reach in minutes at this size) the plan, as (2) first made it, is only the start of
HiGHS's own search, so that a time limit or Ctrl-C ends the solve with a plan (fifteenth round).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import replace
from functools import partial
from typing import Any

import pulp

from trnplan.optimize import highs, progress
from trnplan.optimize.build import unit_totals
from trnplan.optimize.highs import Total
from trnplan.optimize.model import Model
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solution import SolveResult, Termination
from trnplan.optimize.solve import (
    HIGHS_OPTIONS,
    Pending,
    armed,
    finish,
    highs_copy,
    limit_nodes,
    start_highs,
)

FIRST_PLAN_MIN_SITE_PERIODS = 300
"""The first plan is made for phased models of at least this many site-periods (sites x periods): 50 x 8
and 25 x 16 (400) gain, 25 x 8 (200) does not, its search from the plan being slower than without
(bench/README.md, "Why the optimizer's thresholds are what they are")."""

FIRST_PLAN_MIN_GAP = 1e-6
"""The least gap at which the search from the first plan is `search`'s (the lean search beside HiGHS's own,
`pays`): a lean search of 20 nodes proves no gap 0. Below it the first plan, its MILPs within START_GAP, is
the start of HiGHS's search alone: without it, HiGHS's own search had no plan for minutes on such models
(bench/README.md, issue 35, fifteenth round)."""

START_GAP = 1e-4
"""The gap of the first plan's MILPs where the search asks for less (`FIRST_PLAN_MIN_GAP`)."""

SHARE = 0.4
"""Each of the two MILPs has at most this share of the time left (with a time limit, at any gap): enough for
both to end on 50 x 8 with 60 s, where at 0.25 the first was cut short and the second found no plan, and
so the solve none (bench/README.md, issue 35, fifteenth round)."""

LEAN_NODES = 20
"""The lean search (`LEAN_SEARCH`) stops unproven after this many nodes (a few more on two threads, where
HiGHS checks the limit at its workers' meeting points)."""

LEAN_SEARCH = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_max_nodes": LEAN_NODES,
}
"""HiGHS's options for the lean search from the first plan (`search`): two of its heuristics off, for at
most LEAN_NODES nodes. Each is a sub-MIP in search of a better plan than the one held: where the first
plan is close enough to the optimum they find none (50 x 8 within 1e-4: the search proves in 36 s without
them, 58 s with), where it is not they are what finds better ones (25 x 16: 0.034% off at 240 s without,
0.024% with; bench/README.md, issue 35, ninth round)."""


def made_for(model: Model, solver: str) -> bool:
    """Whether `first_plan` is made before the search of `model` (at any gap)."""
    if solver != "highs" or not model.multi or model.elastic:
        return False
    return model.site_periods >= FIRST_PLAN_MIN_SITE_PERIODS


def pays(model: Model, solver: str, gap: float) -> bool:
    """Whether `model` within `gap` is searched from its first plan by `search` (the lean search beside
    HiGHS's own). Where a first plan is made (`made_for`) and this is False, it is HiGHS's start alone."""
    return gap >= FIRST_PLAN_MIN_GAP and made_for(model, solver)


class FirstPlan(dict[str, float]):
    """The first plan (variable name -> value), and the fabric (1) chose: `fixed`, the value of each binary
    column of `binaries`. `split`: (2) ran on a copy with the wide counts split (`highs.split_pays`), whose
    plan is the lean search's start; HiGHS's own search then starts from (2) on a whole copy (`search`;
    below FIRST_PLAN_MIN_GAP it starts from this plan as it is)."""

    binaries: list[int]
    fixed: Any
    split: bool = False  # (a FirstPlan made otherwise: as a plain plan)
    lean: highs.HighsModel | None = None  # the lean search's copy, made while (1) ran (`highs_copy`)
    totals: list[Total] | None = None  # the model's unit totals (`unit_totals`), made with it
    gap: float = 0.0  # the gap its MILPs and lean copy were made for (`search` makes another for any other)


def first_plan(model: Model, deadline: Deadline, gap: float) -> FirstPlan | None:
    """A plan of `model` (variable name -> value) from the two MILPs above, or None (one of them found no
    plan in its time, or Ctrl-C stopped them in a session that keeps the best plan: `progress.interrupted()`
    then says so). Below FIRST_PLAN_MIN_GAP the MILPs are solved within START_GAP and no lean copy is made
    (HiGHS's search alone follows)."""
    import highspy
    import numpy as np

    lean_follows = gap >= FIRST_PLAN_MIN_GAP
    gap = gap if lean_follows else START_GAP
    hm = highs.HighsModel(model.prob, seed=highs.HIGHS_SEED)
    if not hm.loaded:
        return None
    counts, binaries = _integers(hm.columns)
    if not counts or not binaries:
        return None
    hm.set_options(**HIGHS_OPTIONS)  # as every trnplan solve; `_run` sets the gap
    limit_nodes(hm)  # an alternative's (`alternatives.ALTERNATIVE_NODES`)
    _integrality(hm.h, counts, highspy.HighsVarType.kContinuous)
    split = highs.split_pays(model.prob, gap)
    with ThreadPoolExecutor(1) as pool:  # the copies (2) and the lean search run on: made while (1) runs
        two = highs.TOGETHER_THREADS > 1  # (on one core: after it, only if it found a plan)
        ahead = pool.submit(copy_context().run, _copies, model, split, gap, lean_follows) if two else None
        relaxed = _run(hm, deadline, gap, "a first plan: counts relaxed")
        made = None if ahead is None else ahead.result()  # waited for even so: PuLP's `variables()`
    if relaxed is None:  # sorts the problem's list in place, so nothing else may read it meanwhile
        return None
    copy, lean, totals = made or _copies(model, split, gap, lean_follows)
    if copy is None:
        return None
    fixed = np.array([round(relaxed[j]) for j in binaries], dtype=float)
    _fix(copy, binaries, fixed)
    values = _run(copy, deadline, gap, "a first plan: its fabric fixed")
    if values is None:
        return None
    plan = FirstPlan({v.name: float(x) for v, x in zip(copy.columns, values, strict=True)})
    plan.binaries, plan.fixed, plan.split, plan.lean, plan.totals = binaries, fixed, split, lean, totals
    plan.gap = gap
    return plan


def _copies(model: Model, split: bool, gap: float, lean_follows: bool
            ) -> tuple[highs.HighsModel | None, highs.HighsModel | None, list[Total]]:
    """The copies the first plan and its search will run on, made ahead while (1) runs on a second core
    (1.4 s on 50 x 8): (2)'s (its binaries not yet fixed), the lean search's where `lean_follows` (its time
    limit is given when it runs), and the unit totals the searches are given."""
    totals = unit_totals(model)
    lean = highs_copy(model.prob, gap, totals=totals, options=LEAN_SEARCH) if lean_follows else None
    return _copy(model, split), lean, totals


def _copy(model: Model, split: bool) -> highs.HighsModel | None:
    """A HiGHS copy of `model` with trnplan's options (its wide counts split if `split`), or None."""
    hm = highs.HighsModel(model.prob, seed=highs.HIGHS_SEED, split=split)
    if not hm.loaded:
        return None
    hm.set_options(**HIGHS_OPTIONS)
    limit_nodes(hm)
    return hm


def _fix(hm: highs.HighsModel, binaries: list[int], fixed: Any) -> None:
    """(2): the binaries of `hm` fixed at `fixed`."""
    import numpy as np

    hm.h.changeColsBounds(len(binaries), np.array(binaries, np.int32), fixed, fixed)


def _fabric_fixed(model: Model, binaries: list[int], fixed: Any, split: bool) -> highs.HighsModel | None:
    """(2): a HiGHS copy of `model` (its wide counts split if `split`) with the binaries fixed."""
    hm = _copy(model, split)
    if hm is not None:
        _fix(hm, binaries, fixed)
    return hm


def cheaper(model: Model, first: FirstPlan, warm: dict[str, float] | None) -> FirstPlan:
    """The search's start: the first plan, or `warm` (a plan of `model` given by the caller, such as an
    earlier alternative's) where that costs less (on a tie, the first plan: its searches are the ones
    measured)."""
    if warm is None or _objective(model, warm) >= _objective(model, first):
        return first
    plan = FirstPlan(warm)  # with the first plan's lean copy, made for any start (not split: no fabric)
    plan.lean, plan.totals, plan.gap = first.lean, first.totals, first.gap
    first.lean = None
    return plan


def search(model: Model, deadline: Deadline, plan: dict[str, float], gap: float) -> SolveResult:
    """The search of `model` within `gap` from the first plan: HiGHS's own and the lean one (`LEAN_SEARCH`)
    at once, each on a thread (and a core) of its own. The lean one's answer if it proves the gap within
    its nodes, else the other's, which ran on unaffected: each answer is the one its search gives alone,
    so the plan does not depend on which ends first (with one core they run one after the other).

    The lean search starts from `plan`. HiGHS's own starts from it too, unless `plan` was made on a split
    copy (`FirstPlan.split`): then from (2) solved again on a whole copy, first thing on its thread (the
    split copy's plan comes sooner, the whole one's serves HiGHS's search better: bench/README.md, issue
    35, tenth round); should that find none, from `plan`."""
    if isinstance(plan, FirstPlan) and plan.lean is not None and plan.totals is not None and plan.gap == gap:
        copy, totals = plan.lean, plan.totals  # made while (1) ran; a copy runs once
        plan.lean = None
    else:
        totals = unit_totals(model)
        copy = highs_copy(model.prob, gap, totals=totals, options=LEAN_SEARCH)
    highs.keep_within(copy.h, deadline)
    lean = armed(copy, deadline.remaining(), plan, gap)
    if highs.TOGETHER_THREADS < 2:  # one core: the lean search first, then HiGHS's if need be
        highs.run(lean.model.h)
        if progress.interrupted() or _proven(lean):
            return finish(lean)
        full, again = _full(model, deadline, plan, gap, totals)  # made now: only if need be
        _run_full(full, again, deadline, plan, gap)
        return _either(full, lean)
    with highs.Background(2) as background:
        running = [(lean.model.h, background.submit(lean.model.h))]  # it runs while the rest is made
        full, again = _full(model, deadline, plan, gap, totals)
        also = () if again is None else (again.h,)
        held = _objective(model, plan)  # shown while HiGHS's search has no figures of its own yet
        work = partial(_run_full, full, again, deadline, plan, gap, _own)
        running.append((full.model.h, background.submit(full.model.h, True, work, also, held)))
        background.wait(running[:1])
        if not progress.interrupted() and _proven(lean):
            background.release(keep=[lean.model.h])  # HiGHS's search: not read, not waited for
            return finish(lean)
        background.wait(running[1:])
    return _either(full, lean)


def _full(model: Model, deadline: Deadline, plan: dict[str, float], gap: float, totals: list[Total]
          ) -> tuple[Pending, highs.HighsModel | None]:
    """HiGHS's own search, and (2) again on a whole copy to make its start where `plan` came from a split
    one (else None: it starts from `plan`)."""
    again = None
    if isinstance(plan, FirstPlan) and plan.split:
        again = _fabric_fixed(model, plan.binaries, plan.fixed, False)
    start = None if again else plan
    return start_highs(model.prob, deadline.remaining(), start, gap, totals=totals), again


def _run_full(full: Pending, again: highs.HighsModel | None, deadline: Deadline, plan: dict[str, float],
              gap: float, run: Callable[[Any], None] | None = None) -> None:
    """HiGHS's search (`run`: `highs.run` on the caller's thread, HiGHS's own on a `Background`'s), after
    (2) on the whole copy `again` where there is one, from its plan (from `plan` should it find none)."""
    if again is not None:
        label = "a first plan: its fabric fixed, whole"  # on the caller's thread, the stage is named
        values = _solve(again, deadline, gap, run) if run else _run(again, deadline, gap, label)
        if progress.interrupted() or _stopped(again):  # Ctrl-C, or the lean search proved: not begun
            return
        names = (v.name for v in again.columns)
        start = plan if values is None else dict(zip(names, values, strict=True))
        full.model.set_start(start)
        full.start = start
    highs.keep_within(full.model.h, deadline)
    (run or highs.run)(full.model.h)


def _either(full: Pending, lean: Pending) -> SolveResult:
    """HiGHS's search's answer; the lean one's where HiGHS's has no plan (Ctrl-C stopped it before it had
    begun, or the time left it none: what stopped HiGHS's search is then what stopped the whole, not the
    lean search's own LEAN_NODES)."""
    result = finish(full)
    if not result.status.has_solution:
        fallback = finish(lean)
        stopped = result.termination.is_limit or result.termination is Termination.INTERRUPT
        if fallback.termination is Termination.SOLUTION_LIMIT and (stopped or progress.interrupted()):
            why = Termination.INTERRUPT if progress.interrupted() else result.termination
            return replace(fallback, termination=why)
        return fallback
    return result


def _objective(model: Model, plan: dict[str, float]) -> float:
    """The objective of `plan` (variable name -> value) in HiGHS's terms, as its figures are: minimised,
    without the problem's constant (`highs.HighsModel` leaves it out)."""
    sense = -1.0 if model.prob.sense == pulp.LpMaximize else 1.0
    return sense * float(sum(c * plan[v.name] for v, c in model.prob.objective.items()))


def _stopped(hm: highs.HighsModel) -> bool:
    """Whether `hm`'s run was cancelled (`Background.stop`: on its thread, `progress.interrupted()` is not
    seen until the wait ends), not stopped past its time limit (`highs.stopped_past_limit`)."""
    import highspy

    cancelled = hm.h.getModelStatus() == highspy.HighsModelStatus.kInterrupt
    return bool(cancelled and not highs.stopped_past_limit(hm.h))


def _proven(lean: Pending) -> bool:
    """Whether the lean search proved its gap: HiGHS says "optimal" (within the gap asked)."""
    import highspy

    return bool(lean.model.h.getModelStatus() == highspy.HighsModelStatus.kOptimal)


def _integers(columns: list[pulp.LpVariable]) -> tuple[list[int], list[int]]:
    """The integer columns: counts (more than two values) and binaries (0 or 1)."""
    counts: list[int] = []
    binaries: list[int] = []
    for j, v in enumerate(columns):
        if v.cat != pulp.LpInteger:
            continue
        if v.lowBound == 0 and v.upBound is not None and v.upBound <= 1:
            binaries.append(j)
        else:
            counts.append(j)
    return counts, binaries


def _integrality(h: Any, columns: list[int], kind: Any) -> None:
    import numpy as np

    h.changeColsIntegrality(len(columns), np.array(columns, np.int32), np.array([kind] * len(columns)))


def _run(hm: highs.HighsModel, deadline: Deadline, gap: float, label: str) -> list[float] | None:
    """`_solve`, its stage named on the progress line."""
    session = progress.current()
    with progress.reading(1.0, "", label):  # the stage's name stays; no figures: (1)'s are not a plan's
        if session is not None:
            session.report(None, None, None)  # say what starts now, however soon it ends
        return _solve(hm, deadline, gap)


def _own(h: Any) -> None:
    """HiGHS's own run, on a `Background`'s thread (no progress session, no Ctrl-C there)."""
    highs.run_here(h)


def _solve(hm: highs.HighsModel, deadline: Deadline, gap: float, run: Callable[[Any], None] | None = None
           ) -> list[float] | None:
    """Run `hm` within `gap` and its share of the time left; its plan's values (one per variable), or None."""
    h = hm.h
    left = deadline.remaining()
    if left is not None and left <= 0:
        return None
    highs.set_time_left(h, None if left is None else left * SHARE)
    h.setOptionValue("mip_rel_gap", float(gap))
    (run or highs.run)(h)
    if progress.interrupted() or h.getInfo().primal_solution_status != 2:
        return None
    return hm.values()
