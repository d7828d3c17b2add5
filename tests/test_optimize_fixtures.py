"""Hand-worked optimizer fixtures: each isolates one behaviour of the MILP on `base_specs()`.

Unit figures at site a of the base world (horizon 1 year, cost of capital 0 -> CRF 1, utilization 1,
no maintenance; so TCO = capex + one year of opex):

  opex per IT kW-year = utilization x PUE x 8760 x $/kWh + $/kW-month x 12
    air    (PUE 1.5): 1.5 x 8760 x 0.10 = 1,314   + 1,200 = $2,514.00
    liquid (PUE 1.1): 1.1 x 8760 x 0.10 =   963.6 + 1,200 = $2,163.60
  air8  (8 chips, 10 kW):  capex 8 x 10,000 + 1,000 = $81,000;  TCO 81,000 + 10 x 2,514.00 = $106,140.00
                           = $13,267.50 per chip
  liq16 (16 chips, 18 kW): capex 16 x 10,000 + 1,000 = $161,000; TCO 161,000 + 18 x 2,163.60 = $199,944.80
                           = $12,496.55 per chip
  scale-out: one $1,000 switch per used site up to 64 chips (100 Gb/s per chip, radix 64 at 100 Gb/s).

So in the base world liquid is the cheaper form per chip. "The air-cheap world" (`air_cheap`) raises the
liq16 rack kit to $15,000: liq16 capex $175,000, TCO $213,944.80 per unit = $13,371.55 per chip, and air wins.

Every plan is re-checked with `check_plan` (PuLP-free) and must come back clean.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from trnplan.catalog import Catalog
from trnplan.costs import Deployment, evaluate
from trnplan.errors import EXIT_INFEASIBLE, InfeasibleError
from trnplan.numbers import cents
from trnplan.plan import Objective, Plan, plan_scenario
from trnplan.plan.check import check_plan, deployments_of, scale_out_of
from trnplan.testkit.builders import base_specs, catalog_from_dict

Choice = tuple[str, str, str, str, int]  # site, form, cooling, scale-up switch, units


def solve(data: dict[str, Any], scenario: str = "s", **kwargs: Any) -> Plan:
    """Optimize a scenario of a spec dict; every plan must pass the PuLP-free re-check."""
    cat = catalog_from_dict(data)
    plan = plan_scenario(cat, scenario, **kwargs)
    assert check_plan(plan, cat) == []
    return plan


def choices(plan: Plan) -> list[Choice]:
    return [(d.site, d.form, d.cooling, d.scale_up_switch, d.units) for d in deployments_of(plan)]


def assert_usd(value: Any, expected: float) -> None:
    """Equal to the cent."""
    assert cents(float(value)) == cents(expected), f"${float(value):,.2f} != ${expected:,.2f}"


def air_cheap(data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The base world with a $15,000 liq16 rack kit, so air8 is the cheaper form
    ($13,267.50 vs $13,371.55 per chip)."""
    data = data or base_specs()
    data["forms"]["liq16"]["rack_bom"] = [{"item": "kit", "qty": 1, "unit_usd": 15000}]
    return data


def test_base_world_picks_liquid() -> None:
    """64 chips at a: 4 liq16 (72 kW) + 1 switch: capex 4 x 161,000 + 1,000 = $645,000;
    TCO = 645,000 + 72 x 2,163.60 = 645,000 + 155,779.20 = $800,779.20 (8 air8 would be $850,120)."""
    plan = solve(base_specs())
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert scale_out_of(plan) == {"a": "sw"}
    assert plan.sites["a"].cooling_used == ["liquid"]
    assert plan.solver.status == "optimal"
    assert_usd(plan.totals.capex_usd, 645_000)
    assert_usd(plan.totals.tco_usd, 800_779.20)
    assert plan.objective == Objective(kind="min_tco", value=800_779.2, unit="USD")


# --- 1. cooling allowed by site ------------------------------------------------------------------


