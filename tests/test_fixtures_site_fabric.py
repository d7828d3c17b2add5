"""Hand-worked fixtures for site ownership, an oversubscribed first tier, copper rack-to-leaf links and
network rack kits, on `base_specs()` (see tests/test_optimize_fixtures.py for its unit figures: horizon 1
year, CRF 1, utilization 1, no maintenance, so TCO = capex + one year of opex; opex per IT kW-year is
energy $1,314.00 air / $963.60 liquid + colocation $1,200; air8 = 8 chips, 10 kW, capex $81,000;
liq16 = 16 chips, 18 kW, capex $161,000; one $1,000 switch of radix 64 at 100 Gb/s, 0 W, free optics).

Every plan is re-checked with `check_plan` (PuLP-free); the brute-force oracle must agree where a fixture
says so.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_optimize_fixtures import assert_usd, choices, solve

from trnplan.testkit.builders import base_specs, catalog_from_dict
from trnplan.testkit.oracle import TooBig, best_plan


def owned(build_usd_per_mw: float, plant: dict[str, float]) -> dict[str, Any]:
    """The base world with site a owned: no rent; the hall's build and each cooling's plant are capex."""
    data = base_specs()
    data["sites"]["a"].update(ownership="owned", build_usd_per_mw=build_usd_per_mw)
    for cooling_id, usd in plant.items():
        data["cooling"][cooling_id]["plant_usd_per_kw"] = usd
    return data


# --- ownership ------------------------------------------------------------------------------------


def test_a_colocation_site_does_not_pay_the_plant() -> None:
    """Plant prices on a colocation site change nothing: its rent ($100/kW-month) pays for the plant.
    4 liq16 + 1 switch: capex $645,000, TCO 645,000 + 72 x 2,163.60 = $800,779.20, as the base world."""
    data = base_specs()
    data["cooling"]["liquid"]["plant_usd_per_kw"] = 300
    data["cooling"]["air"]["plant_usd_per_kw"] = 200
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert_usd(plan.totals.capex_usd, 645_000)
    assert_usd(plan.totals.tco_usd, 800_779.20)
    assert not [line for line in plan.bom if "plant" in line.item or line.category == "hall"]


def test_an_owned_site_pays_build_and_plant_instead_of_rent() -> None:
    """Owned a: build $1,000,000/MW = $1,000/kW, plant liquid $300/kW, air $200/kW, no colocation.
    liq16: capex 161,000 + 18 x (300 + 1,000) = $184,400, opex 18 x 963.60 = $17,344.80 -> $12,609.05/chip;
    air8: capex 81,000 + 10 x 1,200 = $93,000, opex 10 x 1,314 = $13,140 -> $13,267.50/chip: liquid.
    4 liq16 + 1 switch: capex 4 x 184,400 + 1,000 = $738,600; TCO 738,600 + 4 x 17,344.80 = $807,979.20;
    colocation $0; BOM: hall build 72 kW x $1,000 = $72,000, liquid plant 72 kW x $300 = $21,600."""
    data = owned(1_000_000, {"liquid": 300, "air": 200})
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert_usd(plan.totals.capex_usd, 738_600)
    assert_usd(plan.totals.tco_usd, 807_979.20)
    assert plan.totals.colocation_usd_per_year == 0
    hall = [line for line in plan.bom if line.category == "hall"]
    assert [(line.quantity, line.extended_usd) for line in hall] == [(72, 72_000)]
    plant = [line for line in plan.bom if "plant" in line.item]
    assert [(line.quantity, line.extended_usd) for line in plant] == [(72, 21_600)]
    value, _ = best_plan(catalog_from_dict(data), "s") or (None, None)
    assert value is not None and abs(value - plan.totals.tco_usd) < 0.02


def test_a_dear_liquid_plant_makes_air_win_at_an_owned_site() -> None:
    """Owned a with a liquid plant of $1,000/kW: liq16 capex 161,000 + 18 x 2,000 = $197,000, TCO per unit
    $214,344.80 = $13,396.55/chip, above air8's $13,267.50: 8 air8 + 1 switch, capex 8 x 93,000 + 1,000 =
    $745,000, TCO 745,000 + 8 x 13,140 = $850,120 (the choice the source article says AWS makes per site)."""
    plan = solve(owned(1_000_000, {"liquid": 1000, "air": 200}))
    assert choices(plan) == [("a", "air8", "air", "none", 8)]
    assert_usd(plan.totals.capex_usd, 745_000)
    assert_usd(plan.totals.tco_usd, 850_120)


# --- oversubscription -----------------------------------------------------------------------------


def two_tier(oversubscription: float | None) -> dict[str, Any]:
    """128 chips (8 liq16, 144 kW): 128 ports at radix 64 need two tiers; optics $100 each, 0 W."""
    data = base_specs()
    data["scenarios"]["s"]["demand"] = {"chips": 128}
    data["switches"]["sw"]["optic_usd"] = 100
    if oversubscription is not None:
        data["scenarios"]["s"]["fabric"] = {"oversubscription": oversubscription}
    return data


def test_non_blocking_by_default_and_at_one() -> None:
    """r = 1 (or left out): switches ceil(3 x 128 / 64) = 6, optics 3 x 128 = 384; capex 8 x 161,000 +
    6,000 + 38,400 = $1,332,400; TCO 1,332,400 + 144 x 2,163.60 = $1,643,958.40."""
    for r in (None, 1):
        plan = solve(two_tier(r))
        fabric = plan.sites["a"].scale_out
        assert (fabric.tiers, fabric.ports, fabric.switches, fabric.optics) == (2, 128, 6, 384)
        assert_usd(plan.totals.tco_usd, 1_643_958.40)


def test_an_oversubscribed_first_tier_needs_fewer_uplinks() -> None:
    """r = 3: leaf uplinks U = ceil(128 / 3) = 43; switch ports 128 + 2 x 43 = 214, switches ceil(214 / 64)
    = 4, optics 214; capex 1,288,000 + 4,000 + 21,400 = $1,313,400; TCO 1,313,400 + 311,558.40 =
    $1,624,958.40 (two tiers of radix 64 now reach 2 x 32 x 48 = 3,072 ports)."""
    data = two_tier(3)
    plan = solve(data)
    fabric = plan.sites["a"].scale_out
    assert (fabric.tiers, fabric.ports, fabric.switches, fabric.optics) == (2, 128, 4, 214)
    assert_usd(plan.totals.capex_usd, 1_313_400)
    assert_usd(plan.totals.tco_usd, 1_624_958.40)
    value, _ = best_plan(catalog_from_dict(data), "s") or (None, None)
    assert value is not None and abs(value - plan.totals.tco_usd) < 0.02


# --- copper rack-to-leaf links and network rack kits ----------------------------------------------------


def with_optics(copper: bool) -> dict[str, Any]:
    """liq16 with one rack-side port-equivalent per chip; optics $100 and 10 W each; air cools the network
    ($2,514 per kW-year). Copper: AECs at $30 and 2 W per link instead of the rack-side and leaf optics."""
    data = base_specs()
    data["forms"]["liq16"]["endpoint_optics_per_chip"] = 1
    data["switches"]["sw"].update(optic_usd=100, optic_w=10)
    if copper:
        data["forms"]["liq16"].update(endpoint_links="copper", copper_usd=30, copper_w=2)
    return data


def test_optical_links() -> None:
    """64 chips, 4 liq16, one switch: optics 64 switch-side + 64 rack-side = 128 = $12,800 and 1.28 kW;
    capex 644,000 + 1,000 + 12,800 = $657,800; TCO 657,800 + 155,779.20 + 1.28 x 2,514 = $816,797.12."""
    plan = solve(with_optics(copper=False))
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert plan.sites["a"].scale_out.optics == 128
    assert_usd(plan.totals.tco_usd, 816_797.12)


def test_copper_links_carry_no_optics() -> None:
    """Copper: 64 links x $30 = $1,920 in the racks' lines, no optic at either end, 64 x 2 W = 0.128 kW;
    capex 4 x 161,480 + 1,000 = $646,920; TCO 646,920 + 155,779.20 + 0.128 x 2,514 = $803,020.99."""
    data = with_optics(copper=True)
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 4)]
    assert plan.sites["a"].scale_out.optics == 0
    copper = [line for line in plan.bom if line.category == "copper"]
    assert [(line.quantity, line.extended_usd) for line in copper] == [(64, 1_920)]
    assert_usd(plan.totals.capex_usd, 646_920)
    assert_usd(plan.totals.tco_usd, 803_020.99)
    assert plan.sites["a"].scale_out.it_power_kw == 0.128
    value, _ = best_plan(catalog_from_dict(data), "s") or (None, None)
    assert value is not None and abs(value - plan.totals.tco_usd) < 0.02


def test_a_network_rack_costs_its_kit() -> None:
    """rack_usd $5,000: the one network rack (1 switch x 1U) adds $5,000: TCO $805,779.20."""
    data = base_specs()
    data["scenarios"]["s"]["fabric"] = {"rack_usd": 5000}
    plan = solve(data)
    assert plan.totals.network_racks == 1
    assert_usd(plan.totals.tco_usd, 805_779.20)
    assert [line.extended_usd for line in plan.bom if line.category == "network"] == [5000]


def test_a_fabric_on_copper_alone_draws_nothing_and_pays_no_cooling_fit_out() -> None:
    """Switches that draw no power, copper links from liq16 to the leaf: a 16-chip liq16 fabric draws 0 kW
    (no optic at either end), so the air fit-out (the fabric's cooling) is not paid, only the liquid one.
    Fit-outs: air $5,000, liquid $14,000. liq16: 161,000 + 1,000 switch + 14,000 + 18 kW x 2,163.60
    = $214,944.80. Two air8 (their fabric optical, 10 W per switch-side optic): 2 x 106,140 + 1,000 +
    5,000 = $218,280 (+ the optics' energy). Charging liq16 the air fit-out too would make air8 win."""
    data = base_specs()
    data["switches"]["sw"]["optic_w"] = 10
    data["forms"]["liq16"].update(
        {"endpoint_links": "copper", "copper_usd": 0, "copper_w": 0, "endpoint_optics_per_chip": 1}
    )
    data["sites"]["a"]["cooling_fixed_usd"] = {"air": 5000, "liquid": 14000}
    data["scenarios"]["s"]["demand"] = {"chips": 16}
    plan = solve(data)
    assert choices(plan) == [("a", "liq16", "liquid", "up", 1)]
    assert [line.item for line in plan.bom if line.category == "site"] == ["liquid cooling fit-out, one-off"]
    assert_usd(plan.totals.tco_usd, 214_944.80)
    truth = best_plan(catalog_from_dict(data), "s")
    assert truth is not None
    assert_usd(plan.objective.value if plan.objective else 0, truth[0])


def test_the_oracle_stops_before_pricing_a_world_past_its_caps() -> None:
    """`best_plan`'s caps (what the property tests allow a drawn world): past one, `TooBig` is raised before
    the work; within them, the same optimum as without."""
    catalog = catalog_from_dict(owned(1_000_000, {"liquid": 300, "air": 200}))
    value, _ = best_plan(catalog, "s") or (None, None)
    assert value is not None
    assert (best_plan(catalog, "s", max_priced=10_000, max_combined=10_000) or (None,))[0] == value
    with pytest.raises(TooBig, match="unit vectors"):
        best_plan(catalog, "s", max_priced=1)
    with pytest.raises(TooBig, match="combinations of the sites' plans"):
        best_plan(catalog, "s", max_combined=1)
