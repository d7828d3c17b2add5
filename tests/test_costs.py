"""The cost model (trnplan.costs) against figures worked out by hand from `base_specs()`.

The base world: chip x $10,000, 1 kW, 1 PF FP8, 100 Gb/s scale-out; air8 = 8 chips, 10 kW/rack, kit $1,000;
liq16 = 16 chips, 18 kW/rack, kit $1,000, one free scale-up switch per rack; scale-out switch sw radix 64,
$1,000; air PUE 1.5, liquid PUE 1.1; site a: $0.10/kWh, $100/kW-month.
"""

from __future__ import annotations

import decimal
from typing import Any

import pytest

from trnplan.catalog import Catalog
from trnplan.costs import (
    Deployment,
    Reason,
    crf,
    evaluate,
    make_option,
    opex_usd_per_kw_year,
    option_problems,
    tco_per_capex_usd,
)
from trnplan.numbers import cents
from trnplan.testkit.builders import base_specs, catalog_from_dict


def catalog(data: dict[str, Any]) -> Catalog:
    return catalog_from_dict(data)


def with_economics(data: dict[str, Any]) -> dict[str, Any]:
    """Scenario s over 5 years at 10% cost of capital, 80% utilization, 3% maintenance."""
    data["scenarios"]["s"].update(
        horizon_years=5, cost_of_capital=0.10, utilization=0.8, maintenance_rate=0.03
    )
    return data


# --- capital recovery -----------------------------------------------------------------------------


def test_crf_known_value() -> None:
    """r = 0.1, n = 5: 1.1^5 = 1.61051; CRF = 0.1 x 1.61051 / 0.61051 = 0.2637974808."""
    assert crf(0.10, 5) == pytest.approx(0.26379748079474524, rel=1e-12)


@pytest.mark.parametrize("years", [1, 4, 5, 30])
def test_crf_zero_rate_is_straight_line(years: int) -> None:
    assert crf(0.0, years) == 1.0 / years


def test_crf_one_year_is_one_plus_rate() -> None:
    """n = 1: r (1 + r) / r = 1 + r."""
    assert crf(0.07, 1) == pytest.approx(1.07)


