"""Wide integer columns given to HiGHS as two (`HighsModel(split=True)`): the same problem, read back whole.

x in [0, u] goes to HiGHS as B a + b. On random small MILPs (covering and packing rows, wide and narrow
integers, a continuous column) the split model and the plain one reach the same status and optimum, and
the values read back are whole, within their bounds and keep every row. A start and extra rows speak of x
and reach its parts. The exhaustive-enumeration property tests solve with the split on at any size
and gap (`test_property_enumeration.machinery_on`).
"""

from __future__ import annotations

import math
import os
from typing import Any

import highspy
import pulp
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import trnplan.optimize.highs as highs
from trnplan.optimize.highs import HighsModel, Total, domain_work, split_pays
from trnplan.optimize.solve import start_highs

EXAMPLES = int(os.environ.get("TRNPLAN_PROPERTY_EXAMPLES", "150"))
FEASIBILITY = 1e-6  # HiGHS's mip_feasibility_tolerance (its default, which trnplan keeps)


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split every integer column with 2 values or more above 0 (small problems have no wide ones)."""
    monkeypatch.setattr(highs, "WIDE_INTEGER", 2)


@st.composite
def milps(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 5))
    uppers = [draw(st.sampled_from([1, 2, 3, 7, 15, 16, 17, 99, 218, 1500])) for _ in range(n)]
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        coefs = [draw(st.integers(0, 9)) for _ in range(n + 1)]  # the last: the continuous column's
        sense = draw(st.sampled_from([">=", "<="]))
        rhs = draw(st.integers(0, 4000))
        rows.append((coefs, sense, rhs))
    costs = [draw(st.integers(-5, 20)) for _ in range(n + 1)]
    return {"uppers": uppers, "rows": rows, "costs": costs}


def problem(milp: dict[str, Any]) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    prob = pulp.LpProblem("split", pulp.LpMinimize)
    xs = [pulp.LpVariable(f"x{i}", 0, u, pulp.LpInteger) for i, u in enumerate(milp["uppers"])]
    xs.append(pulp.LpVariable("c", 0, 50))
    prob += pulp.lpSum(c * x for c, x in zip(milp["costs"], xs, strict=True)) + 0.5 * xs[-1]
    for k, (coefs, sense, rhs) in enumerate(milp["rows"]):
        expr = pulp.lpSum(c * x for c, x in zip(coefs, xs, strict=True))
        prob += (expr >= rhs if sense == ">=" else expr <= rhs), f"r{k}"
    return prob, xs


def solved(prob: pulp.LpProblem, split: bool) -> tuple[Any, float | None, HighsModel]:
    hm = HighsModel(prob, split=split)
    hm.set_options(mip_rel_gap=0.0, mip_abs_gap=1e-9)
    hm.h.run()
    status = hm.h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        return status, None, hm
    hm.read_back()
    return status, float(hm.h.getInfo().objective_function_value), hm


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
@given(milps())
# HiGHS meets each row to within its feasibility tolerance, 1e-6: here the split copy's continuous column
# is 0.4999996 where the plain one's is 0.5 (9 x 7 + 2 c >= 64), 22.249999 against 22.25 (CI, 2026-12-04)
@example(milp={"uppers": [7, 1, 1, 1, 1], "rows": [([9, 0, 0, 0, 0, 2], ">=", 64)],
               "costs": [3, 0, 0, 0, 0, 2]})
def test_a_split_model_has_the_plain_ones_optimum_and_reads_back_whole(
    narrow: None, milp: dict[str, Any]
) -> None:
    prob, xs = problem(milp)
    plain_status, plain, _ = solved(prob, split=False)
    status, value, hm = solved(prob, split=True)
    held = {v.name for v in prob.variables()}  # a column in no row and without a cost is not in the problem
    assert hm.parts or all(u < 2 for x, u in zip(xs, milp["uppers"], strict=False) if x.name in held)
    assert status == plain_status
    if value is None:
        event("infeasible")
        return
    event("optimal")
    # each row may be short of its bound by HiGHS's tolerance, and a column with a cost of at most
    # sum |cost| (the continuous one's 0.5 with it) and a coefficient of at least 1 take up the difference
    slack = FEASIBILITY * len(milp["rows"]) * (0.5 + sum(abs(c) for c in milp["costs"]))
    assert plain is not None and math.isclose(value, plain, rel_tol=1e-9, abs_tol=slack)
    for x, u in zip(xs, milp["uppers"], strict=False):
        if x.name not in held:
            continue
        assert x.varValue is not None
        assert abs(x.varValue - round(x.varValue)) < 1e-6 and -1e-9 <= x.varValue <= u + 1e-6
    for coefs, sense, rhs in milp["rows"]:
        lhs = sum(c * (x.varValue or 0.0) for c, x in zip(coefs, xs, strict=True))
        assert (lhs >= rhs - 1e-6) if sense == ">=" else (lhs <= rhs + 1e-6)
    assert math.isclose(pulp.value(prob.objective), plain, rel_tol=1e-9, abs_tol=slack)


def test_the_parts_are_narrow_integers_and_the_variable_is_in_no_row(narrow: None) -> None:
    prob = pulp.LpProblem("p", pulp.LpMinimize)
    x = pulp.LpVariable("x", 0, 218, pulp.LpInteger)
    y = pulp.LpVariable("y", 0, 1, pulp.LpInteger)
    prob += 3 * x + 10 * y
    prob += x + 2 * y >= 150, "need"
    hm = HighsModel(prob, split=True)
    base, a, b = hm.parts["x"]
    assert base == 15 and "y" not in hm.parts  # ceil(sqrt(219)); a binary is never split
    lp = hm.h.getLp()
    assert [lp.integrality_[i] for i in (a, b)] == [highspy.HighsVarType.kInteger] * 2
    assert (lp.col_upper_[a], lp.col_upper_[b]) == (14, 14)  # 218 // 15, 15 - 1
    assert (lp.col_lower_[hm.col["x"]], lp.col_upper_[hm.col["x"]], lp.col_cost_[hm.col["x"]]) == (0, 0, 0)
    assert (lp.col_cost_[a], lp.col_cost_[b]) == (45, 3)
    assert hm.h.getNumRow() == 2  # "need" and 15 a + b <= 218 (14 x 15 + 14 = 224 would pass 218)
    hm.h.run()
    hm.read_back()
    assert x.varValue == pytest.approx(150) and hm.h.getInfo().objective_function_value == pytest.approx(450)


def test_a_start_and_an_extra_row_reach_the_parts(narrow: None) -> None:
    prob = pulp.LpProblem("p", pulp.LpMaximize)
    x = pulp.LpVariable("x", 0, 1000, pulp.LpInteger)
    prob += x
    prob += x <= 990, "cap"
    hm = HighsModel(prob, split=True)
    base, a, b = hm.parts["x"]

    class Recorder:
        def setSolution(self, n: int, index: Any, values: Any) -> None:  # noqa: N802 (highspy's name)
            self.given = dict(zip(index.tolist(), values.tolist(), strict=True))

    real, hm.h = hm.h, Recorder()
    hm.set_start({"x": 987.0})
    assert hm.h.given[a] * base + hm.h.given[b] == 987 and 0 <= hm.h.given[b] < base
    hm.h = real
    hm.add_rows([([("x", 1.0)], 977.0)])
    hm.h.run()
    hm.read_back()
    assert x.varValue == pytest.approx(977)


def test_only_a_model_wide_enough_and_solved_within_a_gap_is_split() -> None:
    prob = pulp.LpProblem("p", pulp.LpMinimize)
    xs = [pulp.LpVariable(f"x{i}", 0, 5000, pulp.LpInteger) for i in range(100)]
    prob += pulp.lpSum(xs)
    assert domain_work(prob) == 100 * 1024**2 / 2 and split_pays(prob, 1e-4)
    assert not split_pays(prob, 0.0)  # a proof of gap 0 is a tree search: x itself branches better
    assert not split_pays(pulp.LpProblem("q", pulp.LpMinimize), 1e-4)
    # ...unless it is given the unit totals to branch on, each of few members (on average)
    names = [x.name for x in xs]
    few_members = [Total(tuple(names[i:i + 50]), ()) for i in (0, 50)]
    many_members = [Total(tuple(names[:51]), ()), Total(tuple(names[51:]), ())]  # 51 + 49: 50 on average
    too_many = [Total(tuple(names[:60]), ()), Total(tuple(names[59:]), ())]  # 60 + 41
    assert split_pays(prob, 0.0, few_members) and split_pays(prob, 0.0, many_members)
    assert not split_pays(prob, 0.0, too_many) and not split_pays(prob, 0.0, [])
    assert not split_pays(pulp.LpProblem("q", pulp.LpMinimize), 0.0, few_members)  # nothing wide
    assert split_pays(prob, 1e-4, too_many)  # within a gap the totals are not given, and it splits anyway
    assert start_highs(prob, None, totals=few_members).model.parts
    assert not start_highs(prob, None, totals=too_many).model.parts
    assert start_highs(prob, None, gap=1e-4).model.parts and not start_highs(prob, None).model.parts
    few = pulp.LpProblem("few", pulp.LpMinimize)
    few += pulp.lpSum(pulp.LpVariable(f"y{i}", 0, 99, pulp.LpInteger) for i in range(100))
    assert domain_work(few) == 0  # 99 values above 0: not wide
