"""Facility economics (design.md, "Facility economics"): owned halls annuitised over their own life, power
chains and usable power, cooling capacity per type, the liquid premium, hardware lives with a residual
value, and prices that follow step schedules, priced in the period bought.

The worlds are `testkit.builders.base_specs` (chip x $10,000; air8: 10 kW racks of 8 chips; liq16: 18 kW
racks of 16 chips; one $1,000 scale-out switch serves up to 64 chips), with the figures worked out in each
test's docstring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run

from trnplan.catalog import Catalog
from trnplan.costs import crf, evaluate_decisions
from trnplan.errors import InfeasibleError
from trnplan.plan import plan_scenario
from trnplan.plan.check import check_plan, plan_decisions
from trnplan.testkit.builders import base_specs, catalog_from_dict


def _catalog(specs: dict[str, Any]) -> Catalog:
    return catalog_from_dict(specs)


def _owned(specs: dict[str, Any], **site: Any) -> dict[str, Any]:
    a = specs["sites"]["a"]
    a.pop("colocation_usd_per_kw_month")
    a.update(ownership="owned", **site)
    return specs


def test_a_15_year_hall_in_a_5_year_window_pays_5_years_of_its_15_year_annuity() -> None:
    """64 chips as 4 liq16 racks (72 kW) at an owned hall of $10M/MW (= $10,000/kW: $720,000), 15-year
    life, 5-year window at 10%: the hall costs 5 x crf(10%, 15) x $720,000 = $473,306 over the window, not
    5 x crf(10%, 5) x $720,000 = $949,670; the plan's residual is the difference, a credit each year."""
    specs = base_specs()
    specs["forms"].pop("air8")
    scenario = specs["scenarios"]["s"]
    scenario.update(horizon_years=5, cost_of_capital=0.10)
    specs["switches"]["sw"]["unit_usd"] = 0
    specs["chips"]["x"]["unit_usd"] = 0
    specs["forms"]["liq16"]["rack_bom"] = []
    with_life = _catalog(_owned(base := specs, build_usd_per_mw=10_000_000, facility_life_years=15))
    plan = plan_scenario(with_life, "s", alternatives=0)
    assert check_plan(plan, with_life) == []
    hall = [line for line in plan.bom if line.category == "hall"]
    assert [(line.quantity, line.extended_usd, line.life_years) for line in hall] == [(72.0, 720_000.0, 15.0)]
    energy = plan.totals.energy_usd_per_year or 0.0
    assert plan.totals.capex_usd == 720_000
    residual = -720_000 * (crf(0.1, 5) - crf(0.1, 15))
    assert plan.totals.residual_usd_per_year == pytest.approx(residual, abs=0.01)
    assert plan.totals.tco_usd == pytest.approx(5 * 720_000 * crf(0.1, 15) + 5 * energy, abs=0.05)
    assert 5 * 720_000 * crf(0.1, 15) == pytest.approx(473_306, abs=1)
    base["sites"]["a"].pop("facility_life_years")
    plain = plan_scenario(_catalog(base), "s", alternatives=0)  # no life of its own: the horizon's
    assert plain.totals.residual_usd_per_year is None
    assert plain.totals.tco_usd == pytest.approx(5 * 720_000 * crf(0.1, 5) + 5 * energy, abs=0.05)


def test_2n_halves_usable_power() -> None:
    """A 1 MW hall at 2N (usable share 0.5) holds 0.5 MW of IT: 64 chips of liq16 need 72 kW, so at
    0.1 MW it_power_mw the 2N hall (50 kW usable) cannot hold them and N (100 kW) can; the plan's power
    row and utilization are against the usable power."""
    specs = base_specs()
    specs["sites"]["a"]["it_power_mw"] = 0.1
    specs["power_chains"] = {
        "2n": {"usable_share": 0.5, "usd_per_mw": 3_000_000},
        "n": {"usable_share": 1.0, "usd_per_mw": 0},
    }
    specs["sites"]["a"]["redundancy"] = "n"
    n_plan = plan_scenario(_catalog(specs), "s", alternatives=0)
    assert n_plan.totals.it_power_kw <= 100
    specs["sites"]["a"]["redundancy"] = "2n"
    catalog = _catalog(specs)
    assert catalog.usable_it_power_mw(catalog.sites["a"]) == 0.05
    with pytest.raises(InfeasibleError) as info:
        plan_scenario(catalog, "s", alternatives=0)
    assert "IT power" in str(info.value.explanation)
    specs["sites"]["a"]["it_power_mw"] = 0.2
    wide = plan_scenario(_catalog(specs), "s", alternatives=0)
    site = wide.sites["a"]
    assert site.utilization is not None
    assert site.utilization.it_power == pytest.approx(site.it_power_kw / 100)


