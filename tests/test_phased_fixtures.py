"""Hand-worked phased plans: each isolates one rule of design.md's "Phased plans" on `base_specs()`.

The phased base world: periods 2026-01 and 2027-01 over a 2-year window, so L = (1, 1) years and what is
left of the window W = (2, 1); cost of capital 0 -> CRF = 1/2; no maintenance. A purchase in period p costs
capex x W_p x CRF: all of it in 2026-01, half of it in 2027-01. Per IT kW-year (utilization 1):
  liquid at site a (PUE 1.1, $0.10/kWh, $100/kW-month): 963.6 + 1,200 = $2,163.60
  liquid at site b ($0 colocation):                      963.6          =   $963.60
  liq16 (16 chips, 18 kW): capex 16 x 10,000 + 1,000 kit = $161,000; one $1,000 scale-out switch serves up to
  64 ports (radix 64 at 100 Gb/s, one port per chip); two tiers take ceil(3N / 64) switches.

Every plan passes `check_plan` (PuLP-free), which `plan_scenario` runs.
"""

from __future__ import annotations

from typing import Any

import pytest

from trnplan.numbers import cents
from trnplan.plan import Plan, plan_scenario
from trnplan.testkit.builders import base_specs, catalog_from_dict


def phased(demand: dict[str, Any]) -> dict[str, Any]:
    data = base_specs()
    s = data["scenarios"]["s"]
    s.update({"periods": ["2026-01", "2027-01"], "horizon_years": 2, "demand": demand})
    return data


def solve(data: dict[str, Any]) -> Plan:
    plan = plan_scenario(catalog_from_dict(data), "s", alternatives=0)
    assert plan.format == "trnplan-plan/2" and plan.periods is not None
    return plan


def bought(plan: Plan) -> list[list[tuple[str, str, int]]]:
    """Per period: (site, form/cooling/switch, units bought) where anything was bought."""
    assert plan.periods is not None
    return [
        [(site, d.key, d.bought) for site, s in sorted(p.sites.items()) for d in s.deployments if d.bought]
        for p in plan.periods
    ]


def assert_usd(value: float, expected: float) -> None:
    assert cents(value) == cents(expected), f"${value:,.2f} != ${expected:,.2f}"


def test_a_purchase_is_charged_only_for_the_rest_of_the_window() -> None:
    """16 chips from 2026-01, 32 from 2027-01: one liq16 bought in each period.
    2026-01: (161,000 + 1,000 switch) x W 2 x CRF 1/2 = 162,000; 2027-01: 161,000 x 1 x 1/2 = 80,500;
    opex: 18 kW x 2,163.60 x 1 year = 38,944.80, then 36 kW x 2,163.60 = 77,889.60.
    TCO = 162,000 + 80,500 + 38,944.80 + 77,889.60 = $359,334.40; capex (all bought) = $323,000."""
    plan = solve(phased({"2026-01": {"chips": 16}, "2027-01": {"chips": 32}}))
    assert bought(plan) == [[("a", "liq16/liquid/up", 1)], [("a", "liq16/liquid/up", 1)]]
    assert_usd(plan.totals.tco_usd, 359_334.40)
    assert_usd(plan.totals.capex_usd, 323_000)
    assert plan.periods is not None
    assert [p.totals.capex_bought_usd for p in plan.periods] == [162_000, 161_000]
    priced = [(line.period, line.category) for line in plan.bom if line.extended_usd]
    assert priced == [
        ("2026-01", "chips"),
        ("2026-01", "rack"),
        ("2026-01", "scale_out"),
        ("2027-01", "chips"),
        ("2027-01", "rack"),
    ]
    assert_usd(sum(line.extended_usd for line in plan.bom), plan.totals.capex_usd)


