"""Alternatives: for each choice the optimum makes (a form, a cooling, a switch, an owned site it
builds), the best solution without it anywhere, re-solved on the same model with that choice's variables
fixed to zero."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from trnplan.catalog import Catalog
from trnplan.costs import NO_SWITCH, evaluate_decisions, objective_value, perf_of
from trnplan.optimize import progress
from trnplan.optimize.accelerate import relaxed
from trnplan.optimize.build import build_model
from trnplan.optimize.highs import TOGETHER_THREADS, Background, HighsModel, keep_within, search_threads
from trnplan.optimize.model import MONEY_SCALE, Model, set_objective
from trnplan.optimize.progress import Deadline, OutOfTime
from trnplan.optimize.solution import AlternativeSolution, Decisions, SolveResult, SolveStatus, Termination
from trnplan.optimize.solve import Pending, finish, node_limit, start_highs


class Search(Protocol):
    """How a model is solved (`trnplan.optimize.solve_objective`): model, solver, deadline, a start ratio,
    the relative gap to prove and a MIP start (variable name -> value)."""

    def __call__(
        self, model: Model, solver: str, time_limit: Deadline, start_ratio: float = 0.0, *,
        gap: float = 0.0, warm: dict[str, float] | None = None,
    ) -> tuple[SolveResult, Decisions | None, int]: ...

CHOICE_FIELDS = {"form": "form", "cooling": "cooling", "scale-up switch": "scale_up_switch"}


def _exclude(model: Model, kind: str, item: str) -> list[tuple[Any, Any]]:
    """Forbid one choice everywhere by zeroing the bounds of its variables; returns (var, old bound) pairs."""
    touched = []
    for sm in model.sites:
        if kind == "owning":  # an owned site: the plan that leaves it unbuilt
            variables = list(sm.n) if sm.site == item else []
        elif kind == "scale-out switch":
            variables = [y for (o, _t), y in sm.y.items() if o == item]
        else:
            field = CHOICE_FIELDS[kind]
            variables = [v for v, o in zip(sm.n, sm.options, strict=True) if getattr(o, field) == item]
        for var in variables:
            touched.append((var, var.upBound))
            var.upBound = 0
    return touched


@contextmanager
def _excluded(model: Model, choice: tuple[str, str]) -> Iterator[list[tuple[Any, Any]]]:
    """The model without `choice` (`_exclude`) for the time of the block."""
    touched = _exclude(model, *choice)
    try:
        yield touched
    finally:
        for var, upper in touched:
            var.upBound = upper


def owned_sites(catalog: Catalog, best: Decisions) -> list[tuple[str, str]]:
    """The owned sites the optimum builds, as choices ("owning", site): what would it cost not to own it?"""
    used = sorted({d.site for d in best.deployments})
    return [("owning", site) for site in used if site in catalog.sites and catalog.sites[site].owned]


def _rank(alt: AlternativeSolution, objective: str, best_value: float) -> tuple[int, float, str]:
    """Feasible first, then by how much worse than the optimum, then by name."""
    if alt.objective is None:
        return (1, 0.0, alt.without)
    delta = (alt.objective - best_value) / best_value * 100 if best_value else 0.0
    return (0, delta if objective == "min_tco" else -delta, alt.without)


ALTERNATIVE_GAP = 1e-4
"""The relative gap each alternative is proven within (the plan's own, when that is wider): their deltas
are shown to 0.1%, so a proof to the last dollar would buy nothing shown."""

ALTERNATIVE_NODES = 2000
"""The most branch-and-bound nodes each of an alternative's HiGHS searches takes (`solve.node_limit`; a
search on two threads, `highs.search_threads`, checks it where its workers meet: a few more): one
not proven within its gap by then is listed with the gap it reached and what stopped it, so a command
without a time limit ends, at the same place on every machine. Above what every alternative that proves
took on the 10 x 8 and 25 x 8 portfolios (1,515 nodes at most); a 50 x 8 one that ran 3,497 nodes in 600 s
to 0.017% stops near 0.02% (bench/README.md, issue 35, twelfth round)."""


def find_alternatives(
    catalog: Catalog,
    scenario_id: str,
    best: Decisions,
    k: int,
    solver: str,
    time_limit: float | Deadline | None,
    search: Search,
    found: list[AlternativeSolution] | None = None,
    gap: float = ALTERNATIVE_GAP,
    model: Model | None = None,
    at_once: bool = False,
    ahead: Ahead | None = None,
) -> list[AlternativeSolution]:
    """The best solution without each choice the optimum makes, ranked by the objective; top k.

    Each answers "what would it cost not to choose X?", and each chooses differently from the plan. The
    choices are taken in the order of their LP bounds (the best a plan without X could be); once k plans
    are found, a choice whose bound is worse than the k-th cannot enter the top k and is not solved. An
    LP with no solution proves there is no plan without X, with no MILP (listed whatever time the MILPs
    leave). Each MILP is solved to `gap`, from the best plan found so far that does not choose X (when
    there is one; a large phased model's, `together`: from the cheaper of that and a first plan of its
    own), each of its searches stopping at ALTERNATIVE_NODES nodes at most (one stopped there is listed
    with the gap it reached). They are searched while
    `time_limit` (seconds, or a Deadline shared with the search) leaves time; one the limit or a Ctrl-C
    stopped before anything was found is left out, being neither a plan nor proof of none. Each is solved
    by `search` (`trnplan.optimize.solve_objective`) on `model` (the scenario's, built when not given;
    bounds changed for a solve are restored after it), or, with `at_once` where `together` allows, by
    HiGHS directly, several at once (`_in_rounds`: the same MILPs, each as `search` would solve it; the
    first round takes those `ahead` began while the plan was solved). `found`, when given, collects each
    as it is found (for a caller that is interrupted halfway).
    """
    found = [] if found is None else found
    if k <= 0:
        return []
    deadline = Deadline.of(time_limit)
    scenario = catalog.scenarios[scenario_id]
    if deadline.expired:
        return []
    if model is None:
        model = build_model(catalog, scenario_id)
    try:
        choices = best.chosen_items() + owned_sites(catalog, best)
        ranked_choices = _by_bound(model, scenario.objective, choices, deadline)
    except OutOfTime:
        return []
    for kind, item, bound in ranked_choices:  # known now, with no MILP, whatever time is left for the rest
        if bound is None:  # the LP without it has no solution: neither has the MILP
            found.append(AlternativeSolution(f"{kind} {item}", _no_plan(solver)))
    ranked_choices = [choice for choice in ranked_choices if choice[2] is not None]
    with node_limit(ALTERNATIVE_NODES):  # each MILP's searches (`ALTERNATIVE_NODES`)
        pool = _Found()
        if at_once and together(model, solver, gap):
            pool.plan = _values(model)  # only rounds repair the plan (`_job`)
            _in_rounds(catalog, scenario_id, model, ranked_choices, pool, found, k, solver, deadline, gap,
                       ahead)
            return ranked(catalog, scenario_id, best, found, k)
        for kind, item, bound in ranked_choices:
            if deadline.expired or progress.interrupted():
                break
            if bound is None or _cannot_enter(scenario.objective, bound, pool.kept, k):
                continue
            pool.solved += 1
            label = f"alternative {pool.solved} ({k} asked): without {kind} {item}"
            alt = _without(catalog, scenario_id, model, (kind, item), pool, label,
                           lambda m, start, warm: search(m, solver, deadline, start, gap=gap, warm=warm))
            if progress.interrupted():
                break
            if alt is not None:
                found.append(alt)
    return ranked(catalog, scenario_id, best, found, k)


ROUND = 3
"""The most alternatives solved at once, as one round (`_in_rounds`; no more than the k asked)."""


def together(model: Model, solver: str, gap: float) -> bool:
    """Whether the alternatives' MILPs are solved in rounds, at once: HiGHS, one MILP per alternative (no
    Dinkelbach steps) and no start heuristic of its own (a model that uses one solves in turn, as does a
    large phased model within a gap: each alternative, as the plan, from its own first plan and with both
    cores, `relaxed.search`; in rounds, HiGHS's searches from a repaired plan ran for minutes and filled
    24 GiB on 50 x 8: bench/README.md, issue 35, eleventh round)."""
    return (solver == "highs" and model.scenario.objective != "max_perf_per_tco" and not model.use_start
            and not relaxed.pays(model, solver, gap))


def _in_rounds(
    catalog: Catalog,
    scenario_id: str,
    model: Model,
    choices: list[tuple[str, str, float | None]],
    pool: _Found,
    found: list[AlternativeSolution],
    k: int,
    solver: str,
    deadline: Deadline,
    gap: float,
    ahead: Ahead | None = None,
) -> None:
    """The alternatives' MILPs in rounds of up to ROUND (and k) choices solved at once
    (`_run_round`), in the order of their bounds. What a round solves, and from which start,
    depends only on the rounds before it (the plans they found: the bound rule, the MIP starts), never on
    which solve ends first, so the plans are the same on any machine; the progress line names the round.
    The first round has no start: a solve `ahead` began for one of its choices is that round's own."""
    objective = model.scenario.objective
    queue = list(choices)
    while queue and not (deadline.expired or progress.interrupted()):
        batch: list[tuple[str, str]] = []
        while queue and len(batch) < min(ROUND, k):
            kind, item, bound = queue.pop(0)
            if bound is not None and not _cannot_enter(objective, bound, pool.kept, k):
                batch.append((kind, item))
        if not batch:
            break
        first, pool.solved = pool.solved + 1, pool.solved + len(batch)
        label = (f"alternatives {first}-{pool.solved} ({k} asked), at once" if len(batch) > 1
                 else f"alternative {first} ({k} asked): without {batch[0][0]} {batch[0][1]}")
        scale, unit = (1 / MONEY_SCALE, "USD") if objective == "min_tco" else (1.0, "PFLOPs")
        jobs = [_job(model, choice, pool, deadline, gap, ahead) for choice in batch]
        with progress.stage(label), progress.reading(scale, unit):
            if ahead is not None:
                ahead.run(jobs, deadline)
            else:
                _run_round(jobs, deadline)
        ahead = None  # only the first round has no start of its own: later ones start from its plans
        pending = [p for p, _repair in jobs]
        for choice, p in zip(batch, pending, strict=True):
            alt = _settle(catalog, scenario_id, model, choice, pool, finish(p))
            if alt is not None and not progress.interrupted():
                found.append(alt)
        if progress.interrupted():
            break


