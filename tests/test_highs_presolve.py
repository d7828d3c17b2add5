"""HiGHS 1.16.0's presolve has called a feasible MILP infeasible, and trnplan acts on "infeasible": a
pricing MILP's mode fixed off, a capacity cut of 0, a scenario reported as having no plan. The fixture is
such a MILP (a 200-site portfolio's site block with its reduced-cost row and a demand row at a
threshold, written by HiGHS) and a plan of it; `confirm_infeasible` asks HiGHS again with presolve off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

highspy = pytest.importorskip("highspy")
np = pytest.importorskip("numpy")

from trnplan.optimize.accelerate.columns import Coupling, Pricing, _price  # noqa: E402
from trnplan.optimize.solve import confirm_infeasible  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "highs" / "presolve_infeasible.mps"
POINT = json.loads(FIXTURE.with_suffix(".point.json").read_text())


def _read() -> Any:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.readModel(str(FIXTURE))
    return h


def _violation(h: Any, x: list[float]) -> float:
    """The largest bound, row or integrality violation of x in h's model, computed here (no HiGHS)."""
    lp = h.getLp()
    a = lp.a_matrix_
    start, index, value = list(a.start_), list(a.index_), list(a.value_)
    activity = [0.0] * lp.num_row_
    for j in range(lp.num_col_):
        for k in range(start[j], start[j + 1]):
            activity[index[k]] += value[k] * x[j]
    worst = 0.0
    for j in range(lp.num_col_):
        worst = max(worst, lp.col_lower_[j] - x[j], x[j] - lp.col_upper_[j])
    for i, act in enumerate(activity):
        scale = max(1.0, abs(lp.row_lower_[i]) if lp.row_lower_[i] > -1e300 else 0.0,
                    abs(lp.row_upper_[i]) if lp.row_upper_[i] < 1e300 else 0.0)
        worst = max(worst, (lp.row_lower_[i] - act) / scale, (act - lp.row_upper_[i]) / scale)
    integer = [j for j, kind in enumerate(lp.integrality_) if kind == highspy.HighsVarType.kInteger]
    return max([worst] + [abs(x[j] - round(x[j])) for j in integer])


def test_the_fixture_has_a_plan():
    h = _read()
    assert len(POINT) == h.getNumCol()
    assert _violation(h, POINT) <= 1e-9


def test_an_infeasible_is_asked_again_without_presolve():
    h = _read()
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kInfeasible:
        pytest.skip("this HiGHS presolves the fixture right")  # the check below would not be exercised
    assert confirm_infeasible(h)
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    x = list(h.getSolution().col_value)
    assert _violation(h, x) <= 1e-6
    cost = list(h.getLp().col_cost_)
    point_cost = sum(c * v for c, v in zip(cost, POINT, strict=True))
    assert h.getInfo().objective_function_value <= point_cost + 1e-6
    assert h.getOptionValue("presolve") in ("choose", (highspy.HighsStatus.kOk, "choose"))


def test_other_outcomes_are_taken_as_they_are():
    h = _read()
    h.changeRowBounds(h.getNumRow() - 1, -highspy.kHighsInf, highspy.kHighsInf)  # no demand threshold
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert not confirm_infeasible(h, lambda _h: pytest.fail("ran again"))


def test_pricing_does_not_fix_off_a_mode_on_a_wrong_infeasible():
    """_price's bound of inf fixes a mode off (start.fix_off): it must come from HiGHS twice."""
    h = _read()
    cost = list(h.getLp().col_cost_)
    pricing = Pricing(block=None, highs=h, cost=cost)  # type: ignore[arg-type]  # _price needs neither
    priced = _price(pricing, 0, Coupling([], [], [], []), [])
    assert priced is not None
    bound, values = priced
    point_cost = sum(c * v for c, v in zip(cost, POINT, strict=True))
    assert bound <= point_cost + 1e-6
    assert values and _violation(h, values) <= 1e-6


def _as_pulp(h: Any) -> Any:
    """The fixture as a PuLP problem, columns and rows in the file's order."""
    import pulp

    lp = h.getLp()
    a = lp.a_matrix_
    prob = pulp.LpProblem("fixture", pulp.LpMinimize)
    xs = []
    for j in range(lp.num_col_):
        lo, up = lp.col_lower_[j], lp.col_upper_[j]
        integer = lp.integrality_[j] == highspy.HighsVarType.kInteger
        kind = pulp.LpInteger if integer else pulp.LpContinuous
        lower, upper = (None if lo < -1e300 else lo), (None if up > 1e300 else up)
        xs.append(prob.add_variable(f"c{j:03d}", lower, upper, kind))
    prob += pulp.lpSum(c * x for c, x in zip(lp.col_cost_, xs, strict=True))
    rows: list[list[tuple[Any, float]]] = [[] for _ in range(lp.num_row_)]
    start, index, value = list(a.start_), list(a.index_), list(a.value_)
    for j in range(lp.num_col_):
        for k in range(start[j], start[j + 1]):
            rows[index[k]].append((xs[j], value[k]))
    for i, terms in enumerate(rows):
        expr = pulp.LpAffineExpression(terms)
        if lp.row_lower_[i] > -1e300:
            prob += expr >= lp.row_lower_[i], f"r{i:03d}l"
        if lp.row_upper_[i] < 1e300:
            prob += expr <= lp.row_upper_[i], f"r{i:03d}u"
    return prob


def test_solve_does_not_report_no_plan_on_presolve_alone(monkeypatch):
    import importlib

    solve_module = importlib.import_module("trnplan.optimize.solve")
    h = _read()
    point_cost = sum(c * v for c, v in zip(h.getLp().col_cost_, POINT, strict=True))
    result = solve_module.solve(_as_pulp(h), "highs", 60)
    assert result.status is solve_module.SolveStatus.OPTIMAL
    assert result.objective is not None and result.objective <= point_cost + 1e-6
    monkeypatch.setattr(solve_module, "confirm_infeasible", lambda h, rerun=None: False)
    unchecked = solve_module.solve(_as_pulp(h), "highs", 60)
    if unchecked.status is solve_module.SolveStatus.OPTIMAL:
        pytest.skip("this HiGHS presolves the fixture right through PuLP")
    assert unchecked.status is solve_module.SolveStatus.INFEASIBLE  # what the re-check is for
