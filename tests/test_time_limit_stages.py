"""`--time-limit` bounds the whole command: every stage (building the model, its capacity cuts, the start
heuristic and its column generation, the search, the alternatives) checks the one deadline, so a deadline
already passed stops each at once; and a phased model's cuts read each period's rows once, not every row
once per period. No test here times anything: the deadlines are already passed, or passed by a clock the
test moves."""

from __future__ import annotations

from typing import Any

import pytest

import trnplan.optimize as optimize_pkg
from trnplan.errors import SolverError
from trnplan.optimize import alternatives as alternatives_module
from trnplan.optimize import build_model, progress
from trnplan.optimize.accelerate import blocks, columns, cuts, start
from trnplan.optimize.alternatives import find_alternatives
from trnplan.optimize.model import set_objective
from trnplan.optimize.progress import Deadline, OutOfTime
from trnplan.testkit.builders import base_specs, catalog_from_dict
from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs, portfolio_specs


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def passed() -> Deadline:
    """A deadline that has already passed."""
    clock = Clock()
    deadline = Deadline(1.0, clock)
    clock.now = 2.0
    return deadline


def portfolio(n_sites: int = 20) -> Any:
    catalog = load_portfolio(portfolio_specs(n_sites, seed=0))
    (scenario_id,) = catalog.scenarios
    return catalog, scenario_id


def test_building_the_model_stops_at_a_passed_deadline() -> None:
    catalog, scenario_id = portfolio()
    with progress.limited(passed()), pytest.raises(OutOfTime):
        build_model(catalog, scenario_id)


def test_the_capacity_cuts_stop_at_a_passed_deadline() -> None:
    catalog, scenario_id = portfolio()
    model = build_model(catalog, scenario_id, cuts=False)
    with progress.limited(passed()), pytest.raises(OutOfTime, match="cut|site"):
        cuts.add_capacity_cuts(model)


def test_the_start_heuristic_and_its_column_generation_stop_at_a_passed_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    catalog, scenario_id = portfolio()
    model = build_model(catalog, scenario_id)
    set_objective(model, "min_tco")
    with progress.limited(passed()), pytest.raises(OutOfTime):
        start.mip_start(model)
    # column generation alone, its deadline passing after its first round
    clock = Clock()
    deadline = Deadline(10.0, clock)
    priced: list[int] = []
    real = columns._price

    def price(*args: Any, **kwargs: Any) -> Any:
        priced.append(1)
        clock.now = 100.0  # the first site's pricing uses up the time
        return real(*args, **kwargs)

    monkeypatch.setattr(columns, "_price", price)
    monkeypatch.setattr(columns, "PRICE_THREADS", 1)
    with progress.limited(deadline), pytest.raises(OutOfTime, match="start heuristic"):
        start.mip_start(model)
    assert len(priced) == 1  # the second site was never priced


def test_a_deadline_passed_during_the_start_heuristic_stops_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """20 sites: the start heuristic runs; the time runs out while it prices the first site. No search
    follows, no alternatives, and the error names the time limit."""
    catalog, scenario_id = portfolio()
    clock = Clock()
    searched: list[int] = []
    real = columns._price

    def price(*args: Any, **kwargs: Any) -> Any:
        clock.now = 100.0
        return real(*args, **kwargs)

    def search(*args: Any, **kwargs: Any) -> Any:
        searched.append(1)
        raise AssertionError("no search after the deadline")

    monkeypatch.setattr(columns, "_price", price)
    monkeypatch.setattr(columns, "PRICE_THREADS", 1)
    monkeypatch.setattr(optimize_pkg, "solve", search)
    with pytest.raises(SolverError, match="time limit"):
        optimize_pkg.optimize(catalog, scenario_id, time_limit=Deadline(30.0, clock), alternatives=3)
    assert not searched


def test_the_alternatives_stop_at_a_passed_deadline() -> None:
    catalog = catalog_from_dict(base_specs())
    best = optimize_pkg.optimize(catalog, "s", alternatives=0).decisions
    searched: list[int] = []

    def search(*args: Any, **kwargs: Any) -> Any:
        searched.append(1)
        raise AssertionError("no search after the deadline")

    assert find_alternatives(catalog, "s", best, 3, "highs", passed(), search) == []
    assert not searched
    # a deadline passing while the alternatives are bounded (before any MILP): none searched
    clock = Clock()
    deadline = Deadline(10.0, clock)
    model = build_model(catalog, "s")
    real_exclude = alternatives_module._exclude

    def exclude(*args: Any) -> Any:
        clock.now = 100.0
        return real_exclude(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(alternatives_module, "_exclude", exclude)
        assert find_alternatives(catalog, "s", best, 3, "highs", deadline, search, model=model) == []
    assert not searched


def test_a_solver_instance_made_under_a_deadline_is_bounded_by_it() -> None:
    from trnplan.optimize.highs import new_highs

    clock = Clock()
    with progress.limited(Deadline(7.0, clock)):
        h = new_highs()
    assert h.getOptionValue("time_limit")[1] == pytest.approx(7.0)


def test_a_phased_models_cuts_read_each_row_once_not_once_per_period(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each period's site blocks used to place every row of the whole window: work (and the rows read)
    grew with periods x rows. Now the rows are grouped by period in one pass."""
    catalog = load_portfolio(phased_portfolio_specs(3, 6, 0))
    (scenario_id,) = catalog.scenarios
    placed: list[int] = []
    real = blocks._place_row

    def place(*args: Any) -> None:
        placed.append(1)
        real(*args)

    monkeypatch.setattr(blocks, "_place_row", place)
    model = build_model(catalog, scenario_id, start=False)
    rows = len(model.prob.constraints())
    assert len(placed) <= rows


def test_a_solver_instance_run_again_later_gets_only_what_is_left_of_the_deadline() -> None:
    """HiGHS's clock starts again at each run: a site's pricing MILP, made at the start of the heuristic
    and run once per round, used to keep the limit it was made with each time (a 150 s deadline ran to
    279 s on a loaded machine). Each run now gets what is left, in the pool's threads too."""
    from types import SimpleNamespace

    from trnplan.optimize.highs import new_highs

    clock = Clock()
    deadline = Deadline(100.0, clock)
    with progress.limited(deadline):
        pricings = [SimpleNamespace(highs=new_highs()) for _ in range(3)]
        assert pricings[0].highs.getOptionValue("time_limit")[1] == pytest.approx(100.0)
        clock.now = 90.0
        seen = columns._each_site(lambda pr, s: pr.highs.getOptionValue("time_limit")[1], pricings)  # type: ignore[arg-type]
        assert seen == [pytest.approx(10.0)] * 3
        h = new_highs()
        clock.now = 99.0
        start._run_polish(h)  # an empty model: solved at once, after its limit is set
        assert h.getOptionValue("time_limit")[1] == pytest.approx(1.0)
