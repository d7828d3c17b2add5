"""A first plan for a large phased model solved within a gap: the counts relaxed, then the fabric fixed.

Two MILPs on a HiGHS copy of the model, before its own search, each within the gap asked: (1) every
general integer (unit and switch counts) continuous, the binaries (fabric tiers, scale-out type, cooling)
kept; (2) every binary fixed at (1)'s plan, the counts whole again.
(2)'s plan is a plan of the model (HiGHS checks it again as the search's MIP start); the search still
proves its own gap, so nothing proven changes. Why: on a large phased portfolio the search's own plans
stay further above the optimum than the gap asked, where this plan is close enough for the root to fix
what a proof within the gap needs in a few nodes (bench/README.md, issue 35, eighth round). The search
from it (`search`) is HiGHS's own and a lean one side by side (ninth round).
"""

from __future__ import annotations

from typing import Any

import pulp

from trnplan.optimize import highs, progress
from trnplan.optimize.build import unit_totals
from trnplan.optimize.model import Model
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solution import SolveResult
from trnplan.optimize.solve import HIGHS_OPTIONS, Pending, finish, start_highs

FIRST_PLAN_MIN_SITE_PERIODS = 300
"""The first plan is made for phased models of at least this many site-periods (sites x periods): 50 x 8
and 25 x 16 (400) gain, 25 x 8 (200) does not, its search from the plan being slower than without
(bench/README.md, "Why the optimizer's thresholds are what they are")."""

FIRST_PLAN_MIN_GAP = 1e-6
"""...and only within a relative gap of at least this: a proof of gap 0 is a tree search that finds the
optimum itself long before it ends."""

SHARE = 0.25
"""Each of the two MILPs has at most this share of the time left (with a time limit)."""

LEAN_NODES = 20
"""The lean search (`LEAN_SEARCH`) stops unproven after this many nodes."""

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


def pays(model: Model, solver: str, gap: float) -> bool:
    """Whether `first_plan` is made before the search of `model` within `gap`."""
    if solver != "highs" or not model.multi or model.elastic or gap < FIRST_PLAN_MIN_GAP:
        return False
    return len(model.sites) * len(model.periods) >= FIRST_PLAN_MIN_SITE_PERIODS


def first_plan(model: Model, deadline: Deadline, gap: float) -> dict[str, float] | None:
    """A plan of `model` (variable name -> value) from the two MILPs above, or None (one of them found no
    plan in its time, or Ctrl-C stopped them in a session that keeps the best plan: `progress.interrupted()`
    then says so)."""
    import highspy
    import numpy as np

    hm = highs.HighsModel(model.prob, seed=highs.HIGHS_SEED)
    if not hm.loaded:
        return None
    h = hm.h
    counts, binaries = _integers(hm.columns)
    if not counts or not binaries:
        return None
    hm.set_options(**HIGHS_OPTIONS)  # as every trnplan solve; `_run` sets the gap
    kinds = highspy.HighsVarType
    _integrality(h, counts, kinds.kContinuous)
    relaxed = _run(h, deadline, gap, "a first plan: counts relaxed")
    if relaxed is None:
        return None
    h.clearSolver()  # else HiGHS takes (1)'s plan, fractional counts and all, as (2)'s start to repair
    fixed = np.array([round(relaxed[j]) for j in binaries], dtype=float)
    h.changeColsBounds(len(binaries), np.array(binaries, np.int32), fixed, fixed)
    _integrality(h, counts, kinds.kInteger)
    values = _run(h, deadline, gap, "a first plan: its fabric fixed")
    if values is None:
        return None
    return {v.name: float(x) for v, x in zip(hm.columns, values, strict=False)}


def search(model: Model, deadline: Deadline, plan: dict[str, float], gap: float) -> SolveResult:
    """The search of `model` within `gap` from the first plan: HiGHS's own and the lean one (`LEAN_SEARCH`)
    at once, each on a thread (and a core) of its own. The lean one's answer if it proves the gap within
    its nodes, else the other's, which ran on unaffected: each answer is the one its search gives alone,
    so the plan does not depend on which ends first (with one core they run one after the other)."""
    jobs = [start_highs(model.prob, deadline.remaining(), plan, gap, totals=unit_totals(model), options=o)
            for o in (None, LEAN_SEARCH)]
    full, lean = jobs
    if highs.TOGETHER_THREADS < 2:  # one core: the lean search first, then HiGHS's if need be
        highs.run(lean.model.h)
        if progress.interrupted() or _proven(lean):
            return finish(lean)
        highs.keep_within(full.model.h, deadline)  # what the lean one left of the time
        highs.run(full.model.h)
        return finish(full)
    with highs.Background(2) as background:
        running = [(p.model.h, background.submit(p.model.h, watch=p is full)) for p in jobs]
        background.wait(running[1:])
        if not progress.interrupted() and _proven(lean):
            background.stop(keep=[lean.model.h])
            return finish(lean)
        background.wait(running[:1])
    return finish(full)


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


def _run(h: Any, deadline: Deadline, gap: float, label: str) -> list[float] | None:
    """Run `h` within `gap` and its share of the time left; its plan's values, or None."""
    left = deadline.remaining()
    if left is not None and left <= 0:
        return None
    highs.set_time_left(h, None if left is None else left * SHARE)
    h.setOptionValue("mip_rel_gap", float(gap))
    session = progress.current()
    with progress.reading(1.0, "", label):  # the stage's name stays; no figures: (1)'s are not a plan's
        if session is not None:
            session.report(None, None, None)  # say what starts now, however soon it ends
        highs.run(h)
    if progress.interrupted() or h.getInfo().primal_solution_status != 2:
        return None
    return list(h.getSolution().col_value)