def test_air_only_site_takes_the_air_form() -> None:
    """Sites a (air + liquid, 40 kW) and b (air only, 40 kW, cheap power $0.05/kWh); demand 64 chips.

    Capacity: a holds at most 32 chips (2 liq16 = 36 kW; 3 would be 54 kW; 4 air8 = 40 kW), b holds at most
    32 chips (4 air8 = 40 kW; liquid is not available there), so the demand needs both sites, 32 chips each.
    At b only air8 is allowed: 4 x air8, capex $324,000, opex 40 x (1.5 x 8760 x 0.05 + 1,200) = 40 x 1,857
    = $74,280 -> $398,280.
    At a, 32 chips cost: 2 liq16 = 322,000 + 36 x 2,163.6 = $399,889.60;
    1 liq16 + 2 air8 = 323,000 + 38,944.80 + 50,280 = $412,224.80; 4 air8 = 324,000 + 100,560 = $424,560.
    So a uses liquid although b, air-only, uses air (air at b, $12,446.25/chip, is cheaper than liquid at a,
    $12,496.55/chip, but b is full).
    TCO = 398,280 + 399,889.60 + 2 x 1,000 (a switch per site) = $800,169.60;
    capex = 324,000 + 322,000 + 2,000 = $648,000.
    """
    data = base_specs()
    data["sites"]["a"]["it_power_mw"] = 0.04
    data["sites"]["b"] = dict(data["sites"]["a"], cooling=["air"], electricity_usd_per_kwh=0.05)
    data["scenarios"]["s"]["sites"] = ["a", "b"]
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 2), ("b", "air8", "air", "none", 4)]
    assert plan.sites["b"].cooling_used == ["air"]
    assert_usd(plan.totals.capex_usd, 648_000)
    assert_usd(plan.totals.tco_usd, 800_169.60)


# --- 2. grid cap ---------------------------------------------------------------------------------


def test_without_grid_cap_air_wins_on_cost() -> None:
    """Air-cheap world, 64 chips: 8 air8 = 648,000 + 1,000 + 80 x 2,514 = $850,120 beats
    4 liq16 = 700,000 + 1,000 + 155,779.20 = $856,779.20 (and every mix lies between)."""
    plan = solve(air_cheap())
    assert choices(plan) == [("a", "air8", "air", "none", 8)]
    assert_usd(plan.totals.tco_usd, 850_120)
    assert plan.totals.facility_power_kw == pytest.approx(120)


def test_grid_cap_tips_the_choice_to_liquid() -> None:
    """Air-cheap world with grid_power_mw 0.08 (80 kW of IT x PUE).

    Facility kW for 64 chips: 8 air8 = 80 x 1.5 = 120; 4 liq16 = 72 x 1.1 = 79.2;
    mixes (l liq16 + a air8, 16 l + 8 a = 64): 3 + 2 -> 59.4 + 30 = 89.4, 2 + 4 -> 99.6, 1 + 6 -> 109.8.
    Only all-liquid fits under 80 kW: TCO = 4 x 175,000 + 1,000 + 72 x 2,163.60 = $856,779.20.
    """
    data = air_cheap()
    data["sites"]["a"]["grid_power_mw"] = 0.08
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert_usd(plan.totals.capex_usd, 701_000)
    assert_usd(plan.totals.tco_usd, 856_779.20)
    assert plan.sites["a"].utilization.grid_power == pytest.approx(79.2 / 80)


# --- 3. one-off cooling cost ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixed_usd", "expected", "tco"),
    [
        # 800,779.20 + 40,000 = 840,779.20 < 850,120 (all air): liquid still wins
        (40_000, [("a", "liq16", "liquid", "up", 4)], 840_779.20),
        # 800,779.20 + 60,000 = 860,779.20 > 850,120; a mix (3 liq16 + 2 air8 = 813,114.40 + 60,000) too
        (60_000, [("a", "air8", "air", "none", 8)], 850_120.00),
    ],
)
def test_liquid_fit_out_cost_tips_back_to_air(fixed_usd: float, expected: list[Choice], tco: float) -> None:
    """Base world (liquid cheaper by $49,340.80 on 64 chips) with cooling_fixed_usd {liquid: X} at site a."""
    data = base_specs()
    data["sites"]["a"]["cooling_fixed_usd"] = {"liquid": fixed_usd}
    plan = solve(data)
    assert choices(plan) == expected
    assert_usd(plan.totals.tco_usd, tco)


def test_network_cooling_fit_out_is_paid_by_every_plan() -> None:
    """As above with {liquid: $60,000}, but the network is liquid-cooled (fabric.cooling: liquid) and the
    switch draws 100 W: an all-air plan now needs liquid cooling for its network and pays the fit-out too.

    Liquid: 800,779.20 + 60,000 + 0.1 kW x 2,163.60 = $860,995.56.
    Air:    850,120 + 60,000 + 216.36 = $910,336.36.   So liquid wins again.
    """
    data = base_specs()
    data["sites"]["a"]["cooling_fixed_usd"] = {"liquid": 60_000}
    data["switches"]["sw"]["power_w"] = 100
    data["scenarios"]["s"]["fabric"] = {"cooling": "liquid"}
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert plan.sites["a"].cooling_used == ["liquid"]
    assert_usd(plan.totals.tco_usd, 860_995.56)


# --- 4. availability -----------------------------------------------------------------------------


