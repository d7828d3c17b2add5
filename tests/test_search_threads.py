"""A large phased model's search runs HiGHS's branch and bound on two workers (`highs.search_threads`),
which exchange what they found only at fixed points: the same nodes, bound and plan on every run, however
the machine's load times them. Everything else keeps one thread, and a thread that ran a two-thread
instance can run a one-thread one next (HiGHS refuses a thread count other than its scheduler's)."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from trnplan.optimize import alternatives, build_model, highs, optimize, set_objective, solve_objective
from trnplan.optimize.accelerate import relaxed
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solve import highs_copy
from trnplan.specs.load import load_specs
from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs

highspy = pytest.importorskip("highspy")


def _model(sites: int, quarters: int) -> Any:
    catalog = load_portfolio(phased_portfolio_specs(sites, quarters, 0))
    (scenario_id,) = catalog.scenarios
    model = build_model(catalog, scenario_id, start=False)
    set_objective(model, model.scenario.objective)
    return model


def _threads(h: Any) -> int:
    return int(h.getOptionValue("threads")[1])


def _shape(sites: int, periods: int, multi: bool = True) -> Any:
    return SimpleNamespace(site_periods=sites * periods, multi=multi)


def test_only_large_phased_models_searched_by_highs_get_two_threads() -> None:
    least = highs.PARALLEL_MIN_SITE_PERIODS
    assert highs.SEARCH_THREADS > 1
    assert highs.search_threads(_shape(10, least // 10), "highs") == highs.SEARCH_THREADS
    assert highs.search_threads(_shape(10, least // 10 - 1), "highs") == 1
    assert highs.search_threads(_shape(least, 1, multi=False), "highs") == 1  # many small MILPs
    assert highs.search_threads(_shape(10, least // 10), "cbc") == 1


def test_nothing_is_begun_ahead_beside_a_two_thread_search_on_two_cores(monkeypatch) -> None:
    """Alternatives begun ahead run on the cores the plan's search leaves free: none beside a search on
    two threads on a two-core machine (fails if `begin_ahead` counts one core for the plan)."""
    monkeypatch.setattr(alternatives.os, "cpu_count", lambda: 2)
    model = build_model(load_specs(["specs"]), "trn3-life")
    ahead = alternatives.begin_ahead(model, 3, "highs", Deadline(None), 1e-4)
    assert ahead is not None and ahead.jobs  # one thread for the plan: a guess begun beside it
    ahead.close()
    monkeypatch.setattr(highs, "PARALLEL_MIN_SITE_PERIODS", 6)  # trn3-life's 12 site-periods: large
    assert alternatives.begin_ahead(model, 3, "highs", Deadline(None), 1e-4) is None
    monkeypatch.setattr(alternatives.os, "cpu_count", lambda: 3)
    ahead = alternatives.begin_ahead(model, 3, "highs", Deadline(None), 1e-4)
    assert ahead is not None and ahead.jobs
    ahead.close()


def test_instances_made_in_a_threads_block_ask_for_its_count_and_one_outside() -> None:
    assert _threads(highs.new_highs()) == 1
    with highs.threads(2):
        assert _threads(highs.new_highs()) == 2
        with highs.threads(1):
            assert _threads(highs.new_highs()) == 1
        assert _threads(highs.new_highs()) == 2
    assert _threads(highs.new_highs()) == 1


def _searched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread counts of the HiGHS instances `highs.run` and `highs.run_here` run from now on."""
    seen: list[int] = []
    for name in ("run", "run_here"):
        real = getattr(highs, name)

        def spy(h: Any, real: Any = real) -> Any:
            seen.append(_threads(h))
            return real(h)

        monkeypatch.setattr(highs, name, spy)
    return seen