def _values(model: Model) -> dict[str, float] | None:
    """The values on the model's variables (the plan just solved), or None when some have none."""
    values = {v.name: v.varValue for v in model.prob.variables()}
    return None if any(x is None for x in values.values()) else {k: float(x) for k, x in values.items()}


def _ready(model: Model, choice: tuple[str, str], pool: _Found, deadline: Deadline, gap: float) -> Pending:
    """HiGHS's copy of the model without `choice`, from the last plan found that does not choose it."""
    set_objective(model, model.scenario.objective)
    with _excluded(model, choice):
        usable = [values for items, _r, values in pool.seeds if choice not in items]
        return start_highs(model.prob, deadline.remaining(), usable[-1] if usable else None, gap)


Job = tuple[Pending, HighsModel | None]
"""An alternative's solve as a round runs it: HiGHS's copy of the model without the choice, and the
repair whose plan it starts from (`_repair`; None: it starts from an earlier alternative's plan, or cold)."""


def _job(
    model: Model, choice: tuple[str, str], pool: _Found, deadline: Deadline, gap: float, ahead: Ahead | None
) -> Job:
    """The solve of `choice` as this round runs it: from the last alternative's plan that does without
    it; failing that from the plan repaired (`_repair`); failing that cold, when `ahead` may have begun
    it already (the same copy, so the same outcome)."""
    usable = any(choice not in items for items, _r, _values in pool.seeds)
    repair = None if usable else _repair(model, choice, pool.plan, deadline)
    begun = ahead.take(choice) if ahead is not None and repair is None and not usable else None
    return begun or _ready(model, choice, pool, deadline, gap), repair


