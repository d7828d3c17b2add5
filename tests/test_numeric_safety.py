"""Numbers the solver should not see: specs whose every value is within its plausible range, but whose
values span many orders of magnitude, either solve correctly (the MILP optimum equals exhaustive
enumeration, `check_plan` finds nothing, status optimal) or are refused with a clear exit-3 message.

What the ranges in catalog.py already prevent: NaN and infinities, negatives, and any single value far
outside its unit (`tdp_w: 1e9`). What they allow, and what is tried here: a 0.01 MW site beside a 10 GW
one; 50 W and 5,000 W chips; chips at 0 and at 10 million USD; 1 Gb/s scale-out ports with 100 W optics
on a radix-one-million switch; a rack kit of 10,000 items at 10^12 USD; a 10^12 USD one-off cooling cost;
horizons of 30 years at a 100% cost of capital. Two failure modes were found and are now refused:

- HiGHS silently drops a constraint holding a coefficient above 1e15 (PuLP then crashed reading the
  solution back: IndexError, exit 1). `solve` now checks HiGHS took the whole model (InputError, exit 3).
- A plan costing more than 1e13 USD cannot be kept to the cent in floating point (its BOM stopped adding up
  to its capex: "plan file does not add up", with two equal-looking numbers). `plan_body` refuses it,
  naming the largest BOM line (InputError, exit 3).
"""

from __future__ import annotations

import copy
from typing import Any

import pulp
import pytest
import yaml
from conftest import run
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st
from test_property_enumeration import agree

from trnplan.errors import EXIT_INVALID, EXIT_OK, InfeasibleError, InputError
from trnplan.optimize.solve import solve
from trnplan.plan import plan_scenario
from trnplan.plan.body import MAX_PLAN_USD
from trnplan.plan.check import check_plan
from trnplan.testkit.builders import base_specs, catalog_from_dict
from trnplan.testkit.oracle import best_plan


def note(outcome: str) -> None:
    if currently_in_test_context():
        event(outcome)


def assert_solved_right(world: dict[str, Any]) -> None:
    catalog = catalog_from_dict(world)
    truth = best_plan(catalog, "s")
    if truth is None:
        with pytest.raises(InfeasibleError):
            plan_scenario(catalog, "s", alternatives=0)
        note("infeasible, and said so")
        return
    plan = plan_scenario(catalog, "s", alternatives=1)
    note("solved to the enumerated optimum")
    assert plan.solver is not None and plan.objective is not None
    assert plan.solver.status == "optimal"
    assert check_plan(plan, catalog) == []
    assert agree(plan.objective.value, truth[0]), (plan.objective, truth)


def two_sites(tiny_mw: float, huge_mw: float) -> dict[str, Any]:
    w = base_specs()
    w["sites"]["tiny"] = dict(w["sites"].pop("a"), it_power_mw=tiny_mw, rack_positions=3)
    w["sites"]["huge"] = dict(w["sites"]["tiny"], it_power_mw=huge_mw, rack_positions=5)
    w["scenarios"]["s"]["sites"] = ["huge", "tiny"]
    for q in w["cooling"].values():
        q["max_rack_kw"] = 1000
    return w


def case_tiny_site_big_chip_next_to_10_gw() -> dict[str, Any]:
    """A 10 kW site that holds two 5,000 W chips (one air8 rack does not fit) beside a 10 GW one."""
    w = two_sites(0.01, 10000)
    w["chips"]["x"]["tdp_w"] = 5000
    w["forms"]["tiny1"] = dict(w["forms"]["air8"], chips_per_rack=1, domain_chips=1, rack_overhead_kw=0)
    w["scenarios"]["s"]["demand"] = {"chips": 10}
    return w


def case_free_and_ten_million_dollar_chips() -> dict[str, Any]:
    w = two_sites(0.01, 10000)
    w["chips"]["x"]["unit_usd"] = 0
    w["chips"]["gold"] = dict(w["chips"]["x"], unit_usd=1e7, dense_tflops={"fp8": 1e6})
    w["forms"]["gold16"] = dict(w["forms"]["liq16"], chip="gold")
    w["scenarios"]["s"]["demand"] = {"fp8_pflops": 20000}
    return w


def case_one_gbps_ports_with_100_w_optics() -> dict[str, Any]:
    """Radix one million at 1 Gb/s; 16 optics per chip at 100 W and 50,000 USD each."""
    w = base_specs()
    w["switches"]["sw"].update(port_gbps=1, bandwidth_gbps=1e6, optic_w=100, optic_usd=50000)
    w["chips"]["x"]["scale_out_gbps"] = 20000
    w["forms"]["air8"]["endpoint_optics_per_chip"] = 16
    w["sites"]["a"]["it_power_mw"] = 10
    return w