def test_a_large_phased_models_search_has_two_threads_and_the_shipped_scenarios_one(monkeypatch) -> None:
    seen = _searched(monkeypatch)
    plan = optimize(load_specs(["specs"]), "trn3-life", alternatives=0)  # 3 sites x 4 periods
    assert plan.result.status.value == "optimal"
    assert seen and set(seen) == {1}
    seen.clear()
    monkeypatch.setattr(highs, "PARALLEL_MIN_SITE_PERIODS", 6)  # 3 sites x 2 quarters counts as large
    model = _model(3, 2)
    result, _decisions, _ = solve_objective(model, "highs", None)
    assert result.status.value == "optimal"
    assert seen and set(seen) == {highs.SEARCH_THREADS}  # fails without the block in solve_objective


def test_the_first_plans_milps_and_both_searches_have_two_threads(monkeypatch) -> None:
    seen = _searched(monkeypatch)
    monkeypatch.setattr(highs, "PARALLEL_MIN_SITE_PERIODS", 6)
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 6)
    made: list[int] = []
    real_solve = relaxed._solve

    def solve(hm: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(_threads(hm.h))
        return real_solve(hm, *args, **kwargs)

    monkeypatch.setattr(relaxed, "_solve", solve)
    model = _model(3, 2)
    result, _decisions, _ = solve_objective(model, "highs", None, gap=1e-4)
    assert result.status.has_solution
    assert len(made) >= 2 and set(made) == {highs.SEARCH_THREADS}  # (1) and (2), made on two threads
    assert seen and set(seen) == {highs.SEARCH_THREADS}


def _search(model: Any, nodes: int | None = None) -> tuple[Any, ...]:
    with highs.threads(2):
        copy = highs_copy(model.prob, 0.0)
    if nodes is not None:
        copy.set_options(mip_max_nodes=nodes)
    highs.run_here(copy.h)  # (`highs.run`'s way, highspy's startSolve, runs one solve at a time)
    info = copy.h.getInfo()
    return (str(copy.h.getModelStatus()), info.mip_node_count, info.objective_function_value,
            info.mip_dual_bound, tuple(copy.h.getSolution().col_value))


@pytest.mark.slow  # about 15 s each
@pytest.mark.parametrize(("sites", "quarters", "nodes"), [(10, 2, None), (5, 4, 200)])
def test_a_two_thread_search_is_the_same_alone_and_beside_another(sites: int, quarters: int,
                                                                 nodes: int | None) -> None:
    """The same search three times, the last with others running beside it (other timings): the same
    nodes, bound, objective and plan, to the bit; with a node limit (5 x 4 proves in about 1,100 nodes),
    it stops at the same node."""
    model = _model(sites, quarters)
    alone = _search(model, nodes)
    assert alone[1] > 1  # a tree (10 x 2: about 40 nodes), so the two workers share it
    assert alone[0] == str(highspy.HighsModelStatus.kOptimal if nodes is None
                           else highspy.HighsModelStatus.kSolutionLimit)
    assert _search(model, nodes) == alone
    other = _model(10, 2)
    others: list[tuple[Any, ...]] = []
    beside = threading.Thread(target=lambda: others.extend(_search(other) for _ in range(3)))
    beside.start()
    try:
        assert _search(model, nodes) == alone
    finally:
        beside.join()
    assert len(others) == 3 and len(set(others)) == 1  # its own searches agree too


def _copies(model: Any, counts: list[int]) -> list[Any]:
    out = []
    for count in counts:
        with highs.threads(count):
            out.append(highs_copy(model.prob, 0.0).h)
    return out


def test_a_thread_runs_one_and_two_thread_instances_in_any_order() -> None:
    """HiGHS refuses a run whose thread count is not that of its thread's scheduler (made by the first
    run there); `run_here` gives a two-thread instance a scheduler of its own and drops it after (fails
    without it: the second run says kError)."""
    model = _model(3, 2)
    for h in _copies(model, [1, 2, 1, 2]):  # this thread
        assert highs.run_here(h) == highspy.HighsStatus.kOk
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    with highs.Background(1) as background:  # one pool thread runs them in turn
        jobs = [(h, background.submit(h)) for h in _copies(model, [1, 2, 1])]
        background.wait(jobs)
    assert [f.result() for _h, f in jobs] == [highspy.HighsStatus.kOk] * 3
    assert all(h.getModelStatus() == highspy.HighsModelStatus.kOptimal for h, _f in jobs)