REPAIR_GAP = 0.01
REPAIR_NODES = 200
"""The repair's sub-MIP stops within 1% or at this many nodes: its plan is only a start."""


def _repair(
    model: Model, choice: tuple[str, str], plan: dict[str, float] | None, deadline: Deadline
) -> HighsModel | None:
    """The plan repaired to do without `choice`, as a MILP ready to run (`_repaired`): the model without
    it, with every unit count of each site whose plan does not use it held at the plan's. None when
    there is no plan to repair or every site uses the choice (nothing would be held: the alternative's
    own search is the repair)."""
    from trnplan.optimize.solve import HIGHS_OPTIONS

    if plan is None:
        return None
    set_objective(model, model.scenario.objective)
    with _excluded(model, choice) as touched:
        names = {var.name for var, _upper in touched}
        sites = [sm for pm in model.periods for sm in pm.sites]  # every period's
        using = {sm.site for sm in sites for v in [*sm.n, *sm.y.values()]
                 if v.name in names and plan[v.name] > 0.5}
        held = [v for sm in sites if sm.site not in using for v in sm.n]
        if not held or not using:
            return None
        sub = HighsModel(model.prob)
    for v in held:
        sub.h.changeColBounds(sub.col[v.name], float(round(plan[v.name])), float(round(plan[v.name])))
    sub.set_options(**{**HIGHS_OPTIONS, "mip_rel_gap": REPAIR_GAP, "mip_max_nodes": REPAIR_NODES})
    keep_within(sub.h, deadline)
    return sub