def case_cheap_energy_for_thirty_years_at_100_percent() -> dict[str, Any]:
    w = base_specs()
    w["sites"]["a"].update(electricity_usd_per_kwh=0.001, colocation_usd_per_kw_month=5000)
    w["scenarios"]["s"].update(horizon_years=30, cost_of_capital=1.0, maintenance_rate=1.0, utilization=0.01)
    return w


def case_trillion_dollar_cooling_fit_out_avoided() -> dict[str, Any]:
    w = base_specs()
    w["sites"]["a"]["cooling_fixed_usd"] = {"liquid": 1e12}
    return w


def case_tiny_demand_of_a_huge_chip() -> dict[str, Any]:
    w = base_specs()
    w["chips"]["x"]["dense_tflops"] = {"fp8": 1e6}
    w["scenarios"]["s"]["demand"] = {"fp8_pflops": 0.001}
    return w


CASES = {
    f.__name__.removeprefix("case_"): f
    for f in (
        case_tiny_site_big_chip_next_to_10_gw,
        case_free_and_ten_million_dollar_chips,
        case_one_gbps_ports_with_100_w_optics,
        case_cheap_energy_for_thirty_years_at_100_percent,
        case_trillion_dollar_cooling_fit_out_avoided,
        case_tiny_demand_of_a_huge_chip,
    )
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_extreme_but_plausible_specs_solve_to_the_true_optimum(name: str) -> None:
    assert_solved_right(CASES[name]())


def max_scale(objective: str = "min_tco") -> dict[str, Any]:
    """Every value at the top of its range: 262,144-chip units of 10-million-USD chips, rack kits of
    10,000 items at 10^12 USD, a 10 GW site and a demand of 100 million chips."""
    w = base_specs()
    w["chips"]["x"].update(unit_usd=1e7, tdp_w=50)
    for form in ("air8", "liq16"):
        w["forms"][form].update(
            chips_per_rack=4096,
            racks_per_unit=64,
            domain_chips=4096,
            rack_bom=[{"item": "gold", "qty": 10000, "unit_usd": 1e12}],
        )
    for q in w["cooling"].values():
        q["max_rack_kw"] = 1000
    w["sites"]["a"].update(
        it_power_mw=10000,
        rack_positions=1_000_000,
        electricity_usd_per_kwh=2,
        colocation_usd_per_kw_month=5000,
        cooling_fixed_usd={"liquid": 1e12},
    )
    w["scenarios"]["s"].update(demand={"chips": 100_000_000}, horizon_years=30, objective=objective)
    if objective == "max_perf":
        w["scenarios"]["s"]["budget"] = {"capex_usd": 1e13}
    return w


def run_cli(world: dict[str, Any], tmp_path) -> Any:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(world))
    return run("optimize", "s", "--specs", specs, "--plans", tmp_path / "plans", "--alternatives", "0",
               columns=200)


@pytest.mark.parametrize("objective", ["min_tco", "max_perf_per_tco"])
def test_a_plan_beyond_ten_trillion_dollars_is_refused_naming_the_largest_line(
    objective: str, tmp_path
) -> None:
    result = run_cli(max_scale(objective), tmp_path)
    assert result.exit_code == EXIT_INVALID, result.output
    assert result.stderr.startswith("error: the best plan's TCO is $")
    assert f"beyond the ${MAX_PLAN_USD:.0e} a plan can account for to the cent" in result.stderr
    assert "its largest BOM line is a: gold (" in result.stderr and "x $1e+12" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "plans").exists()


def test_a_coefficient_highs_would_drop_is_refused_not_crashed_on(tmp_path) -> None:
    """A 6.4e17 USD unit against a capex budget: HiGHS drops that row (> 1e15), PuLP raised IndexError."""
    result = run_cli(max_scale("max_perf"), tmp_path)
    assert result.exit_code == EXIT_INVALID, result.output
    assert result.stderr.startswith(
        "error: the specs' numbers are too far apart to solve reliably: constraint 'budget_capex' needs a "
        "coefficient of 6.4e+17, beyond the solver's limit of 1e+15."
    )
    assert "Traceback" not in result.output


def test_solve_refuses_a_model_highs_did_not_take_whole() -> None:
    prob = pulp.LpProblem("toy", pulp.LpMinimize)
    x = prob.add_variable("x", 0, 10, pulp.LpInteger)
    prob += x
    prob += 6.4e17 * x <= 1e13, "big"
    prob += x >= 1, "demand"
    with pytest.raises(InputError, match=r"constraint 'big' needs a coefficient of 6.4e\+17"):
        solve(prob, "highs")