@pytest.mark.parametrize("rate", [1e-17, 1e-300, 5e-324, 1e-13, 1e-9, 1e-5, 9.99e-4])
@pytest.mark.parametrize("years", [0.5, 1, 5, 30])
def test_crf_tiny_rate_is_stable(rate: float, years: float) -> None:
    """Where 1 + r is 1 (1e-17, 5e-324) the formula as written divided by zero; near it, it lost digits to
    cancellation. Against the formula in 400-digit decimals (1 + 5e-324 needs 324 of them)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 400
        r, n = decimal.Decimal(rate), decimal.Decimal(years)
        growth = (1 + r) ** n
        expected = float(r * growth / (growth - 1))
    assert crf(rate, years) == pytest.approx(expected, rel=1e-13, abs=0)
    assert crf(rate, years) >= 1 / years


def test_tco_per_capex_usd() -> None:
    """horizon x (CRF + maintenance) = 5 x (0.2637974808 + 0.03) = 1.468987404."""
    scenario = catalog(with_economics(base_specs())).scenarios["s"]
    assert tco_per_capex_usd(scenario) == pytest.approx(5 * (0.26379748079474524 + 0.03))


# --- per-option figures ---------------------------------------------------------------------------


def test_make_option_liq16() -> None:
    """liq16 with switch 'up' (made 250 W, $300): rack kW = 16 x 1 + 2 + 1 x 0.25 = 18.25;
    capex = 16 x $10,000 + $1,000 kit + $300 switch + 18.25 kW x $40/kW liquid cooling
          = $161,300 + $730 = $162,030.
    """
    data = base_specs()
    data["switches"]["up"].update(power_w=250, unit_usd=300)
    data["cooling"]["liquid"]["capex_usd_per_kw"] = 40
    data["forms"]["liq16"]["endpoint_optics_per_chip"] = 2
    opt = make_option(catalog(data), "liq16", "liquid", "up")
    assert (opt.racks, opt.chips, opt.domains) == (1, 16, 1)
    assert (opt.scale_up_switches, opt.endpoint_optics) == (1, 32)
    assert opt.rack_it_kw == pytest.approx(18.25)
    assert opt.it_kw == pytest.approx(18.25)
    assert opt.fp8_pflops == pytest.approx(16.0)
    assert opt.hbm_tb == pytest.approx(16 * 96 / 1000)
    assert opt.scale_out_gbps == pytest.approx(1600)
    assert opt.capex_usd == pytest.approx(162_030.0)


def test_make_option_multi_rack_unit() -> None:
    """A 2-rack unit of air8 with 4-chip domains: 16 chips, 4 domains, 20 kW, 2 kits: $162,000."""
    data = base_specs()
    data["forms"]["air8"].update(racks_per_unit=2, domain_chips=4)
    opt = make_option(catalog(data), "air8", "air", "none")
    assert (opt.racks, opt.chips, opt.domains) == (2, 16, 4)
    assert opt.it_kw == pytest.approx(20.0)
    assert opt.capex_usd == pytest.approx(162_000.0)


def test_opex_per_kw_year() -> None:
    """Air at site a, utilization 1: 1.5 x 8760 x $0.10 = $1,314 energy + $100 x 12 = $1,200 colocation."""
    cat = catalog(base_specs())
    site, scenario = cat.sites["a"], cat.scenarios["s"]
    assert opex_usd_per_kw_year(site, 1.5, scenario) == pytest.approx(2514.0)
    assert opex_usd_per_kw_year(site, 1.1, scenario) == pytest.approx(963.6 + 1200)


def test_option_problems_names_each_reason() -> None:
    data = base_specs()
    data["sites"]["a"].update(cooling=["air"], max_rack_kw=15)
    data["switches"]["up"]["available_from"] = "2027-01"
    data["scenarios"]["s"].update(as_of="2026-06", min_domain_chips=32)
    cat = catalog(data)
    why = option_problems(cat, cat.scenarios["s"], "a", "liq16", "liquid", "up")
    assert [str(r) for r in why] == [
        "site a has no liquid cooling",
        "form liq16 has 16-chip domains, under min_domain_chips 32",
        "switch up is available from 2027-01, after as_of 2026-06",
        "a liq16 rack draws 18 kW, over site a's 15 kW per rack",
    ]
    assert [str(r) for r in option_problems(cat, cat.scenarios["s"], "a", "air8", "liquid", "none")] == [
        "form air8 does not support liquid cooling",
        "site a has no liquid cooling",
        "form air8 has 8-chip domains, under min_domain_chips 32",
    ]


def test_option_problems_are_hard_only_where_no_relaxation_could_allow_the_option() -> None:
    """liq16 with air cooling at a liquid-only site, every filter against it: what the specs of the form,
    the cooling and the scenario's own choice rule out is hard (an infeasibility explanation must not
    offer to lift it); what the site, the dates and the domain size rule out is soft."""
    data = base_specs()
    data["chips"]["x"]["available_from"] = "2027-01"
    data["cooling"]["air"]["max_rack_kw"] = 17
    data["sites"]["a"].update(cooling=["liquid"], max_rack_kw=15)
    data["switches"]["up"]["available_from"] = "2027-01"
    data["scenarios"]["s"].update(as_of="2026-06", min_domain_chips=32, forms=["air8"], chips=["y"])
    cat = catalog(data)
    why = option_problems(cat, cat.scenarios["s"], "a", "liq16", "air", "up")
    assert [(r.text, r.hard) for r in why] == [
        ("form liq16 is not among the scenario's forms", True),
        ("chip x is not among the scenario's chips", True),
        ("chip x is available from 2027-01, after as_of 2026-06", False),
        ("form liq16 does not support air cooling", True),
        ("site a has no air cooling", False),
        ("site a has no air cooling for the scale-out network (fabric.cooling)", False),
        ("form liq16 has 16-chip domains, under min_domain_chips 32", False),
        ("switch up is available from 2027-01, after as_of 2026-06", False),
        ("a liq16 rack draws 18 kW, over air cooling's 17 kW", True),
        ("a liq16 rack draws 18 kW, over site a's 15 kW per rack", False),
    ]
    assert all(isinstance(r, Reason) and str(r) == r.text for r in why)


# --- a whole deployment ---------------------------------------------------------------------------


def test_tco_of_a_hand_computed_deployment() -> None:
    """2 units of liq16 at site a, 5 years at 10%, utilization 0.8, maintenance 3%.

    capex = 2 x (16 x $10,000 + $1,000) + 1 scale-out switch (32 ports <= 64) x $1,000 = $323,000
    IT kW = 2 x 18 = 36 (liquid, PUE 1.1)
    energy = 36 x 0.8 x 1.1 x 8760 x $0.10 = $27,751.68 / year
    colocation = 36 x $100 x 12 = $43,200 / year
    maintenance = $323,000 x 0.03 = $9,690 / year
    opex = $27,751.68 + $43,200 + $9,690 = $80,641.68 / year
    TCO = 5 x ($323,000 x 0.2637974808 + $80,641.68) = 5 x ($85,206.5863 + $80,641.68) = $829,241.33
    """
    cat = catalog(with_economics(base_specs()))
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "liq16", "liquid", "up", 2)], {"a": "sw"})
    t = ev.totals
    assert t.capex_usd == 323_000
    assert t.it_power_kw == pytest.approx(36)
    assert t.facility_power_kw == pytest.approx(39.6)
    assert t.energy_usd_per_year == pytest.approx(27_751.68)
    assert t.colocation_usd_per_year == pytest.approx(43_200)
    assert t.maintenance_usd_per_year == pytest.approx(9_690)
    assert t.opex_usd_per_year == pytest.approx(80_641.68)
    assert cents(t.tco_usd) == 82_924_133
    assert t.tco_usd == pytest.approx(5 * (t.capex_usd * crf(0.10, 5) + t.opex_usd_per_year))
    assert (t.chips, t.units, t.domains, t.racks, t.network_racks) == (32, 2, 2, 2, 1)
    assert t.fp8_pflops == pytest.approx(32)
    assert t.usd_per_pflop_hour == pytest.approx(829_241.3314835 / (32 * 8760 * 5))
    assert t.usd_per_chip_hour == pytest.approx(829_241.3314835 / (32 * 8760 * 5))


def test_opex_is_energy_plus_colocation_plus_maintenance() -> None:
    """Two sites, two coolings: per-site energy and colocation add up to the totals, and
    opex = energy + colocation + maintenance.

    site a: 1 air8 (10 kW air) + 1 liq16 (18 kW liquid);
    site b ($0.05/kWh, $50/kW-month): 2 air8 (20 kW air)
    energy a = 10 x 0.8 x 1.5 x 876 + 18 x 0.8 x 1.1 x 876 = 10,512 + 13,875.84 = $24,387.84
    energy b = 20 x 0.8 x 1.5 x 438 = $10,512
    colocation = 28 x 1200 + 20 x 600 = 33,600 + 12,000 = $45,600
    capex = a: 81,000 + 161,000 + 1,000 = 243,000; b: 162,000 + 1,000 = 163,000; total $406,000
    maintenance = 406,000 x 0.03 = $12,180; opex = 24,387.84 + 10,512 + 45,600 + 12,180 = $92,679.84
    """
    data = with_economics(base_specs())
    data["sites"]["b"] = dict(
        data["sites"]["a"], electricity_usd_per_kwh=0.05, colocation_usd_per_kw_month=50
    )
    data["scenarios"]["s"]["sites"] = ["a", "b"]
    cat = catalog(data)
    deployments = [
        Deployment("a", "air8", "air", "none", 1),
        Deployment("a", "liq16", "liquid", "up", 1),
        Deployment("b", "air8", "air", "none", 2),
    ]
    ev = evaluate(cat, cat.scenarios["s"], deployments, {"a": "sw", "b": "sw"})
    a, b, t = ev.sites["a"], ev.sites["b"], ev.totals
    assert a.energy_usd_per_year == pytest.approx(24_387.84)
    assert b.energy_usd_per_year == pytest.approx(10_512)
    assert a.colocation_usd_per_year == pytest.approx(33_600)
    assert b.colocation_usd_per_year == pytest.approx(12_000)
    assert (a.capex_usd, b.capex_usd, t.capex_usd) == (243_000, 163_000, 406_000)
    assert a.cooling_used == ["air", "liquid"]
    assert b.cooling_used == ["air"]
    assert t.energy_usd_per_year == pytest.approx(34_899.84)
    assert t.colocation_usd_per_year == pytest.approx(45_600)
    assert t.maintenance_usd_per_year == pytest.approx(12_180)
    assert t.opex_usd_per_year == pytest.approx(92_679.84)
    assert a.opex_usd_per_year + b.opex_usd_per_year == pytest.approx(t.opex_usd_per_year)


def test_rack_side_optics_priced_at_the_scale_out_switch() -> None:
    """2 liq16 with 1 endpoint optic per chip, optics $10 and 2 W on sw:
    N = 32 ports (1 tier) -> 32 switch-side optics + 32 rack-side optics = 64 optics -> $640, 0.128 kW;
    capex = $322,000 + $1,000 + $640 = $323,640.
    """
    data = base_specs()
    data["forms"]["liq16"]["endpoint_optics_per_chip"] = 1
    data["switches"]["sw"].update(optic_usd=10, optic_w=2)
    cat = catalog(data)
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "liq16", "liquid", "up", 2)], {"a": "sw"})
    fab = ev.sites["a"].fabric
    assert fab is not None
    assert (fab.switch_optics, fab.endpoint_optics, fab.optics) == (32, 32, 64)
    assert fab.it_power_kw == pytest.approx(0.128)
    optics = [line for line in ev.bom if line.category == "optics"]
    assert [(line.quantity, line.unit_usd, line.extended_usd) for line in optics] == [(64, 10, 640)]
    assert ev.totals.capex_usd == 323_640
    assert ev.sites["a"].it_power_kw == pytest.approx(36.128)


# --- the BOM --------------------------------------------------------------------------------------


def awkward_prices() -> dict[str, Any]:
    """Prices with sub-cent parts, so each line's rounding to the cent shows.

    1 air8: chips 8 x $1,250.0005 = $10,000.004 -> $10,000.00; kit $999.994 -> $999.99;
    1 scale-out switch $1,000.004 -> $1,000.00; air cooling 10 kW x $0 -> $0.
    Lines: $11,999.99; the unrounded sum $12,000.002 would round to $12,000.00.
    """
    data = base_specs()
    data["chips"]["x"]["unit_usd"] = 1250.0005
    data["forms"]["air8"]["rack_bom"] = [{"item": "kit", "qty": 1, "unit_usd": 999.994}]
    data["switches"]["sw"]["unit_usd"] = 1000.004
    return data


def test_bom_lines_sum_to_capex_to_the_cent() -> None:
    cat = catalog(awkward_prices())
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "air8", "air", "none", 1)], {"a": "sw"})
    for line in ev.bom:
        assert cents(line.extended_usd) == cents(line.quantity * line.unit_usd)
    assert sum(cents(line.extended_usd) for line in ev.bom) == cents(ev.totals.capex_usd) == 1_199_999


def test_site_capex_equals_its_bom_lines_to_the_cent() -> None:
    """A plan states each site's capex next to a BOM by site; the two must agree to the cent,
    and the sites' capex must add up to the total ($11,999.99, see `awkward_prices`)."""
    cat = catalog(awkward_prices())
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "air8", "air", "none", 1)], {"a": "sw"})
    site_lines = sum(cents(line.extended_usd) for line in ev.bom if line.site == "a")
    assert cents(ev.sites["a"].capex_usd) == site_lines == 1_199_999