def dated_switches(as_of: str) -> dict[str, Any]:
    """liq16 may use 'up' ($500, from 2025-01) or 'up2' ($100, from 2027-01); scale-out 'sw' ($1,000, from
    2020-01) or 'sw2' ($500, from 2027-01)."""
    data = base_specs()
    data["switches"]["up"]["unit_usd"] = 500
    data["switches"]["up2"] = dict(data["switches"]["up"], unit_usd=100, available_from="2027-01")
    data["switches"]["sw2"] = dict(data["switches"]["sw"], unit_usd=500, available_from="2027-01")
    data["forms"]["liq16"]["scale_up"].append({"switch": "up2", "per_rack": 1})
    data["scenarios"]["s"]["as_of"] = as_of
    return data


def test_switches_not_available_at_as_of_are_never_chosen() -> None:
    """as_of 2026-06: up2 and sw2 (from 2027-01) are out although cheaper.
    4 liq16 with 'up': capex 644,000 + 4 x 500 + 1,000 (sw) = $647,000;
    TCO = 647,000 + 155,779.20 = $802,779.20.
    """
    plan = solve(dated_switches("2026-06"))
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert scale_out_of(plan) == {"a": "sw"}
    assert_usd(plan.totals.tco_usd, 802_779.20)


def test_switches_available_at_as_of_are_chosen() -> None:
    """as_of 2027-01 (the month they ship counts): 644,000 + 4 x 100 + 500 = $644,900 capex;
    TCO $800,679.20."""
    plan = solve(dated_switches("2027-01"))
    assert choices(plan) == [("a", "liq16", "liquid", "up2", 4)]
    assert scale_out_of(plan) == {"a": "sw2"}
    assert_usd(plan.totals.tco_usd, 800_679.20)


# --- 5. domain size ------------------------------------------------------------------------------


def test_min_domain_chips_forces_the_larger_domain_form() -> None:
    """Air-cheap world (air8 wins at $850,120, see above) with min_domain_chips 16: air8's 8-chip domains
    are out, so 4 liq16: TCO $856,779.20, 4 domains of 16."""
    data = air_cheap()
    data["scenarios"]["s"]["min_domain_chips"] = 16
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert plan.totals.domains == 4
    assert_usd(plan.totals.tco_usd, 856_779.20)


def test_min_domain_chips_below_the_small_form_changes_nothing() -> None:
    data = air_cheap()
    data["scenarios"]["s"]["min_domain_chips"] = 8
    plan = solve(data)
    assert choices(plan) == [("a", "air8", "air", "none", 8)]
    assert plan.totals.domains == 8


# --- 6. supply caps ------------------------------------------------------------------------------


def test_supply_cap_splits_a_deployment_across_scale_up_switches() -> None:
    """liq16 may use 'up' ($500) or 'cheapswitch' ($100), one per rack; supply {cheapswitch: 2}.
    64 chips = 4 liq16: 2 with cheapswitch (the cap), 2 with up.
    Is liq16/up still better than air for the last 32 chips? 2 liq16/up = 322,000 + 1,000 + 36 x 2,163.60
    = $400,889.60 vs 4 air8 = 324,000 + 100,560 = $424,560: yes.
    capex = 644,000 + 2 x 100 + 2 x 500 + 1,000 = $646,200; TCO = 646,200 + 155,779.20 = $801,979.20.
    """
    data = base_specs()
    data["switches"]["up"]["unit_usd"] = 500
    data["switches"]["cheapswitch"] = dict(data["switches"]["up"], unit_usd=100)
    data["forms"]["liq16"]["scale_up"].append({"switch": "cheapswitch", "per_rack": 1})
    data["scenarios"]["s"]["supply"] = {"cheapswitch": 2}
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "cheapswitch", 2), ("a", "liq16", "liquid", "up", 2)]
    assert_usd(plan.totals.capex_usd, 646_200)
    assert_usd(plan.totals.tco_usd, 801_979.20)
    assert "supply of cheapswitch: 2 units of 2 units" in plan.binding


def test_chip_supply_cap_limits_the_plan() -> None:
    """max_perf with a generous budget and chip supply {x: 40}: 40 chips at most; the cheapest way is
    irrelevant to max_perf, but 40 PF is the answer (2 liq16 + 1 air8, or 1 liq16 + 3 air8, or 5 air8)."""
    data = base_specs()
    data["scenarios"]["s"].update(objective="max_perf", demand={}, budget={"capex_usd": 10_000_000},
                                  supply={"x": 40})
    plan = solve(data)
    assert plan.totals.chips == 40
    assert plan.totals.fp8_pflops == pytest.approx(40)


