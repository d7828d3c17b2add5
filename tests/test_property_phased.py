"""Phased plans: the MILP optimum over periods equals exhaustive enumeration through the same cost model.

Each example is a world of `test_property_enumeration.worlds` made phased: 2-3 periods, demand that ramps
(or starts later), halls that open late or grow (step schedules on IT power and rack positions), prices
that change (electricity, rent, and chip and switch prices that fall or rise, priced in the period bought),
and scale-up / scale-out switches and chips that arrive in a later period; small switch
radixes, so fabrics grow from one tier to two. The brute force (`trnplan.testkit.oracle`) enumerates
every sequence of per-period plans whose units never fall, with one scale-out switch per site.
`plan_scenario` re-checks each optimum with `check_plan` (PuLP-free) and fails on any violation.

Each example draws how it is solved: as shipped, or with the acceleration forced on
(`test_property_enumeration.machinery_on`): each site's block spans the window (its modes are the
scale-out types), its reduced-cost rows and fixings keep the optimum of the brute force over periods; the
same within a gap of 5% (`test_property_enumeration.machinery_within_gap`: the start's first plan where its
bound proves it within, the plan within that gap of the brute force's optimum, the bound below it); or
within a gap of 1e-3 with the first plan of `optimize.accelerate.relaxed` (the counts relaxed, then the
fabric fixed) made whatever the size: the plan is within that gap of the brute force's optimum; or to gap 0
with that first plan as HiGHS's start: the brute force's optimum, proven.
TRNPLAN_PHASED_EXAMPLES sets the number of examples (default 600, about 120 for each switch).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_property_enumeration import (
    agree,
    assert_explained_infeasible,
    machinery_on,
    machinery_within_gap,
    truth_of,
    world_catalog,
    worlds,
)

from trnplan.optimize.accelerate import relaxed
from trnplan.plan import plan_scenario

EXAMPLES = int(os.environ.get("TRNPLAN_PHASED_EXAMPLES", "600"))
PERIODS = [
    ["2026-01", "2026-07"],
    ["2026-01", "2027-01"],
    ["2026-01", "2026-07", "2027-01"],
    ["2026-01", "2026-02", "2026-07"],  # a one-month period: lengths the plan file rounds
    ["2026-01", "2026-06"],
]


def _ramp(draw: st.DrawFn, demand: dict[str, Any], periods: list[str]) -> dict[str, Any]:
    """Demand by month: the full demand from some period on, maybe a part of it before."""
    if not any(k in demand for k in ("chips", "fp8_pflops", "hbm_tb", "effective_fp8_pflops")):
        return demand
    full_from = draw(st.sampled_from(periods))
    by_month: dict[str, Any] = {full_from: demand}
    earlier = [p for p in periods if p < full_from]
    if earlier and draw(st.booleans()):
        part = {k: v for k, v in demand.items() if k != "at_most"}
        part = {k: (max(1, v // 2) if isinstance(v, int) else v / 2) for k, v in part.items()}
        by_month[earlier[0]] = part
    return by_month


def _schedule(draw: st.DrawFn, value: Any, periods: list[str], whole: bool, late_ok: bool) -> Any:
    """The value, or a schedule: open late (when the demand starts after the first period), or grow from a
    smaller start."""
    kind = draw(st.sampled_from(["same", "same", "late", "grow"] if late_ok else ["same", "grow"]))
    if kind == "late":
        return {periods[1]: value}
    if kind == "grow":
        small = max(1, value // 2) if whole else value / 2
        return {periods[0]: small, periods[-1]: value}
    return value


@st.composite
def phased_worlds(draw: st.DrawFn) -> dict[str, Any]:
    world = draw(worlds())
    periods = draw(st.sampled_from(PERIODS))
    scenario = world["scenarios"]["p"]
    scenario.pop("as_of")
    scenario["periods"] = periods
    scenario["horizon_years"] = max(2, scenario["horizon_years"])
    scenario["demand"] = _ramp(draw, scenario["demand"], periods)
    if "supply" in scenario and draw(st.booleans()):
        del scenario["supply"]  # the single-period worlds are tight enough; keep more of these feasible
    if len(periods) == 3:  # three periods: one site, few positions (the enumeration grows fast)
        for extra in sorted(world["sites"])[1:]:
            del world["sites"][extra]
        scenario["sites"] = sorted(world["sites"])
    late_ok = not isinstance(scenario["demand"], dict) or periods[0] not in scenario["demand"]
    for site in world["sites"].values():
        site["it_power_mw"] *= 2  # roomier halls than the single-period worlds: more feasible examples
        site.pop("grid_power_mw", None) if draw(st.booleans()) else None
        site["rack_positions"] = 3 if len(periods) == 3 else site["rack_positions"] + 2
        site["it_power_mw"] = _schedule(draw, site["it_power_mw"], periods, False, late_ok)
        site["rack_positions"] = _schedule(draw, site["rack_positions"], periods, True, late_ok)
        if draw(st.booleans()):
            site["electricity_usd_per_kwh"] = {periods[0]: site["electricity_usd_per_kwh"], periods[-1]: 0.12}
    for switch in world["switches"].values():
        if draw(st.integers(0, 3)) == 0:
            switch["available_from"] = periods[1]
    for chip in world["chips"].values():
        if draw(st.integers(0, 4)) == 0:
            chip["available_from"] = periods[1]
    scale_up = [s for s in world["switches"].values() if s["role"] == "scale_up"]
    for entity in (*world["chips"].values(), *scale_up):
        if draw(st.integers(0, 2)) == 0:  # a price that falls or rises in a later period, priced when bought
            later = draw(st.sampled_from(periods[1:]))
            factor = draw(st.sampled_from([0.4, 2.5]))
            entity["unit_usd"] = {"2020-01": entity["unit_usd"], later: factor * entity["unit_usd"]}
    for site in world["sites"].values():
        if "colocation_usd_per_kw_month" in site and draw(st.integers(0, 3)) == 0:
            rent = site["colocation_usd_per_kw_month"]
            site["colocation_usd_per_kw_month"] = {periods[0]: rent, periods[-1]: 230}
    return world


SWITCHES = ["as shipped", "machinery on", "machinery on, within a gap", "first plan within a gap",
            "first plan, gap 0"]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SWITCHES), phased_worlds())
def test_phased_milp_matches_enumeration(switch: str, world: dict[str, Any]) -> None:
    event(switch)
    if switch == "as shipped":
        phased_milp_matches_enumeration(world)
    elif switch == "machinery on":
        phased_machinery_matches_enumeration(world)
    elif switch == "machinery on, within a gap":
        machinery_within_gap(world)
    else:
        phased_first_plan(world, GAP if switch == "first plan within a gap" else 0.0)


def phased_milp_matches_enumeration(world: dict[str, Any]) -> None:
    catalog = world_catalog(world)
    if catalog is None:
        return
    scenario = catalog.scenarios["p"]
    truth = truth_of(catalog)
    if truth is None:
        assert_explained_infeasible(catalog)
        return
    event(f"feasible {scenario.objective} {len(scenario.periods or [])} periods")
    plan = plan_scenario(catalog, "p", alternatives=0)
    value, witness = truth
    assert plan.objective is not None and plan.periods is not None
    assert agree(plan.objective.value, value), (plan.objective, value, witness)
    tiers = [s.scale_out.tiers for p in plan.periods for s in p.sites.values()]
    if len(set(tiers)) > 1:
        event("fabric tiers grow")


def phased_machinery_matches_enumeration(world: dict[str, Any]) -> None:
    catalog = world_catalog(world)
    if catalog is None:
        return
    truth = truth_of(catalog)
    with machinery_on():
        if truth is None:
            assert_explained_infeasible(catalog)
            return
        plan = plan_scenario(catalog, "p", alternatives=0)
    event(f"feasible {catalog.scenarios['p'].objective}")
    assert plan.objective is not None and plan.periods is not None
    assert agree(plan.objective.value, truth[0]), (plan.objective, truth)
    assert plan.solver is not None and plan.solver.status == "optimal"


GAP = 1e-3


def phased_first_plan(world: dict[str, Any], gap: float) -> None:
    catalog = world_catalog(world)
    if catalog is None:
        return
    truth = truth_of(catalog)
    if truth is None:
        return  # no plan: the first plan's MILPs find none, the search says so (as shipped, above)
    made: list[bool] = []
    first_plan = relaxed.first_plan

    def noted(*args: Any) -> dict[str, float] | None:
        plan = first_plan(*args)
        made.append(plan is not None)
        return plan

    saved = relaxed.FIRST_PLAN_MIN_SITE_PERIODS
    relaxed.FIRST_PLAN_MIN_SITE_PERIODS, relaxed.first_plan = 0, noted  # type: ignore[assignment]
    try:
        plan = plan_scenario(catalog, "p", alternatives=0, gap=gap)
    finally:
        relaxed.FIRST_PLAN_MIN_SITE_PERIODS, relaxed.first_plan = saved, first_plan  # type: ignore[assignment]
    event("first plan made" if any(made) else "no first plan" if made else "not asked (ratio objective)")
    assert plan.objective is not None and plan.solver is not None
    value, best = plan.objective.value, truth[0]
    if gap == 0:  # the first plan only started HiGHS's search: the optimum, proven
        assert agree(value, best), (plan.objective, truth)
        assert plan.solver.status == "optimal"
        return
    assert abs(value - best) <= gap * max(abs(value), abs(best)) + 0.02, (plan.objective, truth)
    assert plan.solver.mip_gap is not None and plan.solver.mip_gap <= gap
