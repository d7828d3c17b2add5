"""Alternatives: the best plan without each choice the optimum makes, ranked by the objective."""

from __future__ import annotations

from trnplan.plan import plan_scenario
from trnplan.testkit.builders import base_specs, catalog_from_dict


def test_alternatives_avoid_their_excluded_choice_and_are_ranked() -> None:
    """base_specs: liq16 (liquid, switch `up`) is the optimum for 64 chips; without liq16, without
    liquid or without `up`, the air8 plan (8 units) is the answer, at a higher TCO."""
    specs = base_specs()
    catalog = catalog_from_dict(specs)
    plan = plan_scenario(catalog, "s", alternatives=10)
    withouts = [alt.without for alt in plan.alternatives]
    assert sorted(withouts) == ["cooling liquid", "form liq16", "scale-out switch sw", "scale-up switch up"]
    feasible = [alt for alt in plan.alternatives if alt.feasible]
    for alt in feasible:
        kind, item = alt.without.rsplit(" ", 1)
        assert item not in alt.choice.replace("/", " ").split(), alt
        assert alt.tco_usd is not None and alt.tco_usd > plan.totals.tco_usd
        assert alt.delta_pct is not None and alt.delta_pct > 0
    deltas = [alt.delta_pct for alt in feasible]
    assert deltas == sorted(deltas)
    # Without the only scale-out switch nothing can be built: reported, ranked last.
    assert plan.alternatives[-1].without == "scale-out switch sw"
    assert plan.alternatives[-1].status == "infeasible"


def test_k_limits_and_zero_disables() -> None:
    catalog = catalog_from_dict(base_specs())
    assert len(plan_scenario(catalog, "s", alternatives=2).alternatives) == 2
    assert plan_scenario(catalog, "s", alternatives=0).alternatives == []