def _repaired(repair: HighsModel) -> dict[str, float] | None:
    """Run a repair (`_repair`): its plan, or None when it found none."""
    repair.h.run()
    if repair.h.getInfo().primal_solution_status != 2:
        return None
    return {v.name: float(x) for v, x in zip(repair.columns, repair.h.getSolution().col_value, strict=True)}


def _run_round(jobs: list[Job], deadline: Deadline) -> None:
    """A round's jobs (`_job`) at once on threads of their own, each repair before its solve (both on the
    job's thread); `Ahead.run` is the same for a round some of whose jobs were begun before the plan."""
    with Background(min(len(jobs), TOGETHER_THREADS)) as background:
        _submit_all(background, jobs, deadline)


def _submit_all(background: Background, jobs: list[Job], deadline: Deadline) -> None:
    """Begin each job `background` has not begun yet, with what is left of the deadline (the first of them
    watched by the progress line), and wait for all."""
    futures, watched = [], False
    started = {id(h): f for h, f in background.started}
    for p, repair in jobs:
        h = p.model.h
        if id(h) not in started:
            keep_within(h, deadline)
            also = [repair.h] if repair is not None else []
            started[id(h)] = background.submit(h, watch=not watched, work=_work(p, repair), also=also)
            watched = True
        futures.append((h, started[id(h)]))
    background.wait(futures)


def _work(p: Pending, repair: HighsModel | None) -> Callable[[], None]:
    """A job's thread: the repair, then the solve from its plan (or cold, when it found none)."""

    def work() -> None:
        if repair is not None:
            values = _repaired(repair)
            if values is not None:
                p.model.set_start(values)
                p.start = values
        p.model.h.run()

    return work


AHEAD_SHARE = 0.01
"""A choice the plan's LP relaxation gives at least this share of its chips (a scale-out switch: of its
sites) is taken for one the plan makes, and its alternative begun `ahead`."""


AHEAD_THREADS = max(1, min(TOGETHER_THREADS, (os.cpu_count() or 1) - 1))
"""How many of the solves guessed are begun beside the plan's own, on the cores it leaves free (the rest
wait for the plan; `begin_ahead` counts the plan's search threads): a guess that misses takes no time
from the plan."""


@dataclass
class Ahead:
    """Alternatives' MILPs begun while the plan's own MILP is solved (`begin_ahead`), for the choices the
    plan's LP relaxation makes, best LP bound first: the first round of `_in_rounds` takes those it asks
    for (each is the copy that round would make: no start, the same gap, so the same outcome, begun
    sooner) and stops the others. A guess that misses costs time, never a different answer."""

    background: Background
    jobs: dict[tuple[str, str], Pending] = field(default_factory=dict)

    def take(self, choice: tuple[str, str]) -> Pending | None:
        return self.jobs.pop(choice, None)

    def run(self, jobs: list[Job], deadline: Deadline) -> None:
        """Stop the guesses the round did not take, begin the solves it adds (a guess not begun yet gets
        what is left of the deadline now, not what it had when it was made), and wait for the round."""
        self.background.stop(keep=[p.model.h for p, _repair in jobs])
        _submit_all(self.background, jobs, deadline)

    def close(self) -> None:
        self.background.close()


def begin_ahead(model: Model, k: int, solver: str, deadline: Deadline, gap: float) -> Ahead | None:
    """Begin, on the threads the plan's own solve leaves free, the first round's alternatives as the
    plan's LP relaxation guesses them (None: no free core, nothing to guess, or alternatives not solved
    at once). The guesses' LP bounds are not reused after the plan: the round's order comes from the
    bounds of the plan's own choices, computed the same way on every machine, with or without this."""
    free = (os.cpu_count() or 1) - search_threads(model, solver)  # cores the plan's search leaves free
    if k <= 0 or free < 1 or not together(model, solver, gap) or deadline.expired:
        return None
    guesses = _lp_choices(model)
    try:
        bounds = _by_bound(model, model.scenario.objective, guesses, deadline)
    except OutOfTime:
        return None
    picks = [(kind, item) for kind, item, bound in bounds if bound is not None][: min(ROUND, k)]
    if not picks:
        return None
    ahead = Ahead(Background(TOGETHER_THREADS))
    for i, choice in enumerate(picks):
        with node_limit(ALTERNATIVE_NODES):  # the copy the first round would make
            ahead.jobs[choice] = _ready(model, choice, _Found(), deadline, gap)
        if i < min(AHEAD_THREADS, free):
            ahead.background.submit(ahead.jobs[choice].model.h)
    return ahead


