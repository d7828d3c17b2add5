"""One builder for one or many periods: a scenario with a single period plans as the same scenario without
periods (its start as `as_of`), from the same world of specs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_optimize_solvers import FIXTURES

from trnplan.optimize import optimize
from trnplan.testkit.builders import catalog_from_dict

MONTH = "2026-01"


def one_period(world: dict[str, Any]) -> dict[str, Any]:
    """The world's scenario `s` with one period starting at MONTH (its demand given from then)."""
    phased = copy.deepcopy(world)
    scenario = phased["scenarios"]["s"]
    scenario.pop("as_of", None)
    scenario["periods"] = [MONTH]
    if scenario.get("demand"):
        scenario["demand"] = {MONTH: scenario["demand"]}
    return phased


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_one_period_plans_as_no_period(name: str) -> None:
    world = FIXTURES[name][0]()
    single = copy.deepcopy(world)
    single["scenarios"]["s"]["as_of"] = MONTH
    plain = optimize(catalog_from_dict(single), "s", alternatives=0)
    phased = optimize(catalog_from_dict(one_period(world)), "s", alternatives=0)
    assert phased.decisions.periods is not None and len(phased.decisions.periods) == 1
    assert (phased.decisions.deployments, phased.decisions.scale_out) == (
        plain.decisions.deployments,
        plain.decisions.scale_out,
    )
