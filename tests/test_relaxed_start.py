"""The first plan of a large phased model solved within a gap (`optimize.accelerate.relaxed`): the counts
relaxed, then the fabric fixed at that plan and the counts whole again.

It is a plan of the model (every row, bound and integrality holds), and the solve that starts from it
proves the gap asked against the optimum found without it; it is made only for phased models of enough
site-periods solved by HiGHS, searched from by the lean search and HiGHS's own within a gap, by HiGHS's
alone at gap 0 (its MILPs then within `START_GAP`), whose optimum it proves as without it; Ctrl-C or the
deadline during it, or during a search stopped before it took its start, end the solve with that plan,
unproven.
"""

from __future__ import annotations

from typing import Any

import pulp
import pytest

import trnplan.optimize as optimize_module
from trnplan.optimize import build_model, highs, progress, set_objective, solve_objective
from trnplan.optimize.accelerate import relaxed
from trnplan.optimize.build import unit_totals
from trnplan.optimize.model import Model
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solution import SolveResult, SolveStatus, Termination
from trnplan.optimize.solve import finish, start_highs
from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs, portfolio_specs


def phased(sites: int = 5, periods: int = 3, seed: int = 0) -> Model:
    catalog = load_portfolio(phased_portfolio_specs(sites, periods, seed))
    (scenario_id,) = catalog.scenarios
    model = build_model(catalog, scenario_id, start=False)
    set_objective(model, model.scenario.objective)
    return model


def violations(prob: pulp.LpProblem, values: dict[str, float], tol: float = 1e-6) -> list[str]:
    """What `values` break in `prob`: rows, bounds, integrality (relative to each row's size)."""
    out = []
    for v in prob.variables():
        x = values[v.name]
        if v.lowBound is not None and x < v.lowBound - tol or v.upBound is not None and x > v.upBound + tol:
            out.append(f"bound {v.name}={x}")
        if v.cat == pulp.LpInteger and abs(x - round(x)) > tol:
            out.append(f"integrality {v.name}={x}")
    for c in prob.constraints():
        lhs = sum(coef * values[v.name] for v, coef in c.items()) + c.constant
        scale = tol * max(1.0, abs(c.constant))
        broken = {pulp.LpConstraintLE: lhs > scale, pulp.LpConstraintGE: lhs < -scale,
                  pulp.LpConstraintEQ: abs(lhs) > scale}[c.sense]
        if broken:
            out.append(f"row {c.name}: {lhs}")
    return out


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_first_plan_is_a_plan_of_the_model(
    seed: int, split: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if split:  # the second MILP on a copy with every count of 2 values or more split, as large models' are
        monkeypatch.setattr(highs, "SPLIT_MIN_WORK", 0.0)
        monkeypatch.setattr(highs, "WIDE_INTEGER", 2)
    model = phased(seed=seed)
    made: list[highs.HighsModel] = []
    copy = highs.HighsModel
    monkeypatch.setattr(highs, "HighsModel", lambda *a, **k: made.append(copy(*a, **k)) or made[-1])
    plan = relaxed.first_plan(model, Deadline(None), 1e-4)
    assert plan is not None
    pays = highs.split_pays(model.prob, 1e-4)
    assert pays or not split
    assert [bool(m.parts) for m in made] == [False, pays]  # (1) whole, (2) split where the search's is
    assert set(plan) == {v.name for v in model.prob.variables()}
    assert violations(model.prob, plan) == []
    # a break it must catch: one unit count off its value breaks a row or its integrality
    n = model.periods[-1].sites[0].n[0].name
    broken = {**plan, n: plan[n] + 0.5}
    assert violations(model.prob, broken)


def solved(model: Model, gap: float) -> Any:
    result, decisions, _ = solve_objective(model, "highs", None, gap=gap)
    assert result.status.has_solution and decisions is not None
    return result


@pytest.mark.parametrize("seed", [0, 1])
def test_a_solve_from_the_first_plan_proves_the_gap_against_the_optimum(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    optimum = solved(phased(seed=seed), 0.0)
    assert optimum.status is SolveStatus.OPTIMAL
    made: list[dict[str, float] | None] = []
    first_plan = relaxed.first_plan

    def noted(model: Model, deadline: Deadline, gap: float) -> dict[str, float] | None:
        made.append(first_plan(model, deadline, gap))
        return made[-1]

    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    monkeypatch.setattr(relaxed, "first_plan", noted)
    gap = 1e-3
    result = solved(phased(seed=seed), gap)
    assert len(made) == 1 and made[0] is not None  # it was made, and the search started from it
    assert result.mip_gap is not None and result.mip_gap <= gap
    assert optimum.objective <= result.objective <= optimum.objective + gap * abs(result.objective) + 1e-6
    # at gap 0 it is made too (its MILPs within START_GAP), as HiGHS's start alone: the same optimum, proven
    gaps: list[float] = []
    starts: list[Any] = []
    run = relaxed._solve
    monkeypatch.setattr(relaxed, "_solve", lambda hm, d, gap, *a: gaps.append(gap) or run(hm, d, gap, *a))
    monkeypatch.setattr(relaxed, "search", lambda *a: pytest.fail("no lean search at gap 0"))
    solve = optimize_module.solve
    monkeypatch.setattr(optimize_module, "solve", lambda *a, **k: starts.append(k["start"]) or solve(*a, **k))
    at_zero = solved(phased(seed=seed), 0.0)
    assert at_zero.status is SolveStatus.OPTIMAL
    assert at_zero.objective == pytest.approx(optimum.objective, abs=1e-6)
    assert len(made) == 2 and made[1] is not None and gaps == [relaxed.START_GAP] * 2
    assert getattr(made[1], "lean", None) is None  # no lean copy made for a search that does not come
    assert starts == [made[1]]  # HiGHS's search started from it


def test_it_is_made_only_where_it_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    model = phased(4, 3)  # 12 site-periods
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 12)
    assert relaxed.pays(model, "highs", 1e-4) and relaxed.made_for(model, "highs")
    assert not relaxed.pays(model, "highs", 0.0)  # made, but HiGHS's search alone starts from it
    assert not relaxed.pays(model, "cbc", 1e-4) and not relaxed.made_for(model, "cbc")
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 13)
    assert not relaxed.pays(model, "highs", 1e-4) and not relaxed.made_for(model, "highs")
    catalog = load_portfolio(portfolio_specs(12))
    (scenario_id,) = catalog.scenarios
    single = build_model(catalog, scenario_id, start=False)
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    assert not relaxed.made_for(single, "highs")  # one period: not a phased model