def test_scale_out_supply_cap_picks_the_other_switch() -> None:
    """80 chips (5 liq16): on sw (radix 64) N = 80 needs 2 tiers, ceil(3 x 80 / 64) = 4 switches ($4,000), but
    supply {sw: 3}; big (radix 128, $5,000) serves 80 ports with one switch.
    TCO = 5 x 199,944.80 + 5,000 = $1,004,724 (vs $1,003,724 on sw if it were not capped)."""
    data = base_specs()
    data["switches"]["big"] = dict(data["switches"]["sw"], bandwidth_gbps=12800, unit_usd=5000)
    data["scenarios"]["s"].update(demand={"chips": 80}, supply={"sw": 3})
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 5)]
    assert scale_out_of(plan) == {"a": "big"}
    assert_usd(plan.totals.tco_usd, 1_004_724)
    data["scenarios"]["s"]["supply"] = {"sw": 4}
    plan = solve(data)
    assert scale_out_of(plan) == {"a": "sw"}
    assert plan.sites["a"].scale_out.switches == 4
    assert_usd(plan.totals.tco_usd, 1_003_724)


# --- 7. power split ------------------------------------------------------------------------------


def test_demand_split_over_two_sites_by_power() -> None:
    """Site a 60 kW, site b 20 kW (otherwise as a); 64 chips = 72 kW of liq16: neither site alone suffices.
    a holds 3 liq16 (54 kW; 4 would be 72), b holds 1 liq16 (18 kW) or 2 air8 (20 kW): liquid at b is cheaper
    (199,944.80 vs 212,280). So a: 3 liq16, b: 1 liq16, each with its own switch.
    TCO = 4 x 199,944.80 + 2 x 1,000 = $801,779.20.
    """
    data = base_specs()
    data["sites"]["a"]["it_power_mw"] = 0.06
    data["sites"]["b"] = dict(data["sites"]["a"], it_power_mw=0.02)
    data["scenarios"]["s"]["sites"] = ["a", "b"]
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 3), ("b", "liq16", "liquid", "up", 1)]
    assert scale_out_of(plan) == {"a": "sw", "b": "sw"}
    assert plan.sites["a"].utilization.it_power == pytest.approx(54 / 60)
    assert plan.sites["b"].utilization.it_power == pytest.approx(18 / 20)
    assert_usd(plan.totals.tco_usd, 801_779.20)


# --- 8. objectives and budgets -------------------------------------------------------------------


def test_max_perf_with_capex_budget() -> None:
    """max_perf, capex budget $404,500: $403,500 after the one switch.
    40 chips = 16 l + 8 a: (2, 1) = 322,000 + 81,000 = $403,000 fits; (1, 3) = $404,000 and (0, 5) = $405,000
    do not; 48 chips needs at least 3 x 161,000 = $483,000. So 2 liq16 + 1 air8, 40 PF, capex $404,000;
    TCO = 404,000 + 36 x 2,163.60 + 10 x 2,514 = 404,000 + 77,889.60 + 25,140 = $507,029.60.
    """
    data = base_specs()
    data["scenarios"]["s"].update(objective="max_perf", demand={}, budget={"capex_usd": 404_500})
    plan = solve(data)
    assert choices(plan) == [("a", "air8", "air", "none", 1), ("a", "liq16", "liquid", "up", 2)]
    assert plan.totals.fp8_pflops == pytest.approx(40)
    assert plan.objective.kind == "max_perf"
    assert plan.objective.value == pytest.approx(40)
    assert_usd(plan.totals.capex_usd, 404_000)
    assert_usd(plan.totals.tco_usd, 507_029.60)
    assert plan.solver.dinkelbach_iterations is None
    assert "dinkelbach_iterations" not in plan.to_dict()["solver"]


def test_max_perf_with_tco_budget() -> None:
    """max_perf, TCO budget $600,000: 48 chips = 3 liq16: 3 x 199,944.80 + 1,000 = $600,834.40 is over;
    2 liq16 + 2 air8 = 2 x 199,944.80 + 2 x 106,140 + 1,000 = $613,169.60 over; so 40 chips:
    2 liq16 + 1 air8 = $507,029.60 (the cheapest 40), PF 40."""
    data = base_specs()
    data["scenarios"]["s"].update(objective="max_perf", demand={}, budget={"tco_usd": 600_000})
    plan = solve(data)
    assert plan.totals.fp8_pflops == pytest.approx(40)
    assert float(plan.totals.tco_usd) <= 600_000