def test_bom_with_fractional_cooling_kw() -> None:
    """Chip 333 W, overhead 0.7 kW: an air8 rack draws 8 x 0.333 + 0.7 = 3.364 kW; 3 units = 10.092 kW;
    at $7.77/kW the cooling line is 10.092 x 7.77 = $78.41484 -> $78.41, with it_kw 10.092.
    capex = 24 x $10,000 + 3 x $1,000 + $78.41 + $1,000 = $244,078.41.
    """
    data = base_specs()
    data["chips"]["x"]["tdp_w"] = 333
    data["forms"]["air8"]["rack_overhead_kw"] = 0.7
    data["cooling"]["air"]["capex_usd_per_kw"] = 7.77
    cat = catalog(data)
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "air8", "air", "none", 3)], {"a": "sw"})
    cooling = [line for line in ev.bom if line.category == "cooling"]
    assert len(cooling) == 1
    assert cooling[0].quantity == pytest.approx(10.092)
    assert cooling[0].it_kw == pytest.approx(10.092)
    assert cooling[0].extended_usd == 78.41
    assert ev.totals.capex_usd == 244_078.41
    assert sum(cents(line.extended_usd) for line in ev.bom) == 24_407_841


def test_bom_merges_equal_lines_across_deployments() -> None:
    """liq16 with two scale-up switches: the chips, kits and cooling lines merge (same item and price),
    the two switch lines stay apart: 2 units with up ($0) + 1 with up2 ($50)
    -> chips 48, kit 3, up 2, up2 1."""
    data = base_specs()
    data["switches"]["up2"] = dict(data["switches"]["up"], unit_usd=50)
    data["forms"]["liq16"]["scale_up"].append({"switch": "up2", "per_rack": 1})
    cat = catalog(data)
    deployments = [Deployment("a", "liq16", "liquid", "up", 2), Deployment("a", "liq16", "liquid", "up2", 1)]
    ev = evaluate(cat, cat.scenarios["s"], deployments, {"a": "sw"})
    by_item = {line.item: line.quantity for line in ev.bom}
    assert by_item["X (x)"] == 48
    assert by_item["kit (liq16)"] == 3
    assert by_item["up (up)"] == 2
    assert by_item["up2 (up2)"] == 1
    assert by_item["liquid cooling capacity, kW (liquid)"] == 54
    assert ev.totals.capex_usd == 3 * 161_000 + 50 + 1_000