def _lp_choices(model: Model) -> list[tuple[str, str]]:
    """The choices (as `Decisions.chosen_items` and `owned_sites` name them) that the model's LP relaxation
    gives at least AHEAD_SHARE of its chips in the last period (a scale-out switch: of its sites)."""
    set_objective(model, model.scenario.objective)
    lp = HighsModel(model.prob, mip=False)
    lp.h.run()
    if lp.h.getInfo().primal_solution_status != 2:
        return []
    x = lp.h.getSolution().col_value
    sites = model.periods[-1].sites if model.periods else model.sites
    chips: dict[tuple[str, str], float] = {}
    for sm in sites:
        for v, o in zip(sm.n, sm.options, strict=True):
            c = float(x[lp.col[v.name]]) * o.chips
            for key in [("form", o.form), ("cooling", o.cooling), ("scale-up switch", o.scale_up_switch)] + (
                [("owning", sm.site)] if model.catalog.sites[sm.site].owned else []
            ):
                chips[key] = chips.get(key, 0.0) + c
        for (switch, _t), y in sm.y.items():
            share = float(x[lp.col[y.name]]) / len(sites)
            chips[("scale-out switch", switch)] = chips.get(("scale-out switch", switch), 0.0) + share
    total = sum(c for (kind, _i), c in chips.items() if kind == "form")
    return sorted(
        key for key, c in chips.items()
        if c >= AHEAD_SHARE * (1.0 if key[0] == "scale-out switch" else total) and c > 0
        and key[1] != NO_SWITCH
    )


@dataclass
class _Found:
    """The alternatives' plans so far: each one's choices, PFLOPs per USD and values (`seeds`), the
    solver's objective of each (`kept`: what the bounds are compared with), and the MILPs solved."""

    seeds: list[tuple[list[tuple[str, str]], float, dict[str, float]]] = field(default_factory=list)
    kept: list[float] = field(default_factory=list)
    solved: int = 0
    plan: dict[str, float] | None = None  # the plan's own values, for `_repair`


def _without(
    catalog: Catalog,
    scenario_id: str,
    model: Model,
    choice: tuple[str, str],
    pool: _Found,
    label: str,
    search: Callable[[Model, float, dict[str, float] | None], tuple[SolveResult, Decisions | None, int]],
) -> AlternativeSolution | None:
    """The best plan without one choice (None: a limit or Ctrl-C stopped it before it found one). A plan
    found for an earlier exclusion that does not choose it is feasible here too: its ratio (a hair less,
    for rounding) is a valid Dinkelbach start, its values a MIP start."""
    usable = [(r, values) for items, r, values in pool.seeds if choice not in items]
    start = max((r for r, _ in usable), default=0.0) * (1 - 1e-9)
    with _excluded(model, choice), progress.stage(label):
        result, decisions, _iterations = search(model, start, usable[-1][1] if usable else None)
    return _settle(catalog, scenario_id, model, choice, pool, result, decisions)


def _settle(
    catalog: Catalog,
    scenario_id: str,
    model: Model,
    choice: tuple[str, str],
    pool: _Found,
    result: SolveResult,
    decisions: Decisions | None = None,
) -> AlternativeSolution | None:
    """The alternative a solve without `choice` gave (its values on the model's variables; `decisions`
    read from them when not given), recorded in `pool`; None when a limit or Ctrl-C stopped it first."""
    from trnplan.optimize import extract

    kind, item = choice
    if decisions is None and result.status.has_solution:
        decisions = extract(model)
    if decisions is None or not decisions.deployments:
        stopped = result.termination.is_limit or result.termination is Termination.INTERRUPT
        if stopped or progress.interrupted():
            return None
        return AlternativeSolution(f"{kind} {item}", result)  # proven: none without it
    ev = evaluate_decisions(catalog, scenario_id, decisions)
    if ev.totals.tco_usd > 0:
        values = {v.name: float(v.varValue or 0.0) for v in model.prob.variables()}
        items = decisions.chosen_items() + owned_sites(catalog, decisions)
        pool.seeds.append((items, perf_of(ev.totals) / ev.totals.tco_usd, values))
    if result.objective is not None:
        pool.kept.append(result.objective)
    value = objective_value(catalog.scenarios[scenario_id].objective, ev.totals)
    return AlternativeSolution(f"{kind} {item}", result, decisions, value)