def test_a_switch_is_bought_the_period_it_becomes_available() -> None:
    """A cheaper scale-up switch up2 ($1,000 vs $5,000 per rack) arrives 2027-01: 2026-01 buys liq16 with up,
    2027-01 with up2. 2026-01: (166,000 + 1,000) x 1 = 167,000; 2027-01: 162,000 x 1/2 = 81,000; opex as
    above 116,834.40. TCO = $364,834.40."""
    data = phased({"2026-01": {"chips": 16}, "2027-01": {"chips": 32}})
    data["switches"]["up"]["unit_usd"] = 5000
    data["switches"]["up2"] = {**data["switches"]["up"], "unit_usd": 1000, "available_from": "2027-01"}
    data["forms"]["liq16"]["scale_up"] = [{"switch": "up", "per_rack": 1}, {"switch": "up2", "per_rack": 1}]
    plan = solve(data)
    assert bought(plan) == [[("a", "liq16/liquid/up", 1)], [("a", "liq16/liquid/up2", 1)]]
    assert_usd(plan.totals.tco_usd, 364_834.40)


def test_a_hall_that_opens_late_takes_the_later_purchase() -> None:
    """Site b (no colocation rent) opens in 2027-01. 2026-01 buys at a; 2027-01 at b, whose 18 kW cost
    963.60 instead of 2,163.60 per kW-year (21,600 less) for its own switch's 500.
    a: 162,000 + 2 years x 38,944.80 = 239,889.60; b: (161,000 + 1,000) x 1/2 + 18 x 963.60 = 98,344.80.
    TCO = $338,234.40."""
    data = phased({"2026-01": {"chips": 16}, "2027-01": {"chips": 32}})
    data["sites"]["b"] = {
        **data["sites"]["a"],
        "it_power_mw": {"2027-01": 1},
        "rack_positions": {"2027-01": 100},
        "colocation_usd_per_kw_month": 0,
    }
    data["scenarios"]["s"]["sites"] = ["a", "b"]
    plan = solve(data)
    assert bought(plan) == [[("a", "liq16/liquid/up", 1)], [("b", "liq16/liquid/up", 1)]]
    assert_usd(plan.totals.tco_usd, 338_234.40)
    assert plan.periods is not None and "b" not in plan.periods[0].sites


def test_closed_hall_in_a_period_is_explained_with_that_period() -> None:
    """With site b the only site, and closed in 2026-01, the 2026-01 demand cannot be met: the explanation
    names the period."""
    from trnplan.errors import InfeasibleError

    data = phased({"2026-01": {"chips": 16}, "2027-01": {"chips": 32}})
    data["sites"]["a"]["it_power_mw"] = {"2027-01": 1}
    with pytest.raises(InfeasibleError) as info:
        plan_scenario(catalog_from_dict(data), "s", alternatives=0)
    text = "\n".join(info.value.explanation)
    assert "in 2026-01 a IT power" in text, text


def test_a_fabric_grows_from_one_tier_to_two() -> None:
    """64 chips from 2026-01 (4 liq16, 64 ports: one switch, one tier), 80 from 2027-01 (5 liq16, 80 ports:
    two tiers, ceil(3 x 80 / 64) = 4 switches, so 3 bought). 2026-01: (644,000 + 1,000) x 1 = 645,000;
    2027-01: (161,000 + 3,000) x 1/2 = 82,000; opex 72 kW x 2,163.60 = 155,779.20, then 90 kW: 194,724.
    TCO = $1,077,503.20."""
    plan = solve(phased({"2026-01": {"chips": 64}, "2027-01": {"chips": 80}}))
    assert plan.periods is not None
    fabric = [p.sites["a"].scale_out for p in plan.periods]
    assert [(f.tiers, f.switches) for f in fabric] == [(1, 1), (2, 4)]
    switch_lines = [(line.period, line.quantity) for line in plan.bom if line.category == "scale_out"]
    assert switch_lines == [("2026-01", 1), ("2027-01", 3)]
    assert_usd(plan.totals.tco_usd, 1_077_503.20)


def test_one_period_is_the_single_period_model() -> None:
    """A scenario with one period whose window is its horizon has the single-period TCO exactly."""
    data = base_specs()
    single = plan_scenario(catalog_from_dict(data), "s", alternatives=0)
    data["scenarios"]["s"]["periods"] = ["2026-01"]
    one = solve(data)
    assert_usd(one.totals.tco_usd, single.totals.tco_usd)
    assert_usd(one.totals.capex_usd, single.totals.capex_usd)
    assert one.sites == single.sites