# --- one-off cooling costs ------------------------------------------------------------------------


def fixed_cooling_specs(switch_power_w: float = 0, fabric_cooling: str = "air") -> dict[str, Any]:
    """Sites a and b with one-off fit-out costs: a {air: $5,000, liquid: $7,000}, b {liquid: $11,000}."""
    data = base_specs()
    data["sites"]["a"]["cooling_fixed_usd"] = {"air": 5000, "liquid": 7000}
    data["sites"]["b"] = dict(data["sites"]["a"], cooling_fixed_usd={"liquid": 11000})
    data["switches"]["up2"] = dict(data["switches"]["up"])
    data["forms"]["liq16"]["scale_up"].append({"switch": "up2", "per_rack": 1})
    data["switches"]["sw"]["power_w"] = switch_power_w
    data["scenarios"]["s"]["sites"] = ["a", "b"]
    data["scenarios"]["s"]["fabric"] = {"cooling": fabric_cooling}
    return data


def fit_outs(ev: Any) -> list[tuple[str, str, float, float]]:
    return [
        (line.site, line.item, line.quantity, line.extended_usd) for line in ev.bom if line.category == "site"
    ]


def test_cooling_fixed_cost_once_per_site_per_cooling_used() -> None:
    """a: 2 liq16/up + 1 liq16/up2 (two liquid deployments) + 1 air8 -> liquid $7,000 once, air $5,000 once;
    b: 1 liq16 -> liquid $11,000 once. Network draws nothing, so it uses no cooling.
    capex = a: 3 x 161,000 + 81,000 + 1,000 + 7,000 + 5,000 = $577,000;
            b: 161,000 + 1,000 + 11,000 = $173,000; total $750,000.
    """
    cat = catalog(fixed_cooling_specs())
    deployments = [
        Deployment("a", "liq16", "liquid", "up", 2),
        Deployment("a", "liq16", "liquid", "up2", 1),
        Deployment("a", "air8", "air", "none", 1),
        Deployment("b", "liq16", "liquid", "up", 1),
    ]
    ev = evaluate(cat, cat.scenarios["s"], deployments, {"a": "sw", "b": "sw"})
    assert fit_outs(ev) == [
        ("a", "air cooling fit-out, one-off", 1, 5000),
        ("a", "liquid cooling fit-out, one-off", 1, 7000),
        ("b", "liquid cooling fit-out, one-off", 1, 11000),
    ]
    assert ev.sites["a"].capex_usd == 3 * 161_000 + 81_000 + 1_000 + 12_000
    assert ev.sites["b"].capex_usd == 173_000
    assert ev.totals.capex_usd == 750_000