def test_an_owned_site_pays_its_power_chain_and_a_leased_one_does_not() -> None:
    """At an owned hall a 2N chain of $3M/MW is a BOM line of $3,000/kW over the hall's life; a leased hall
    at 2N pays its rent and no chain."""
    specs = base_specs()
    specs["power_chains"] = {"2n": {"usable_share": 0.5, "usd_per_mw": 3_000_000}}
    specs["sites"]["a"]["redundancy"] = "2n"
    leased = plan_scenario(_catalog(specs), "s", alternatives=0)
    assert not [line for line in leased.bom if line.category == "power_chain"]
    owned = _catalog(_owned(specs, build_usd_per_mw=8_000_000, facility_life_years=20))
    plan = plan_scenario(owned, "s", alternatives=0)
    chain = [line for line in plan.bom if line.category == "power_chain"]
    assert len(chain) == 1 and chain[0].unit_usd == 3000 and chain[0].life_years == 20
    assert chain[0].quantity == plan.totals.it_power_kw
    assert plan.totals.colocation_usd_per_year == 0
    assert check_plan(plan, owned) == []


def test_a_cooling_capacity_binds() -> None:
    """Air racks are cheapest here (PUE and rent equal; air8 is cheaper per chip), but the site's air plant
    removes 0.02 MW: at most 2 air8 racks (20 kW), so the rest of the 64 chips go liquid; without the
    capacity all 8 racks are air."""
    specs = base_specs()
    specs["cooling"]["liquid"]["pue"] = 1.5
    specs["forms"]["liq16"]["rack_bom"][0]["unit_usd"] = 50_000
    free = plan_scenario(_catalog(specs), "s", alternatives=0)
    assert {d.cooling for d in free.sites["a"].deployments} == {"air"}
    specs["sites"]["a"]["cooling_capacity_mw"] = {"air": 0.02}
    catalog = _catalog(specs)
    capped = plan_scenario(catalog, "s", alternatives=0)
    kw = {d.cooling: d.it_power_kw for d in capped.sites["a"].deployments}
    assert kw["air"] == 20 and "liquid" in kw
    assert any("air cooling capacity" in line for line in capped.binding)
    assert check_plan(capped, catalog) == []
    assert capped.totals.tco_usd > free.totals.tco_usd


def test_the_liquid_premium_is_rent_on_liquid_cooled_kw() -> None:
    """$15/kW-month on liquid kW: 72 kW of liq16 pay 72 x 15 x 12 = $12,960 a year more rent."""
    specs = base_specs()
    specs["forms"].pop("air8")
    base = plan_scenario(_catalog(specs), "s", alternatives=0)
    specs["sites"]["a"]["liquid_premium_usd_per_kw_month"] = 15
    catalog = _catalog(specs)
    plan = plan_scenario(catalog, "s", alternatives=0)
    extra = (plan.totals.colocation_usd_per_year or 0) - (base.totals.colocation_usd_per_year or 0)
    liquid_kw = sum(d.it_power_kw for d in plan.sites["a"].deployments)
    assert extra == pytest.approx(liquid_kw * 15 * 12, abs=0.01)
    assert check_plan(plan, catalog) == []


def _phased(specs: dict[str, Any], prices: dict[str, float]) -> Catalog:
    """Two periods, 2026-01 and 2027-01, of a 3-year window; 32 chips needed from 2026-01 and 64 from
    2027-01; the hall holds 64 from the start; chip x priced by `prices`."""
    scenario = specs["scenarios"]["s"]
    scenario.update(periods=["2026-01", "2027-01"], horizon_years=3, cost_of_capital=0.1)
    scenario["demand"] = {"2026-01": {"chips": 32}, "2027-01": {"chips": 64}}
    specs["forms"].pop("liq16")
    specs["chips"]["x"]["unit_usd"] = prices
    return _catalog(specs)


def _bought(catalog: Catalog) -> list[int]:
    plan = plan_scenario(catalog, "s", alternatives=0)
    assert plan.periods is not None
    assert check_plan(plan, catalog) == []
    return [sum(d.bought for s in p.sites.values() for d in s.deployments) for p in plan.periods]


def test_a_falling_chip_price_makes_a_phased_plan_buy_later_and_a_rising_one_earlier() -> None:
    """Flat: buy what each period needs (4 air8 units, then 4 more: buying early costs a year of annuity).
    Falling from $10,000 to $5,000 in 2027: still 4 then 4 (waiting is free where demand allows, and the
    second half is bought cheaper). Rising to $20,000 in 2027: all 8 units in 2026-01, before the rise."""
    flat = _bought(_phased(base_specs(), {"2025-01": 10_000}))
    assert flat == [4, 4]
    falling = _phased(base_specs(), {"2025-01": 10_000, "2027-01": 5_000})
    assert _bought(falling) == [4, 4]
    rising = _phased(base_specs(), {"2025-01": 10_000, "2027-01": 20_000})
    assert _bought(rising) == [8, 0]