@pytest.mark.parametrize("termination", [Termination.TIME_LIMIT, Termination.INTERRUPT])
def test_a_gap_0_search_stopped_before_it_took_its_start_gives_the_first_plan(
    termination: Termination, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At gap 0 the first plan is HiGHS's start; a search that ends with no plan at all (the time limit or
    Ctrl-C came before HiGHS read its start) gives the first plan, unproven, and says what stopped it."""
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    model = phased()
    expected = relaxed.first_plan(phased(), Deadline(None), 0.0)
    assert expected is not None
    none = SolveResult(SolveStatus.NO_SOLUTION, "HiGHS", "", None, None, termination)
    monkeypatch.setattr(optimize_module, "solve", lambda *a, **k: none)
    result, decisions, _ = solve_objective(model, "highs", None)
    assert result.status is SolveStatus.FEASIBLE and result.termination is termination
    assert result.mip_gap is None and decisions is not None
    assert all(v.varValue == expected[v.name] for v in model.prob.variables())
    # a search that proves there is no plan is not overruled (it cannot, with a plan, but it is what it says)
    infeasible = SolveResult(SolveStatus.INFEASIBLE, "HiGHS", "", None, None, Termination.INFEASIBLE)
    monkeypatch.setattr(optimize_module, "solve", lambda *a, **k: infeasible)
    assert solve_objective(phased(), "highs", None)[0].status is SolveStatus.INFEASIBLE


def test_the_deadline_during_it_ends_the_solve_with_its_plan_unproven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = phased()
    expected = relaxed.first_plan(phased(), Deadline(None), 1e-4)
    assert expected is not None
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    now = [0.0]
    deadline = Deadline(3600.0, clock=lambda: now[0])

    def spent(model: Model, deadline_: Deadline, gap: float) -> dict[str, float] | None:
        now[0] = 3601.0  # the time ran out meanwhile
        return expected

    monkeypatch.setattr(relaxed, "first_plan", spent)
    result, decisions, _ = solve_objective(model, "highs", deadline, gap=1e-4)
    assert result.status is SolveStatus.FEASIBLE and result.termination is Termination.TIME_LIMIT
    assert result.mip_gap is None and decisions is not None
    assert result.objective == pytest.approx(pulp.value(model.prob.objective))
    assert all(v.varValue == expected[v.name] for v in model.prob.variables())


def test_ctrl_c_during_it_keeps_its_plan_or_says_there_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    for plan_found in (True, False):
        model = phased()
        expected = relaxed.first_plan(phased(), Deadline(None), 1e-4) if plan_found else None

        def stopped(model: Model, deadline: Deadline, gap: float, expected: Any = expected) -> Any:
            session = progress.current()
            assert session is not None
            session.interrupted = True
            return expected

        monkeypatch.setattr(relaxed, "first_plan", stopped)
        with progress.watch(keep_best_on_interrupt=True):
            result, decisions, _ = solve_objective(model, "highs", None, gap=1e-4)
        assert result.termination is Termination.INTERRUPT
        assert (decisions is not None) is plan_found
        assert result.status is (SolveStatus.FEASIBLE if plan_found else SolveStatus.NO_SOLUTION)


def test_the_progress_line_names_both_milps_under_the_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    seen: list[progress.Progress] = []
    with progress.watch(seen.append), progress.stage("solving phased-5-3"):
        solve_objective(phased(), "highs", None, gap=1e-4)
    stages = {p.stage for p in seen}
    assert {"solving phased-5-3, a first plan: counts relaxed",
            "solving phased-5-3, a first plan: its fabric fixed"} <= stages
    # the relaxed MILP's figures are not a plan's: none is shown as one
    assert all(p.incumbent is None or p.unit == "" for p in seen if "first plan" in p.stage)


def highs_no_limit() -> int:
    return int(highs.new_highs().getOptionValue("mip_max_nodes")[1])


def alone(model: Model, plan: dict[str, float], gap: float, options: dict[str, Any] | None) -> Any:
    """One of `relaxed.search`'s two searches run by itself: its result and its plan's values."""
    pending = start_highs(model.prob, None, plan, gap, totals=unit_totals(model), options=options)
    highs.run(pending.model.h)
    result = finish(pending)
    return result, {v.name: v.varValue for v in model.prob.variables()}


def note_finished(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The node limit of each search whose answer `relaxed.search` reads (`finish`), in order."""
    finished: list[int] = []

    def noted(pending: Any) -> Any:
        finished.append(pending.model.h.getOptionValue("mip_max_nodes")[1])
        return finish(pending)

    monkeypatch.setattr(relaxed, "finish", noted)
    return finished