def test_cooling_fixed_cost_not_charged_for_unused_cooling() -> None:
    """a: liquid compute only, network draws 0 kW -> only liquid's $7,000; air's $5,000 is not charged."""
    cat = catalog(fixed_cooling_specs())
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "liq16", "liquid", "up", 1)], {"a": "sw"})
    assert ev.sites["a"].cooling_used == ["liquid"]
    assert fit_outs(ev) == [("a", "liquid cooling fit-out, one-off", 1, 7000)]
    assert ev.totals.capex_usd == 161_000 + 1_000 + 7_000


def test_cooling_fixed_cost_counts_the_network_cooling() -> None:
    """a: liquid compute only, but the switch draws 100 W and the fabric is air-cooled, so air serves
    0.1 kW at a and its $5,000 fit-out applies too: capex = 161,000 + 1,000 + 7,000 + 5,000 = $174,000.
    The network's 0.1 kW is billed at air's PUE: facility kW = 18 x 1.1 + 0.1 x 1.5 = 19.95.
    """
    cat = catalog(fixed_cooling_specs(switch_power_w=100))
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "liq16", "liquid", "up", 1)], {"a": "sw"})
    assert ev.sites["a"].cooling_used == ["air", "liquid"]
    assert fit_outs(ev) == [
        ("a", "air cooling fit-out, one-off", 1, 5000),
        ("a", "liquid cooling fit-out, one-off", 1, 7000),
    ]
    assert ev.totals.capex_usd == 174_000
    assert ev.sites["a"].facility_power_kw == pytest.approx(19.95)
    assert ev.sites["a"].it_power_kw == pytest.approx(18.1)


def test_cooling_fixed_cost_network_on_the_same_cooling_is_charged_once() -> None:
    """fabric.cooling = liquid and liquid compute: one liquid fit-out ($7,000), no air fit-out."""
    cat = catalog(fixed_cooling_specs(switch_power_w=100, fabric_cooling="liquid"))
    ev = evaluate(cat, cat.scenarios["s"], [Deployment("a", "liq16", "liquid", "up", 1)], {"a": "sw"})
    assert ev.sites["a"].cooling_used == ["liquid"]
    assert fit_outs(ev) == [("a", "liquid cooling fit-out, one-off", 1, 7000)]
    assert ev.totals.capex_usd == 169_000


def test_crf_of_a_rate_too_small_to_compound_is_its_limit() -> None:
    """(1 + 1e-320)^5 rounds to 1: the CRF is then 1/n, its limit at r = 0, not a division by zero (a
    mutated plan file's cost_of_capital found it)."""
    from trnplan.costs.rates import crf

    assert crf(1e-320, 5.0) == 0.2 and crf(0.0, 5.0) == 0.2
