"""The frontier program (`trnplan.optimize.accelerate.frontier`) is exact: a proof of its own, so it is
checked against brute force, HiGHS's proof and by hand.

- Drawn worlds made single-demand min-TCO (the property test's worlds, their demand cut to one key, no
  caps, budgets or supply limits): with every piece of issue 17 forced on, the program proves each one
  (no fallback to HiGHS), its optimum equals brute-force enumeration and `check_plan` is clean. This is
  one of the switches tests/test_property_enumeration.py draws (`single_demand`).
- A generated 5-site portfolio: the program's plan and HiGHS's own proof agree to the cent, with the same
  decisions; run twice, the same plan; out of budget, HiGHS's search gives the same optimum.
- The quantum and the program by hand; Ctrl-C during the walk.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trnplan.optimize.build as model_module
from trnplan.catalog import Catalog
from trnplan.optimize import build_model, optimize, progress, solve_objective
from trnplan.optimize.accelerate import frontier
from trnplan.optimize.accelerate.columns import PRICE_THREADS
from trnplan.optimize.accelerate.frontier import Walk, program, quantum
from trnplan.optimize.solution import Solution, SolveStatus, Termination
from trnplan.specs.load import load_specs
from trnplan.testkit.portfolio import write_portfolio


def _portfolio(n: int, seed: int) -> tuple[Catalog, str]:
    with tempfile.TemporaryDirectory() as tmp:
        scenario_id = write_portfolio(n, Path(tmp), seed)
        return load_specs([tmp]), scenario_id


def _solve(catalog: Catalog, scenario_id: str) -> tuple[Any, Any]:
    model = build_model(catalog, scenario_id, start=True)
    result, decisions, _ = solve_objective(model, "highs", None)
    return result, decisions


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[frontier.Proof | None]:
    """What each attempt of the program gives, from now on in the test."""
    proofs: list[frontier.Proof | None] = []
    proved = frontier.prove
    monkeypatch.setattr(frontier, "prove", lambda *a: proofs.append(proved(*a)) or proofs[-1])
    return proofs


def test_program_agrees_with_highs_on_a_portfolio(monkeypatch: pytest.MonkeyPatch) -> None:
    """5 sites (seed 2: 476 walk MILPs): the same optimum to the cent and the same decisions as HiGHS's
    own proof of the same model; the same plan on a second run."""
    catalog, scenario_id = _portfolio(5, seed=2)
    monkeypatch.setattr(model_module, "START_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 10**6)
    highs, highs_decisions = _solve(catalog, scenario_id)
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "WALK_MILPS_PER_SITE", 10**4)
    monkeypatch.setattr(frontier, "WIDE_START", math.inf)
    proofs = _recorded(monkeypatch)
    runs = [_solve(catalog, scenario_id) for _ in range(2)]
    assert proofs and all(p is not None for p in proofs), "the program did not prove the portfolio"
    for result, decisions in runs:
        assert result.status.value == "optimal" and result.mip_gap == 0.0
        assert abs(result.objective - highs.objective) * 1e6 <= 0.01  # M USD: to the cent
        assert decisions == highs_decisions
    assert proofs[0] is not None and proofs[1] is not None and proofs[0].values == proofs[1].values


def test_out_of_budget_the_search_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog, scenario_id = _portfolio(5, seed=2)
    monkeypatch.setattr(model_module, "START_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "WALK_MILPS_PER_SITE", 2)
    proofs = _recorded(monkeypatch)
    result, _ = _solve(catalog, scenario_id)
    assert proofs == [None]
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 10**6)
    highs, _ = _solve(catalog, scenario_id)
    assert result.status.value == "optimal" and result.objective == pytest.approx(highs.objective, abs=1e-8)


def test_a_wide_start_is_left_to_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """G past WIDE_START first windows: no walk at all, and HiGHS's search proves the same optimum."""
    catalog, scenario_id = _portfolio(5, seed=2)
    monkeypatch.setattr(model_module, "START_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 10**6)
    highs, _ = _solve(catalog, scenario_id)
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "WIDE_START", 0.0)  # any G > 0 is wide
    walked: list[Any] = []
    monkeypatch.setattr(frontier, "_walk_all", lambda *a: walked.append(a) or False)
    proofs = _recorded(monkeypatch)
    result, _ = _solve(catalog, scenario_id)
    assert proofs == [None] and walked == []
    assert result.status.value == "optimal" and result.objective == pytest.approx(highs.objective, abs=1e-8)