def test_a_purchase_is_priced_in_the_period_it_is_bought() -> None:
    """Falling to $5,000: the 2027-01 purchase of 32 chips is a BOM line at $5,000; the plan's capex is
    32 x 10,000 + 32 x 5,000 + the kits and switch, and the re-check from decisions gives the same."""
    catalog = _phased(base_specs(), {"2025-01": 10_000, "2027-01": 5_000})
    plan = plan_scenario(catalog, "s", alternatives=0)
    chips = [(line.period, line.quantity, line.unit_usd) for line in plan.bom if line.category == "chips"]
    assert chips == [("2026-01", 32.0, 10_000.0), ("2027-01", 32.0, 5_000.0)]
    ev = evaluate_decisions(catalog, "s", plan_decisions(plan))
    assert ev.totals.capex_usd == plan.totals.capex_usd == pytest.approx(32 * 15_000 + 8 * 1000 + 1000)


def test_a_chip_life_past_the_window_leaves_a_residual_value() -> None:
    """Chips of a 6-year life in a 3-year window at 10%: each $ of chips costs crf(10%, 6) a year, not
    crf(10%, 3); the residual is the difference on the chips' capex, a credit."""
    specs = base_specs()
    specs["scenarios"]["s"].update(horizon_years=3, cost_of_capital=0.1)
    specs["chips"]["x"]["life_years"] = 6
    catalog = _catalog(specs)
    plan = plan_scenario(catalog, "s", alternatives=0)
    chips_usd = sum(line.extended_usd for line in plan.bom if line.category == "chips")
    assert chips_usd == 640_000
    expected = -chips_usd * (crf(0.1, 3) - crf(0.1, 6))
    assert plan.totals.residual_usd_per_year == pytest.approx(expected, abs=0.01)
    assert check_plan(plan, catalog) == []


def test_colocation_is_read_as_leased_and_an_owned_site_needs_no_rent() -> None:
    specs = base_specs()
    specs["sites"]["a"]["ownership"] = "colocation"
    assert _catalog(specs).sites["a"].ownership == "leased"
    specs["sites"]["a"].pop("colocation_usd_per_kw_month")
    with pytest.raises(ValueError, match="a leased site needs colocation_usd_per_kw_month"):
        _catalog(specs)
    specs["sites"]["a"]["ownership"] = "owned"
    assert _catalog(specs).sites["a"].owned


def test_validate_warns_of_an_owned_sites_rent(tmp_path: Path) -> None:
    specs = base_specs()
    specs["sites"]["a"]["ownership"] = "owned"
    (tmp_path / "specs.yaml").write_text(yaml.safe_dump(specs))
    result = run("validate", "--specs", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "sites.a.colocation_usd_per_kw_month" in result.stderr
    assert "an owned site pays no rent" in result.stderr
    assert ": OK" in result.stdout


def test_the_alternatives_say_what_it_costs_not_to_own_a_site() -> None:
    """An owned hall the plan builds is a choice: the alternative "owning a" is the best plan without it
    (here at the leased site b, dearer), and the plan's re-check holds."""
    specs = _owned(base_specs(), build_usd_per_mw=1_000_000, facility_life_years=15)
    specs["sites"]["b"] = {
        "it_power_mw": 1,
        "rack_positions": 100,
        "cooling": ["air", "liquid"],
        "electricity_usd_per_kwh": 0.1,
        "colocation_usd_per_kw_month": 300,
    }
    specs["scenarios"]["s"]["sites"] = ["a", "b"]
    catalog = _catalog(specs)
    plan = plan_scenario(catalog, "s", alternatives=10)
    assert set(plan.sites) == {"a"}
    alt = next(a for a in plan.alternatives if a.without == "owning a")
    assert alt.tco_usd is not None and alt.tco_usd > plan.totals.tco_usd
    assert alt.choice.startswith("b: ")
    assert check_plan(plan, catalog) == []


def test_the_shipped_catalog_has_an_owned_hall_beside_leased_ones() -> None:
    """An owned site with a cited build cost per MW, a power chain with a cited cost, and leased sites."""
    from trnplan.specs.load import load_specs

    catalog = load_specs()
    owned = [s for s in catalog.sites.values() if s.owned]
    assert owned and any(not s.owned for s in catalog.sites.values())
    for site in owned:
        assert site.build_usd_per_mw > 0 and site.facility_life_years is not None
        assert any("CW-25" in s for s in site.sources)
        chain = catalog.power_chains[site.redundancy or ""]
        assert chain.usd_per_mw > 0 and any("BERN" in s for s in chain.sources)


@pytest.mark.parametrize("columns", [80, 120])
def test_show_sites_shows_ownership_redundancy_usable_power_and_cooling_capacity(columns: int) -> None:
    result = run("show", "sites", columns=columns)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "owned $5.95M/MW* 14y" in " ".join(text.split())
    assert "n-plus-1: 64.0 MW" in text and "usable" in text
    assert "air <= 24.0 MW" in text
    assert "leased" in text
    assert max(len(line) for line in text.splitlines()) <= columns
    chains = run("show", "power_chains", columns=columns)
    assert chains.exit_code == 0 and "n-plus-1" in chains.stdout and "80%" in chains.stdout