def best_ratio_by_enumeration(cat: Catalog, max_liq: int, max_air: int) -> tuple[float, tuple[int, int]]:
    """Best PFLOPs / TCO over every (liq16 units, air8 units) at site a within power, positions and budget."""
    scenario = cat.scenarios["s"]
    site = cat.sites["a"]
    best = (0.0, (0, 0))
    for liq, air in itertools.product(range(max_liq + 1), range(max_air + 1)):
        if liq == air == 0:
            continue
        deps = [Deployment("a", "liq16", "liquid", "up", liq), Deployment("a", "air8", "air", "none", air)]
        ev = evaluate(cat, scenario, deps, {"a": "sw"})
        s = ev.sites["a"]
        positions = s.compute_racks + (s.fabric.network_racks if s.fabric else 0)
        if s.it_power_kw > site.it_power_kw or positions > site.rack_positions:
            continue
        if scenario.budget.capex_usd is not None and ev.totals.capex_usd > scenario.budget.capex_usd:
            continue
        ratio = ev.totals.fp8_pflops / ev.totals.tco_usd
        if ratio > best[0]:
            best = (ratio, (liq, air))
    return best


def test_max_perf_per_tco_best_ratio() -> None:
    """max_perf_per_tco at site a limited to 200 kW, no demand, no budget.

    Per chip, liq16 costs $12,496.55 and air8 $13,267.50, plus the fabric: one $1,000 switch up to 64
    chips, then ceil(3N / 64) switches (>= $46.875 per chip). l liq16 alone cost
    (199,944.80 l + 1,000) / 16 l per chip: falling to $12,512.175 at l = 4 (64 chips); at l = 5
    (80 chips, 4 switches) it is $12,546.55 and it stays above 12,496.55 + 46.875 from there.
    So the best ratio is 4 liq16: 64 PF / $800,779.20 = 79.9222 PF per $M.
    Cross-checked by enumerating every (liq16, air8) pair that fits the site through the cost model.
    """
    data = base_specs()
    data["sites"]["a"]["it_power_mw"] = 0.2
    data["scenarios"]["s"].update(objective="max_perf_per_tco", demand={})
    cat = catalog_from_dict(data)
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert_usd(plan.totals.tco_usd, 800_779.20)
    ratio, best = best_ratio_by_enumeration(cat, max_liq=11, max_air=20)
    assert best == (4, 0)
    assert ratio == pytest.approx(64 / 800_779.20, rel=1e-12)
    assert plan.objective.kind == "max_perf_per_tco"
    assert plan.objective.value == pytest.approx(64 / 800_779.20 * 1e6, abs=5e-7)  # plans keep 6 decimals
    assert plan.objective.value == pytest.approx(79.922156, abs=1e-6)
    assert isinstance(plan.solver.dinkelbach_iterations, int)
    assert plan.solver.dinkelbach_iterations >= 2


def test_max_perf_per_tco_within_a_capex_budget() -> None:
    """As above with capex budget $404,500 (4 liq16 no longer fits):
    2 liq16: capex $323,000, TCO 322,000 + 1,000 + 77,889.60 = $400,889.60 -> 32 / 400,889.60 = 79.8225 PF/$M;
    2 liq16 + 1 air8: 40 / 507,029.60 = 78.891; 1 liq16 + 3 air8: 40 / 519,364.80 = 77.017;
    3 liq16 is over budget.
    """
    data = base_specs()
    data["sites"]["a"]["it_power_mw"] = 0.2
    data["scenarios"]["s"].update(objective="max_perf_per_tco", demand={}, budget={"capex_usd": 404_500})
    cat = catalog_from_dict(data)
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 2)]
    ratio, best = best_ratio_by_enumeration(cat, max_liq=11, max_air=20)
    assert best == (2, 0)
    assert plan.objective.value == pytest.approx(ratio * 1e6, abs=5e-7)
    assert plan.objective.value == pytest.approx(32 / 400_889.60 * 1e6, abs=5e-7)
    assert plan.solver.dinkelbach_iterations >= 2


# --- 9. scale-out fabric -------------------------------------------------------------------------


def test_two_tier_clos_and_optics() -> None:
    """80 chips, 1 endpoint optic per chip on both forms, optics $10 each, 0 W.

    N = 80 x 100 / 100 = 80 ports > radix 64 -> 2 tiers (capacity 2 x 32^2 = 2048);
    switches = ceil(3 x 80 / 64) = ceil(3.75) = 4; switch-side optics 80 x 3 = 240; rack-side 1 x 80 = 80;
    optics 320 x $10 = $3,200. Form: 5 liq16 (liquid is cheaper per chip; the fabric is the same for any mix).
    capex = 5 x 161,000 + 4 x 1,000 + 3,200 = $812,200; TCO = 812,200 + 90 x 2,163.60 = $1,006,924.
    """
    data = base_specs()
    data["forms"]["air8"]["endpoint_optics_per_chip"] = 1
    data["forms"]["liq16"]["endpoint_optics_per_chip"] = 1
    data["switches"]["sw"]["optic_usd"] = 10
    data["scenarios"]["s"]["demand"] = {"chips": 80}
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 5)]
    so = plan.sites["a"].scale_out
    assert (so.switch, so.tiers, so.ports, so.switches, so.optics) == ("sw", 2, 80, 4, 320)
    assert so.network_racks == 1
    optics = [line for line in plan.bom if line.category == "optics"]
    assert [(o.quantity, o.unit_usd, o.extended_usd) for o in optics] == [(320, 10, 3200)]
    assert_usd(plan.totals.capex_usd, 812_200)
    assert_usd(plan.totals.tco_usd, 1_006_924)