def test_quantum() -> None:
    # 41.568 = 48 x 0.866, 83.136 = 48 x 1.732, 362.448 = 48 x 7.551; 320 brings it down to 0.016
    assert quantum([41.568, 83.136, 362.448]) == pytest.approx(0.048)
    assert quantum([41.568, 83.136, 362.448, 320.0]) == pytest.approx(0.016)
    assert quantum([8.0, 12.0]) == 4.0
    assert quantum([0.1234567]) is None  # more than six decimal digits: F cannot be counted exactly
    assert quantum([0.0]) is None


def _walk(points: list[tuple[int, float]], least: float = 0.0) -> Walk:
    return Walk(None, [], None, 0, least, [(f, c, [float(f)]) for f, c in points])


@given(st.integers(0, 12))
def test_program_by_hand(need: int) -> None:
    """Two sites: a = {0: 0, 3: 5, 5: 7}, b = {0: 0, 4: 6, 6: 10} (F: cost); the cheapest pair meeting
    `need`, against every pair."""
    a, b = _walk([(0, 0.0), (3, 5.0), (5, 7.0)]), _walk([(0, 0.0), (4, 6.0), (6, 10.0)])
    pairs = [
        (ca + cb, (i, j))
        for i, (fa, ca, _) in enumerate(a.points)
        for j, (fb, cb, _) in enumerate(b.points)
        if fa + fb >= need
    ]
    found = program([a, b], need, 0.0, 100.0)
    if not pairs:
        assert found is None
        return
    best = min(c for c, _ in pairs)
    assert found is not None and found[0] == best
    i, j = found[1]
    assert a.points[i][1] + b.points[j][1] == best and a.points[i][0] + b.points[j][0] >= need
    assert program([a, b], need, 0.0, best - 0.5) is None  # nothing at or under the bound handed in


def test_ctrl_c_stops_every_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the main thread waits stops every walk at its next MILP; re-raised without a
    session, noted in a session that keeps the best plan. A failed walk stops the others the same way."""
    import concurrent.futures
    import time

    seen: list[int] = []

    def run(walk: Walk, budget: frontier.Budget) -> bool:
        for step in range(10**5):  # a long walk: ends only when the budget says stop
            if not budget.take():
                seen.append(step)
                return False
            time.sleep(0.001)
            if walk.least < 0 and step == 5:
                return False  # this site's walk fails (an unproven MILP)
        raise AssertionError("the walk was not stopped")

    waited = concurrent.futures.wait

    def ctrl_c(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)  # the walks are under way
        raise KeyboardInterrupt

    monkeypatch.setattr(frontier, "_run", run)
    walks = [_walk([(0, 0.0)], least=float(i)) for i in range(3)]
    monkeypatch.setattr(concurrent.futures, "wait", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        frontier._walk_all(walks, frontier.Budget(10**9))
    assert len(seen) == min(PRICE_THREADS, 3)  # the running walks stopped; the one waiting never starts
    seen.clear()
    with progress.watch(keep_best_on_interrupt=True) as session:
        assert frontier._walk_all(walks, frontier.Budget(10**9)) is False
        assert session.interrupted
    monkeypatch.setattr(concurrent.futures, "wait", waited)
    seen.clear()
    failing = [_walk([(0, 0.0)], least=-1.0), *walks[1:]]
    assert frontier._walk_all(failing, frontier.Budget(10**9)) is False  # and promptly: no AssertionError
    assert seen


def test_ctrl_c_in_the_walk_keeps_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that keeps the best plan gets the start, marked unproven and interrupted."""
    catalog, scenario_id = _portfolio(5, seed=2)
    monkeypatch.setattr(model_module, "START_MIN_SITES", 0)
    monkeypatch.setattr(frontier, "FRONTIER_MIN_SITES", 0)

    def interrupted(*_args: Any) -> None:
        session = progress.current()
        assert session is not None
        session.interrupted = True

    monkeypatch.setattr(frontier, "prove", interrupted)
    with progress.watch(keep_best_on_interrupt=True), pytest.raises(progress.SearchInterrupted) as info:
        optimize(catalog, scenario_id, alternatives=0)
    solution = info.value.solution
    assert isinstance(solution, Solution) and solution.decisions.deployments
    assert solution.result.status is SolveStatus.FEASIBLE
    assert solution.result.termination is Termination.INTERRUPT and solution.result.mip_gap
