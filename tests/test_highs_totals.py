"""A phased model's unit totals (`build.unit_totals`, `HighsModel.add_totals`): per period, each kind of unit
summed over the sites as an integer column of HiGHS's copy, in the demand rows in the units' place.

The same problem: each total's members add the same to every demand row it stands in, a total follows
the period before's only where each of that one's units grows into one of its own, and the optimum with
the totals is the optimum without them. They are given to HiGHS for a proof of gap 0 alone. The
exhaustive-enumeration property tests solve phased worlds with them at every gap
(`test_property_enumeration.machinery_on`).
"""

from __future__ import annotations

from typing import Any

import pytest

import trnplan.optimize.highs as highs
from trnplan.optimize import build_model, set_objective
from trnplan.optimize.build import unit_totals
from trnplan.optimize.highs import Total, totals_pay
from trnplan.optimize.model import Model
from trnplan.optimize.solve import solve, start_highs
from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs, portfolio_specs


def phased(sites: int = 3, periods: int = 3) -> Model:
    catalog = load_portfolio(phased_portfolio_specs(sites, periods))
    (scenario_id,) = catalog.scenarios
    model = build_model(catalog, scenario_id, start=False)
    set_objective(model, model.scenario.objective)
    return model


def coefficients(model: Model, row: str) -> dict[str, float]:
    constraint = model.prob.get_constraint_by_name(row)
    assert constraint is not None, row
    return {v.name: c for v, c in constraint.items()}


def grows_into(model: Model) -> dict[str, set[str]]:
    """Each unit column -> the columns its grow rows say it does not exceed (n[p] <= n[p+1])."""
    into: dict[str, set[str]] = {}
    for constraint in model.prob.constraints():
        if constraint.name.startswith("grow_"):
            items = {v.name: c for v, c in constraint.items()}
            (before,) = [n for n, c in items.items() if c == -1]
            (after,) = [n for n, c in items.items() if c == 1]
            into.setdefault(before, set()).add(after)
    return into


def test_each_total_sums_units_that_add_alike_and_follows_only_what_grows_into_it() -> None:
    model = phased()
    totals = unit_totals(model)
    units = {v.name for pm in model.periods for sm in pm.sites for v in sm.n}
    demand_rows = {row for pm in model.periods for row, _field in pm.model.demand_rows}
    assert len(totals) >= len(model.periods) and any(t.follows is not None for t in totals)
    into = grows_into(model)
    for k, total in enumerate(totals):
        assert len(total.members) >= 2 and set(total.members) <= units
        assert total.rows and {row for row, _c in total.rows} <= demand_rows
        for row, coef in total.rows:
            found = coefficients(model, row)
            assert {found.get(name, 0.0) for name in total.members} == {coef}, (row, total)
        if total.follows is not None:
            assert total.follows < k
            before = totals[total.follows]
            assert {row for row, _ in before.rows} != {row for row, _ in total.rows}  # the period before's
            for name in before.members:
                assert into.get(name, set()) & set(total.members), (name, total)
    # no two totals of one period share a unit
    seen: set[str] = set()
    for total in totals:
        assert not seen & set(total.members)
        seen |= set(total.members)


def test_a_model_without_periods_has_no_totals() -> None:
    catalog = load_portfolio(portfolio_specs(3))
    (scenario_id,) = catalog.scenarios
    assert unit_totals(build_model(catalog, scenario_id, start=False)) == []


@pytest.mark.parametrize("split", [False, True])
def test_the_optimum_with_the_totals_is_the_optimum_without(
    split: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = phased()
    totals = unit_totals(model)
    if split:  # the totals sum a split column's parts
        monkeypatch.setattr(highs, "SPLIT_MIN_WORK", 0.0)
        monkeypatch.setattr(highs, "SPLIT_MIN_GAP", 0.0)
        monkeypatch.setattr(highs, "WIDE_INTEGER", 2)
    plain = solve(model.prob, "highs", 120)
    plain_values = {v.name: v.varValue for v in model.prob.variables()}
    with_totals = solve(model.prob, "highs", 120, totals=totals)
    assert plain.status.value == with_totals.status.value == "optimal"
    assert plain.objective is not None and with_totals.objective is not None
    assert with_totals.objective == pytest.approx(plain.objective, rel=1e-9, abs=1e-6)
    # what is read back is the problem's own columns, a plan that keeps every row
    for constraint in model.prob.constraints():
        assert constraint.valid(1e-6), constraint.name
    # and from the plain optimum as a start (the totals' start values summed from it), the same optimum
    start = {k: float(v or 0.0) for k, v in plain_values.items()}
    started = solve(model.prob, "highs", 120, totals=totals, start=start)
    assert started.objective == pytest.approx(plain.objective, rel=1e-9, abs=1e-6)


def test_highs_gets_the_totals_for_a_proof_of_gap_0_alone() -> None:
    model = phased()
    totals = unit_totals(model)
    assert totals_pay(totals, 0.0) and not totals_pay(totals, 1e-4) and not totals_pay([], 0.0)
    columns = {
        gap: start_highs(model.prob, 60, gap=gap, totals=totals).model.h.getNumCol() for gap in (0.0, 1e-4)
    }
    assert columns[0.0] == columns[1e-4] + len(totals)


def test_in_highs_copy_a_demand_row_holds_the_totals_in_its_members_place() -> None:
    model = phased()
    totals = unit_totals(model)
    pending = start_highs(model.prob, 60, gap=0.0, totals=totals)
    hm = pending.model
    lp = hm.h.getLp()
    first_total = len(hm.columns) + 2 * len(hm.parts)  # numbered after the problem's columns and parts
    matrix = lp.a_matrix_
    by_row: dict[int, dict[int, float]] = {}
    for column in range(lp.num_col_):
        for k in range(matrix.start_[column], matrix.start_[column + 1]):
            by_row.setdefault(matrix.index_[k], {})[column] = matrix.value_[k]
    numbers = {constraint.name: i for i, constraint in enumerate(model.prob.constraints())}  # HiGHS's rows
    for total, column in hm.totals:
        for row, coef in total.rows:
            entries = by_row[numbers[row]]
            assert entries.get(column) == pytest.approx(coef)
            assert all(entries.get(hm.col[name], 0.0) == 0.0 for name in total.members)
        assert column >= first_total


def test_a_total_is_an_integer_column() -> None:
    model = phased()
    totals: list[Total] = unit_totals(model)
    hm = start_highs(model.prob, 60, gap=0.0, totals=totals).model
    integrality: Any = hm.h.getLp().integrality_
    assert all(int(integrality[column]) == 1 for _total, column in hm.totals)