def test_network_racks_take_rack_positions() -> None:
    """Air-cheap world, 80 chips, switch 21 U, site a with 11 rack positions.

    Fabric: N = 80 -> 4 switches x 21 U = 84 U -> 2 network racks, whatever the form mix.
    All air (10 air8) needs 10 + 2 = 12 positions > 11 (it would fit if network racks took none).
    With 16 l + 8 a >= 80 and l + a + 2 <= 11, the cheapest is the most air: l = 1, a = 8 (11 positions):
    capex = 175,000 + 8 x 81,000 + 4 x 1,000 = $827,000; opex = 18 x 2,163.60 + 80 x 2,514 = 38,944.80
    + 201,120 = $240,064.80; TCO = $1,067,064.80.
    """
    data = air_cheap()
    data["switches"]["sw"]["rack_units"] = 21
    data["sites"]["a"]["rack_positions"] = 11
    data["scenarios"]["s"]["demand"] = {"chips": 80}
    plan = solve(data)
    assert choices(plan) == [("a", "air8", "air", "none", 8), ("a", "liq16", "liquid", "up", 1)]
    assert plan.sites["a"].scale_out.network_racks == 2
    assert plan.totals.network_racks == 2
    assert plan.sites["a"].utilization.rack_positions == pytest.approx(1.0)
    assert_usd(plan.totals.tco_usd, 1_067_064.80)


def test_network_racks_control_with_one_more_position() -> None:
    """Same with 12 positions: 10 air8 + 2 network racks fit;
    TCO = 810,000 + 4,000 + 100 x 2,514 = $1,065,400."""
    data = air_cheap()
    data["switches"]["sw"]["rack_units"] = 21
    data["sites"]["a"]["rack_positions"] = 12
    data["scenarios"]["s"]["demand"] = {"chips": 80}
    plan = solve(data)
    assert choices(plan) == [("a", "air8", "air", "none", 10)]
    assert_usd(plan.totals.tco_usd, 1_065_400)


def test_network_power_counts_against_site_power() -> None:
    """Air-cheap world, 80 chips, switch 500 W, site a 100 kW.

    Fabric: 4 switches x 0.5 kW = 2 kW (air-cooled, $2,514/kW-year -> $5,028), whatever the form mix.
    All air: 100 kW compute + 2 kW network = 102 kW > 100 (it would fit if the network drew nothing).
    1 liq16 + 8 air8: 18 + 80 + 2 = 100 kW fits exactly, and is the cheapest that does
    (more liq16 costs more).
    capex = 175,000 + 648,000 + 4,000 = $827,000; TCO = 827,000 + 240,064.80 + 5,028 = $1,072,092.80.
    """
    data = air_cheap()
    data["switches"]["sw"]["power_w"] = 500
    data["sites"]["a"]["it_power_mw"] = 0.1
    data["scenarios"]["s"]["demand"] = {"chips": 80}
    plan = solve(data)
    assert choices(plan) == [("a", "air8", "air", "none", 8), ("a", "liq16", "liquid", "up", 1)]
    assert plan.sites["a"].scale_out.it_power_kw == pytest.approx(2)
    assert plan.totals.it_power_kw == pytest.approx(100)
    assert plan.sites["a"].cooling_used == ["air", "liquid"]
    assert_usd(plan.totals.tco_usd, 1_072_092.80)


def test_network_power_control_with_two_more_kw() -> None:
    """Same with 102 kW: 10 air8 fit; TCO = 814,000 + 251,400 + 5,028 = $1,070,428."""
    data = air_cheap()
    data["switches"]["sw"]["power_w"] = 500
    data["sites"]["a"]["it_power_mw"] = 0.102
    data["scenarios"]["s"]["demand"] = {"chips": 80}
    plan = solve(data)
    assert choices(plan) == [("a", "air8", "air", "none", 10)]
    assert_usd(plan.totals.tco_usd, 1_070_428)