def whole_plan(model: Model, plan: relaxed.FirstPlan, gap: float) -> dict[str, float]:
    """(2) solved again on a whole copy: HiGHS's own search's start when `plan` came from a split one."""
    if not plan.split:
        return plan
    copy = relaxed._fabric_fixed(model, plan.binaries, plan.fixed, False)
    assert copy is not None
    values = relaxed._solve(copy, Deadline(None), gap)
    assert values is not None
    return {v.name: x for v, x in zip(copy.columns, values, strict=True)}


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("cores", [2, 1])
@pytest.mark.parametrize("lean_nodes", [10**6, 0])
def test_the_search_from_it_answers_as_the_lean_search_alone_or_as_the_full_one_alone(
    lean_nodes: int, cores: int, split: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(highs, "TOGETHER_THREADS", cores)  # one core: one search after the other
    monkeypatch.setattr(highs, "SPLIT_MIN_WORK", 0.0 if split else float("inf"))
    gap = 1e-3
    model = phased(seed=1)
    options = {**relaxed.LEAN_SEARCH, "mip_max_nodes": lean_nodes}
    monkeypatch.setattr(relaxed, "LEAN_SEARCH", options)  # before the plan: its copy is made with it
    plan = relaxed.first_plan(model, Deadline(None), gap)
    assert plan is not None and plan.split is split
    lean, lean_plan = alone(model, plan, gap, options)  # the lean search from the plan
    full, full_plan = alone(model, whole_plan(model, plan, gap), gap, None)  # split: a start of its own
    assert full.status is SolveStatus.FEASIBLE and full.mip_gap is not None and full.mip_gap <= gap
    # with 0 nodes the lean search stops before its root: not proven, and so not the answer
    proven = lean.status is SolveStatus.FEASIBLE and lean.termination is Termination.OPTIMAL
    assert proven is (lean_nodes > 0)
    finished = note_finished(monkeypatch)
    result = relaxed.search(model, Deadline(None), plan, gap)
    assert finished == [lean_nodes if lean_nodes else highs_no_limit()]
    expected, expected_plan = (lean, lean_plan) if lean_nodes else (full, full_plan)
    assert result.mip_gap is not None and result.mip_gap <= gap
    assert result.objective == expected.objective
    assert {v.name: v.varValue for v in model.prob.variables()} == expected_plan
    assert violations(model.prob, expected_plan) == []


def ctrl_c_in_wait(monkeypatch: pytest.MonkeyPatch, begun: Any = None, stopped: Any = None) -> None:
    """Ctrl-C at the first `Background.wait`, as it acts there: every solve stopped, then the session told
    (after `begun` is set, if given; `stopped` is set once the solves are told to stop)."""
    wait = highs.Background.wait

    def ctrl_c(self: highs.Background, jobs: list[tuple[Any, Any]]) -> None:
        if begun is not None:
            assert begun.wait(60)
        self.stop()
        if stopped is not None:
            stopped.set()
        wait(self, jobs)
        session = progress.current()
        assert session is not None
        session.interrupted = True

    monkeypatch.setattr(highs.Background, "wait", ctrl_c)


def test_ctrl_c_during_the_search_from_it_keeps_the_full_searchs_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(highs, "SPLIT_MIN_WORK", float("inf"))  # both searches from the plan (split: below)
    gap = 1e-3
    model = phased(seed=1)
    plan = relaxed.first_plan(model, Deadline(None), gap)
    assert plan is not None and not plan.split
    ctrl_c_in_wait(monkeypatch)  # before either search ends
    finished = note_finished(monkeypatch)
    with progress.watch(keep_best_on_interrupt=True):
        result = relaxed.search(model, Deadline(None), plan, gap)
    assert finished == [highs_no_limit()]  # HiGHS's own search, never the lean one stopped unproven
    assert result.status is SolveStatus.FEASIBLE and result.termination is Termination.INTERRUPT
    assert violations(model.prob, {v.name: v.varValue for v in model.prob.variables()}) == []


@pytest.mark.parametrize("split", [False, True])
def test_on_one_core_the_second_search_has_what_the_first_left_of_the_time(
    split: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(highs, "TOGETHER_THREADS", 1)
    monkeypatch.setattr(highs, "SPLIT_MIN_WORK", 0.0 if split else float("inf"))
    monkeypatch.setattr(relaxed, "LEAN_SEARCH", {**relaxed.LEAN_SEARCH, "mip_max_nodes": 0})  # not proven
    model = phased(seed=1)
    plan = relaxed.first_plan(model, Deadline(None), 1e-3)
    assert plan is not None
    now = [0.0]
    limits: list[float] = []
    run = highs.run

    def timed(h: Any) -> None:
        limits.append(h.getOptionValue("time_limit")[1])
        run(h)
        now[0] += 1000.0  # each search took 1,000 s of the hour

    monkeypatch.setattr(highs, "run", timed)
    result = relaxed.search(model, Deadline(3600.0, clock=lambda: now[0]), plan, 1e-3)
    # split: (2) again on a whole copy, with its share of what is left, then HiGHS's search with the rest
    expected = [3600.0, 2600.0 * relaxed.SHARE, 1600.0] if split else [3600.0, 2600.0]
    assert limits == [pytest.approx(x) for x in expected]
    assert result.mip_gap is not None and result.mip_gap <= 1e-3


def test_ctrl_c_before_the_full_search_began_keeps_the_lean_searchs_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(highs, "TOGETHER_THREADS", 1)  # the lean search, then (2) again: Ctrl-C there
    monkeypatch.setattr(highs, "SPLIT_MIN_WORK", 0.0)
    monkeypatch.setattr(relaxed, "LEAN_SEARCH", {**relaxed.LEAN_SEARCH, "mip_max_nodes": 0})  # not proven
    model = phased(seed=1)
    plan = relaxed.first_plan(model, Deadline(None), 1e-3)
    assert plan is not None and plan.split

    def ctrl_c(*_args: Any) -> None:
        session = progress.current()
        assert session is not None
        session.interrupted = True

    monkeypatch.setattr(relaxed, "_solve", ctrl_c)
    finished = note_finished(monkeypatch)
    with progress.watch(keep_best_on_interrupt=True):
        result = relaxed.search(model, Deadline(None), plan, 1e-3)
    assert finished == [highs_no_limit(), 0]  # HiGHS's search had no plan: the lean one's is kept
    assert result.status is SolveStatus.FEASIBLE
    assert result.termination is Termination.INTERRUPT  # what stopped the whole, not the lean one's nodes
    values = {v.name: v.varValue for v in model.prob.variables()}
    assert violations(model.prob, values) == []
    assert result.objective == pytest.approx(sum(v.varValue * c for v, c in model.prob.objective.items())
                                             + model.prob.objective.constant)


def split_on_two_cores(monkeypatch: pytest.MonkeyPatch, lean_nodes: int | None = None
                       ) -> tuple[Model, relaxed.FirstPlan]:
    """A model and its first plan made on a split copy, the searches to run on two cores; `lean_nodes`:
    the lean search's node limit (set before the plan, which makes its copy)."""
    monkeypatch.setattr(highs, "TOGETHER_THREADS", 2)
    monkeypatch.setattr(highs, "SPLIT_MIN_WORK", 0.0)
    if lean_nodes is not None:
        monkeypatch.setattr(relaxed, "LEAN_SEARCH", {**relaxed.LEAN_SEARCH, "mip_max_nodes": lean_nodes})
    model = phased(seed=1)
    plan = relaxed.first_plan(model, Deadline(None), 1e-3)
    assert plan is not None and plan.split
    return model, plan


def test_on_two_cores_ctrl_c_while_the_whole_copy_runs_keeps_the_lean_searchs_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    model, plan = split_on_two_cores(monkeypatch)
    begun, stopped = threading.Event(), threading.Event()
    solve = relaxed._solve

    def held(*args: Any) -> Any:  # (2) again, on HiGHS's search's thread: held until Ctrl-C has come
        begun.set()
        assert stopped.wait(60)
        return solve(*args)

    monkeypatch.setattr(relaxed, "_solve", held)
    submit = highs.Background.submit

    assert plan.lean is not None
    lean = plan.lean.h

    def late(self: highs.Background, h: Any, *args: Any) -> Any:  # the lean search (its copy made ahead,
        if h is not lean:  # it could prove before Ctrl-C): it begins once the solves were told to stop
            return submit(self, h, *args)
        return submit(self, h, False, lambda: stopped.wait(60) and h.run())

    monkeypatch.setattr(highs.Background, "submit", late)
    ctrl_c_in_wait(monkeypatch, begun, stopped)
    finished = note_finished(monkeypatch)
    with progress.watch(keep_best_on_interrupt=True):
        result = relaxed.search(model, Deadline(None), plan, 1e-3)
    assert finished == [highs_no_limit(), relaxed.LEAN_NODES]  # HiGHS's search never began: the lean one's
    assert result.status is SolveStatus.FEASIBLE and result.termination is Termination.INTERRUPT
    assert violations(model.prob, {v.name: v.varValue for v in model.prob.variables()}) == []


def test_while_the_whole_copy_runs_the_progress_line_shows_the_plan_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    model, plan = split_on_two_cores(monkeypatch, lean_nodes=0)  # the lean search unproven
    solve = relaxed._solve

    def slow(*args: Any) -> Any:  # (2) again, on HiGHS's search's thread: long enough to be reported
        time.sleep(10 * highs.PROGRESS_STEP_S)
        return solve(*args)

    monkeypatch.setattr(relaxed, "_solve", slow)
    seen: list[progress.Progress] = []
    with progress.watch(seen.append), progress.stage("solving"):
        relaxed.search(model, Deadline(None), plan, 1e-3)
    held = sum(c * plan[v.name] for v, c in model.prob.objective.items())  # HiGHS's figures: no constant
    during = seen[1:]  # after the stage's own first line
    assert during and during[0].incumbent == pytest.approx(held)  # not "no plan yet": the first plan is held


# --- alternatives of a large phased model: each from a first plan of its own -------------------------------


def test_the_search_starts_from_the_cheaper_of_the_first_plan_and_a_plan_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An alternative's MILP is given an earlier alternative's plan (`warm`); the first plan is made anyway
    and the search starts from whichever of the two costs less."""
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    gap = 1e-3
    model = phased(seed=1)
    first = relaxed.first_plan(model, Deadline(None), gap)
    assert first is not None
    exact = solve_objective(model, "highs", None)[0]  # gap 0: the optimum, on the model's variables
    optimum = {v.name: float(v.varValue) for v in model.prob.variables()}
    assert exact.objective is not None
    assert relaxed._objective(model, optimum) < relaxed._objective(model, first)  # the given plan is cheaper
    dear = {**optimum}
    for v, c in model.prob.objective.items():  # a plan as dear as can be: not a plan, only a price to beat
        dear[v.name] = v.upBound if c > 0 and v.upBound is not None else optimum[v.name]
    started: list[Any] = []
    search = relaxed.search

    def noted(model: Model, deadline: Deadline, plan: dict[str, float], gap: float) -> Any:
        started.append(plan)
        return search(model, deadline, plan, gap)

    monkeypatch.setattr(relaxed, "search", noted)
    for warm in (optimum, dear, None):
        solve_objective(model, "highs", None, gap=gap, warm=warm)
    assert started[0] == optimum and not started[0].split  # the plan given (with the first plan's copies)
    assert started[1] != dear and started[1] == started[2]  # the first plan, as with no plan given


def test_a_large_phased_models_alternatives_each_come_from_a_first_plan_within_their_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Solved in turn, not in rounds of HiGHS's searches (nothing begun ahead either): each alternative's
    MILP makes its first plan and searches from it, and each is within its gap of the model without that
    choice solved to optimality."""
    from trnplan.optimize import alternatives, optimize, solve

    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    catalog = load_portfolio(phased_portfolio_specs(5, 3, 1))
    (scenario_id,) = catalog.scenarios
    made: list[int] = []
    first_plan = relaxed.first_plan

    def counted(*args: Any) -> Any:
        made.append(1)
        return first_plan(*args)

    def never(*args: Any) -> Any:
        raise AssertionError("a round of alternatives at once")

    import trnplan.optimize as optimize_pkg

    begun: list[Any] = []
    begin_ahead = optimize_pkg.begin_ahead

    def noted(*args: Any) -> Any:
        begun.append(begin_ahead(*args))
        return begun[-1]

    monkeypatch.setattr(relaxed, "first_plan", counted)
    monkeypatch.setattr(alternatives, "_in_rounds", never)
    monkeypatch.setattr(optimize_pkg, "begin_ahead", noted)
    stages: list[str] = []
    with progress.watch(lambda p: stages.append(p.stage)):
        solution = optimize(catalog, scenario_id, alternatives=2, gap=1e-4)
    assert begun == [None]  # the plan's search has both cores
    solved = {s.split(" (")[0] for s in stages if s.startswith("alternative ")}
    assert len(solution.alternatives) == 2 and all(a.decisions for a in solution.alternatives)
    assert len(made) == 1 + len(solved)  # the plan's, and one per alternative solved
    names = {f"{kind} {item}": (kind, item) for kind, item in solution.decisions.chosen_items()}
    for alt in solution.alternatives:
        model = build_model(catalog, scenario_id, start=False)
        set_objective(model, model.scenario.objective)
        alternatives._exclude(model, *names[alt.without])
        exact = solve(model.prob, "highs", None)
        assert exact.status is SolveStatus.OPTIMAL and exact.objective is not None
        assert alt.result.objective is not None
        assert exact.objective - 1e-6 <= alt.result.objective <= exact.objective + 1e-4 * alt.result.objective