def test_the_largest_plan_within_the_limit_is_kept_to_the_cent(tmp_path) -> None:
    """About 5e12 USD of TCO: the BOM still adds up to the capex to the cent, and the plan checks."""
    w = base_specs()
    w["chips"]["x"].update(unit_usd=1e7, tdp_w=50)
    w["forms"]["liq16"].update(chips_per_rack=4096, racks_per_unit=1, domain_chips=4096)
    w["forms"].pop("air8")
    w["cooling"]["liquid"]["max_rack_kw"] = 1000
    w["sites"]["a"].update(it_power_mw=10000, rack_positions=100_000)
    w["scenarios"]["s"]["demand"] = {"chips": 4096 * 100}
    result = run_cli(w, tmp_path)
    assert result.exit_code == EXIT_OK, result.output
    plan = yaml.safe_load((tmp_path / "plans" / "s.yaml").read_text())
    cents = sum(round(line["extended_usd"] * 100) for line in plan["bom"])
    assert cents == round(plan["totals"]["capex_usd"] * 100)
    assert 1e12 < plan["totals"]["tco_usd"] <= MAX_PLAN_USD


# --- generated: small worlds with values drawn from the ends of their ranges ----------------------------

EDGES: dict[tuple[str, ...], list[float]] = {
    ("chips", "x", "tdp_w"): [50, 1000, 5000],
    ("chips", "x", "unit_usd"): [0, 1, 1e7],
    ("chips", "x", "scale_out_gbps"): [1, 100, 20000],
    ("forms", "air8", "rack_overhead_kw"): [0, 2, 500],
    ("forms", "air8", "endpoint_optics_per_chip"): [0, 1, 16],
    ("forms", "liq16", "endpoint_optics_per_chip"): [0, 16],
    ("switches", "up", "power_w"): [0, 20000],
    ("switches", "up", "unit_usd"): [0, 5e6],
    ("switches", "sw", "power_w"): [0, 20000],
    ("switches", "sw", "unit_usd"): [0, 5e6],
    ("switches", "sw", "optic_usd"): [0, 50000],
    ("switches", "sw", "optic_w"): [0, 100],
    ("cooling", "air", "pue"): [1.0, 3.0],
    ("cooling", "liquid", "capex_usd_per_kw"): [0, 1e5],
    ("sites", "a", "electricity_usd_per_kwh"): [0.001, 2],
    ("sites", "a", "colocation_usd_per_kw_month"): [0, 5000],
    ("scenarios", "s", "cost_of_capital"): [0, 1],
    ("scenarios", "s", "horizon_years"): [1, 30],
    ("scenarios", "s", "utilization"): [0.01, 1],
}
PORTS = [(1, 100), (1, 1e6), (100, 6400), (3200, 1e6)]  # (port_gbps, bandwidth_gbps)
SITE_MW = [0.01, 0.05, 1, 10000]


@st.composite
def edge_worlds(draw: st.DrawFn) -> dict[str, Any]:
    w = copy.deepcopy(base_specs())
    for path, values in EDGES.items():
        if draw(st.booleans()):
            value = draw(st.sampled_from(values))
            w[path[0]][path[1]][path[2]] = value
            event(f"{'.'.join(path)}={value:g}")
    port, bandwidth = draw(st.sampled_from(PORTS))
    w["switches"]["sw"].update(port_gbps=port, bandwidth_gbps=bandwidth)
    w["sites"]["a"]["it_power_mw"] = draw(st.sampled_from(SITE_MW))
    if draw(st.booleans()):
        w["sites"]["b"] = dict(w["sites"]["a"], it_power_mw=draw(st.sampled_from(SITE_MW)), rack_positions=3)
        w["scenarios"]["s"]["sites"] = ["a", "b"]
    w["sites"]["a"]["rack_positions"] = draw(st.integers(2, 5))
    for q in w["cooling"].values():
        q["max_rack_kw"] = 1000
    w["scenarios"]["s"]["demand"] = draw(
        st.sampled_from([{"chips": 1}, {"chips": 16}, {"fp8_pflops": 0.001}])
    )
    return w


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_worlds())
def test_worlds_at_the_edges_of_the_ranges_solve_to_the_true_optimum(world: dict[str, Any]) -> None:
    try:
        catalog_from_dict(world)
    except ValueError:
        event("not a valid catalog")
        return
    try:
        assert_solved_right(world)
    except InputError as exc:  # refused: only for the two reasons above, said plainly
        assert "too far apart to solve reliably" in str(exc) or "account for to the cent" in str(exc), exc
        event("refused")