def test_bigger_radix_switch_saves_a_tier() -> None:
    """80 chips on sw (radix 64, 2 tiers, 4 x $1,000) or big (radix 128 at 100G, $2,500, 1 tier, 1 switch):
    big wins, $1,500 cheaper: TCO = 5 x 199,944.80 + 2,500 = $1,002,224."""
    data = base_specs()
    data["switches"]["big"] = dict(data["switches"]["sw"], bandwidth_gbps=12800, unit_usd=2500)
    data["scenarios"]["s"]["demand"] = {"chips": 80}
    plan = solve(data)
    assert scale_out_of(plan) == {"a": "big"}
    assert plan.sites["a"].scale_out.tiers == 1
    assert plan.sites["a"].scale_out.switches == 1
    assert_usd(plan.totals.tco_usd, 1_002_224)


# --- 12. infeasible by construction --------------------------------------------------------------


def infeasible(data: dict[str, Any]) -> InfeasibleError:
    with pytest.raises(InfeasibleError) as info:
        plan_scenario(catalog_from_dict(data), "s")
    assert info.value.exit_code == EXIT_INFEASIBLE == 4
    assert info.value.scenario == "s"
    return info.value


def test_infeasible_demand_beyond_all_power() -> None:
    """1,200 chips at a 1 MW site: the least power is all liq16 (1.125 kW per chip < 1.25 for air8),
    75 units x 18 kW = 1,350 kW, network 0 kW (positions 75 + 2 network racks <= 100 are fine):
    the site needs 0.35 MW more IT power, 1.00 -> 1.35 MW."""
    data = base_specs()
    data["scenarios"]["s"]["demand"] = {"chips": 1200}
    err = infeasible(data)
    text = "\n".join(err.explanation)
    assert "a IT power: needs 0.35 MW more (1.00 MW -> 1.35 MW)" in text
    assert "positions" not in text


def test_infeasible_liquid_only_forms_at_an_air_only_site() -> None:
    """Only liq16 exists and site a has air only: liquid cooling at a must be allowed."""
    data = base_specs()
    del data["forms"]["air8"]
    data["sites"]["a"]["cooling"] = ["air"]
    err = infeasible(data)
    assert any("site a has no liquid cooling" in line for line in err.explanation)


def test_infeasible_scale_up_switch_not_yet_available() -> None:
    """Only liq16 exists, its only scale-up switch 'up' ships 2025-01, as_of 2024-06."""
    data = base_specs()
    del data["forms"]["air8"]
    data["scenarios"]["s"]["as_of"] = "2024-06"
    err = infeasible(data)
    assert any("switch up is available from 2025-01, after as_of 2024-06" in line for line in err.explanation)


def test_infeasible_scale_out_switch_not_yet_available() -> None:
    """The only scale-out switch 'sw' ships 2027-01, as_of 2026-06: no site can be wired, so the explanation
    must name the switch and its date (not only "demand cannot be met by any allowed option")."""
    data = base_specs()
    data["switches"]["sw"]["available_from"] = "2027-01"
    data["scenarios"]["s"]["as_of"] = "2026-06"
    err = infeasible(data)
    text = "\n".join(err.explanation)
    assert "sw" in text and "2027-01" in text, text


def test_infeasible_supply_cap_says_how_many_more() -> None:
    """64 chips with supply {x: 10}: 54 more chips needed (every form uses chip x)."""
    data = base_specs()
    data["scenarios"]["s"]["supply"] = {"x": 10}
    err = infeasible(data)
    assert any("supply of x: needs 54 units more (10 units -> 64 units)" in line for line in err.explanation)


def test_infeasible_grid_cap_says_how_many_mw_more() -> None:
    """64 chips under a 50 kW grid: the least facility power is all liq16, 72 kW x 1.1 = 79.2 kW,
    so the grid needs 29.2 kW = 0.03 MW more (0.05 -> 0.08 MW, at two decimals)."""
    data = base_specs()
    data["sites"]["a"]["grid_power_mw"] = 0.05
    err = infeasible(data)
    assert any("a grid power: needs 0.03 MW more (0.05 MW -> 0.08 MW)" in line for line in err.explanation)


def test_infeasible_rack_positions_says_how_many_more() -> None:
    """64 chips in 3 positions: 4 liq16 + 1 network rack = 5 positions, 2 more."""
    data = base_specs()
    data["sites"]["a"]["rack_positions"] = 3
    err = infeasible(data)
    assert any("a rack positions: needs 2 positions more (3 positions -> 5 positions)" in line
               for line in err.explanation)


# --- 13. demand caps (`demand.at_most`) -------------------------------------------------------------