def test_demand_without_an_entry_keeps_the_previous_periods() -> None:
    """Periods 2026-01, 2026-07, 2027-01 with demand given for 2026-01 only: 16 chips in each period."""
    data = phased({"2026-01": {"chips": 16}})
    data["scenarios"]["s"]["periods"] = ["2026-01", "2026-07", "2027-01"]
    plan = solve(data)
    assert plan.periods is not None
    assert [p.totals.chips for p in plan.periods] == [16, 16, 16]
    assert [p.years for p in plan.periods] == [0.5, 0.5, 1.0]


def test_max_perf_over_periods_counts_pflop_years() -> None:
    """max_perf within a $400,000 capex budget: PFLOP-years, the unit says so. Two liq16 (32 PFLOPs) bought
    in 2026-01 serve 2 years: 64 PFLOP-years (buying later serves fewer years for the same capex)."""
    data = phased({})
    data["scenarios"]["s"].update({"objective": "max_perf", "budget": {"capex_usd": 400_000}})
    plan = solve(data)
    assert plan.objective is not None
    assert plan.objective.unit == "FP8 PFLOP-years"
    assert plan.objective.value == pytest.approx(64.0)
    assert plan.totals.fp8_pflop_years == pytest.approx(64.0)


def test_an_infeasible_phased_scenario_is_explained_period_by_period_in_order() -> None:
    """Site a (45 kW, 3 positions) from 2026-01; site b (20 kW, air only) from 2026-07; 48 chips from
    2026-01, 80 from 2026-07, min_domain_chips 16 (air8's 8-chip domains are out). What fits: at a, two
    liq16 (36 kW; 2 racks + 1 network rack = 3 positions) = 32 chips; b takes no liq16 (no liquid). With
    min_domain_chips 8, b adds two air8 (20 kW): 48. The shortfalls are listed by period, the same need
    in consecutive periods once; each demand entry gets its own "at most N fit"; the domain lever says
    what fits at 16 and at 8."""
    from trnplan.errors import InfeasibleError

    data = phased({"2026-01": {"chips": 48}, "2026-07": {"chips": 80}})
    data["sites"]["a"].update({"it_power_mw": 0.045, "rack_positions": 3})
    data["sites"]["b"] = {**data["sites"]["a"], "it_power_mw": {"2026-07": 0.02}, "cooling": ["air"]}
    data["scenarios"]["s"].update(
        {"sites": ["a", "b"], "periods": ["2026-01", "2026-04", "2026-07", "2026-10"], "min_domain_chips": 16}
    )
    with pytest.raises(InfeasibleError) as info:
        plan_scenario(catalog_from_dict(data), "s", alternatives=0)
    lines = info.value.explanation
    capacity = lines[1 : lines.index("or")]
    assert capacity == [
        "  in 2026-01 to 2026-04 a rack positions: needs 1 position more (3 positions -> 4 positions)",
        "  in 2026-01 to 2026-04 a IT power: needs 0.01 MW more (0.04 MW -> 0.05 MW)",
        "  in 2026-07 to 2026-10 a rack positions: needs 3 positions more (3 positions -> 6 positions)",
        "  in 2026-07 to 2026-10 a IT power: needs 0.04 MW more (0.04 MW -> 0.09 MW)",
    ]
    levers = lines[lines.index("levers in the scenario:") + 1 :]
    assert levers == [
        "  demand.2026-01.chips: in 2026-01 to 2026-04, at most 32 chips fit (the scenario asks for 48 "
        "chips): --set scenarios.s.demand.2026-01.chips=32",
        "  demand.2026-07.chips: in 2026-07 to 2026-10, at most 32 chips fit (the scenario asks for 80 "
        "chips): --set scenarios.s.demand.2026-07.chips=32",
        "  min_domain_chips 16: air8 has 8-chip domains; in 2026-10 at most 32 chips fit at 16, at most 48 "
        "chips at 8: --set scenarios.s.min_domain_chips=8",
    ]