def _no_plan(solver: str) -> SolveResult:
    return SolveResult(SolveStatus.INFEASIBLE, "HiGHS" if solver == "highs" else "CBC", "", None, None,
                       Termination.INFEASIBLE)


BOUND_MARGIN = 1e-7
"""Relative margin between an LP bound and a plan's objective before the bound is trusted to rule a
choice out (the LP's and the MILP's tolerances)."""


def _cannot_enter(objective: str, bound: float, kept: list[float], k: int) -> bool:
    """Whether a choice whose plans are all no better than `bound` cannot enter the top k of the plans
    found so far (the solver's objective values)."""
    if objective == "max_perf_per_tco" or len(kept) < k:
        return False
    if objective == "min_tco":
        kth = sorted(kept)[k - 1]
        return bound > kth + BOUND_MARGIN * max(1.0, abs(kth))
    kth = sorted(kept, reverse=True)[k - 1]
    return bound < kth - BOUND_MARGIN * max(1.0, abs(kth))


def _by_bound(
    model: Model, objective: str, choices: list[tuple[str, str]], deadline: Deadline
) -> list[tuple[str, str, float | None]]:
    """Each choice with the LP bound of the model without it (None: that LP has no solution), best bound
    first (ties by name). max_perf_per_tco has no linear objective to bound: every choice gets the plan's
    own order and a bound that rules nothing out."""
    if objective == "max_perf_per_tco":
        return [(kind, item, 0.0) for kind, item in choices]
    from trnplan.optimize.highs import HighsModel, confirm_infeasible, run

    set_objective(model, objective)
    lp = HighsModel(model.prob, mip=False)
    constant = float(model.prob.objective.constant)
    sign = -1.0 if objective != "min_tco" else 1.0  # HiGHS minimises: a maximum's objective is negated
    bounds: list[tuple[str, str, float | None]] = []
    for kind, item in choices:
        if deadline.expired:
            raise OutOfTime("bounding the alternatives")
        touched = _exclude(model, kind, item)
        columns = [lp.col[var.name] for var, _ in touched if var.name in lp.col]
        for i in columns:
            lp.h.changeColBounds(i, 0.0, 0.0)
        keep_within(lp.h, deadline)
        run(lp.h)
        confirm_infeasible(lp.h, run)  # HiGHS's presolve has called feasible models infeasible
        bounds.append((kind, item, _lp_bound(lp.h, sign, constant)))
        for var, upper in touched:
            var.upBound = upper
            if var.name in lp.col:
                low = 0.0 if var.lowBound is None else float(var.lowBound)
                lp.h.changeColBounds(lp.col[var.name], low, float("inf") if upper is None else float(upper))
    # best first: lowest cost, highest PFLOPs; no bound (no plan) last
    key_sign = 1.0 if objective == "min_tco" else -1.0
    return sorted(bounds, key=lambda b: (b[2] is None, key_sign * (b[2] or 0.0), b[0], b[1]))


def _lp_bound(h: Any, sign: float, constant: float) -> float | None:
    """The LP's optimum in the model's terms; None when the LP is infeasible; -inf/+inf (rules out
    nothing) when it stopped early."""
    import highspy

    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    if status != highspy.HighsModelStatus.kOptimal:
        return -math.inf if sign > 0 else math.inf
    return sign * float(h.getInfo().objective_function_value) + constant


def ranked(
    catalog: Catalog, scenario_id: str, best: Decisions, alternatives: list[AlternativeSolution], k: int
) -> list[AlternativeSolution]:
    """The top k alternatives: feasible ones first, by how much worse than the optimum, then by name."""
    scenario = catalog.scenarios[scenario_id]
    best_ev = evaluate_decisions(catalog, scenario_id, best)
    best_value = objective_value(scenario.objective, best_ev.totals)
    return sorted(alternatives, key=lambda a: _rank(a, scenario.objective, best_value))[:k]