def test_at_most_keeps_a_ratio_objective_at_the_need() -> None:
    """max_perf_per_tco with no cap buys 64 chips (four liq16 share the one $1,000 switch: 64 PF for
    $800,779.20, 79.92 PF per $M; past 64 chips the fabric needs a second tier). Capped at 16 chips, the
    best ratio is one liq16: 16 PF for $199,944.80 + the switch = $200,944.80 (79.62 PF per $M), against
    two air8 at $213,280 (75.02)."""
    data = base_specs()
    data["scenarios"]["s"].update(objective="max_perf_per_tco", demand={"at_most": {"chips": 16}})
    plan = solve(data, alternatives=0)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 1)]
    assert_usd(plan.totals.tco_usd, 200_944.80)
    assert "demand cap chips: 16 chips of 16 chips" in plan.binding
    uncapped = base_specs()
    uncapped["scenarios"]["s"].update(objective="max_perf_per_tco", demand={})
    assert solve(uncapped, alternatives=0).totals.chips == 64


def test_at_most_below_the_demand_is_refused() -> None:
    data = base_specs()
    data["scenarios"]["s"]["demand"] = {"chips": 64, "at_most": {"chips": 32}}
    with pytest.raises(ValueError, match="at_most.chips 32 is below the demand's chips 64"):
        catalog_from_dict(data)


def test_at_most_that_no_unit_size_meets_says_how_far_the_cap_must_give() -> None:
    """10 to 12 chips with only liq16 (16 chips a unit): the cap must rise by 4 chips, 12 -> 16."""
    data = base_specs()
    del data["forms"]["air8"]
    data["scenarios"]["s"]["demand"] = {"chips": 10, "at_most": {"chips": 12}}
    err = infeasible(data)
    assert any("demand cap chips: needs 4 chips more (12 chips -> 16 chips)" in line
               for line in err.explanation), err.explanation


# --- 14. the scenario's own levers, and nothing that qualifies ---------------------------------------


def test_levers_say_how_much_of_the_demand_fits() -> None:
    """1,200 chips at the 1 MW site: 55 liq16 draw 990 kW and one air8 the last 10 kW, so at most
    55 x 16 + 8 = 888 chips fit (56 racks + 1 network rack of 100 positions)."""
    data = base_specs()
    data["scenarios"]["s"]["demand"] = {"chips": 1200}
    err = infeasible(data)
    assert err.explanation[-2] == "levers in the scenario:"
    assert err.explanation[-1] == (
        "  demand.chips: at most 888 chips fit (the scenario asks for 1,200 chips): "
        "--set scenarios.s.demand.chips=888"
    )


def test_nothing_in_the_catalog_qualifies_for_a_chip_without_a_form() -> None:
    """The scenario allows only chip y, which no form uses: no capacity can help, and it says so."""
    data = base_specs()
    data["chips"]["y"] = {**data["chips"]["x"], "name": "Y"}
    data["scenarios"]["s"]["chips"] = ["y"]
    err = infeasible(data)
    assert err.explanation[0].startswith("nothing in the catalog qualifies")
    assert "no form uses chip y (the scenario's chips: [y])" in err.explanation[1]
    assert not any("needs" in line and "more" in line for line in err.explanation)


def test_min_domain_lever_names_the_largest_domain_and_what_then_fits() -> None:
    """min_domain_chips 32 blocks both forms (8- and 16-chip domains); at 16, liq16 is allowed and the
    64 chips fit (at most 55 x 16 = 880 chips of liq16 in 1 MW, air8 still blocked)."""
    data = base_specs()
    data["scenarios"]["s"]["min_domain_chips"] = 32
    err = infeasible(data)
    text = "\n".join(err.explanation)
    assert ("min_domain_chips 32: liq16 has 16-chip domains; nothing fits at 32, at most 880 chips at 16: "
            "--set scenarios.s.min_domain_chips=16") in text, text


def test_as_of_lever_names_what_a_later_month_brings() -> None:
    """Only liq16, whose scale-up switch ships 2025-01, as_of 2024-06: with as_of 2025-01 it fits."""
    data = base_specs()
    del data["forms"]["air8"]
    data["scenarios"]["s"]["as_of"] = "2024-06"
    err = infeasible(data)
    text = "\n".join(err.explanation)
    assert ("as_of 2024-06: not yet available: up (2025-01); with as_of 2025-01, at most 880 chips fit: "
            "--set scenarios.s.as_of=2025-01") in text, text


def test_an_explanation_the_time_limit_cut_short_says_so() -> None:
    """With no time left, the elastic re-solves do not run: that is said, not "no relaxation helps"."""
    from trnplan.optimize.explain import explain_infeasible
    from trnplan.optimize.progress import Deadline

    data = base_specs()
    data["scenarios"]["s"]["demand"] = {"chips": 1200}
    lines = explain_infeasible(catalog_from_dict(data), "s", "highs", Deadline(0))
    assert lines == [
        "not explained: the time limit ran out before the elastic re-solves did; raise --time-limit"
    ]
