"""Each tier's ports are held within what the site allows at that tier (`network.tier_port_limit`).

The limit must hold for every plan of a site that keeps within the site's own rows, priced by the cost
model (not by the MILP): on the property test's generated worlds (owned halls, redundancy, grid caps,
oversubscribed first tiers, copper links, small radixes so several tiers occur), no such plan needs more
ports at its tier than the limit says. And the limit must do what it is for: raise the LP bound of a
phased portfolio, where the topology's capacity alone let the LP buy most of a site's ports at the
cheaper tier's price.
"""

from __future__ import annotations

import os
from typing import Any

import highspy
import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from test_property_enumeration import world_catalog, worlds

import trnplan.optimize.network as network
from trnplan.costs.evaluate import evaluate
from trnplan.costs.fabric import tier_capacity
from trnplan.optimize import build_model
from trnplan.optimize.highs import HighsModel
from trnplan.optimize.model import set_objective
from trnplan.testkit.oracle import TooBig, site_candidates
from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs

EXAMPLES = int(os.environ.get("TRNPLAN_PROPERTY_EXAMPLES", "150"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_no_plan_of_a_site_needs_more_ports_than_its_tier_allows(world: dict[str, Any]) -> None:
    catalog = world_catalog(world)
    if catalog is None:
        return
    scenario = catalog.scenarios["p"]
    model = build_model(catalog, "p")
    for sm in model.sites:
        try:
            candidates = site_candidates(catalog, "p", sm.site, limit=2_000)
        except TooBig:
            reject()
        offered = {o.key for o in sm.options}  # the model's options: a supply cap can leave some out
        for candidate in candidates[1:]:
            if any((d.form, d.cooling, d.scale_up_switch) not in offered for d in candidate.deployments):
                continue
            fabric = evaluate(catalog, scenario, candidate.deployments, dict(candidate.scale_out)).sites[
                sm.site
            ].fabric
            if fabric is None or fabric.ports == 0:
                continue
            switch = catalog.switches[fabric.switch]
            limit = network.tier_port_limit(catalog, scenario, sm, switch, fabric.tiers)
            assert fabric.ports <= limit * (1 + 1e-9), (sm.site, candidate.deployments, fabric, limit)
            if limit < tier_capacity(switch.radix, fabric.tiers, scenario.fabric.oversubscription):
                event("a plan at a tier the site holds below its capacity")


def lp_bound(catalog: Any, scenario_id: str, tier_limits: bool) -> float:
    """The LP relaxation's optimum of the scenario's model (min TCO), with or without the tier limits."""
    model = build_model(catalog, scenario_id, start=False, tier_limits=tier_limits)
    set_objective(model, model.scenario.objective)
    hm = HighsModel(model.prob)
    for i, v in enumerate(hm.columns):
        if v.cat == "Integer":
            hm.h.changeColIntegrality(i, highspy.HighsVarType.kContinuous)
    hm.h.run()
    assert hm.h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(hm.h.getInfo().objective_function_value)


def test_tier_limits_raise_the_phased_lp_bound() -> None:
    catalog = load_portfolio(phased_portfolio_specs(5, 4, 0))
    (scenario_id,) = catalog.scenarios
    held = lp_bound(catalog, scenario_id, tier_limits=True)
    topology_only = lp_bound(catalog, scenario_id, tier_limits=False)
    assert held > topology_only * (1 + 1e-4), (held, topology_only)


def port_caps(
    catalog: Any, scenario_id: str, tier_limits: bool | None, elastic: bool = False
) -> dict[str, float]:
    """Each fabric tier's port bound N <= cap by variable name."""
    model = build_model(catalog, scenario_id, elastic=elastic, start=False, tier_limits=tier_limits)
    return {p.name: p.upBound for pm in model.periods for sm in pm.sites for p in sm.ports.values()}


@pytest.mark.parametrize(("sites", "periods", "held"), [(5, 4, False), (10, 2, True)])
def test_tier_limits_by_default_from_ten_phased_sites(sites: int, periods: int, held: bool) -> None:
    catalog = load_portfolio(phased_portfolio_specs(sites, periods, 0))
    (scenario_id,) = catalog.scenarios
    default = port_caps(catalog, scenario_id, None)
    assert default == port_caps(catalog, scenario_id, held)
    assert default != port_caps(catalog, scenario_id, not held)


def test_no_tier_limits_in_elastic_mode() -> None:
    """The elastic model (an infeasible scenario's explanation) lets the site's rows take slacks, so the
    limits, which read those rows, would not hold there."""
    catalog = load_portfolio(phased_portfolio_specs(10, 2, 0))
    (scenario_id,) = catalog.scenarios
    held = port_caps(catalog, scenario_id, True, elastic=True)
    assert held == port_caps(catalog, scenario_id, False, elastic=True)
