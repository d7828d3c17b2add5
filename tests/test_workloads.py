"""Workloads: the share of dense peak a form delivers decides the form (hand-worked optima), validation
refuses bad rules with their location, plans carry and check the effective figures, and a scenario
without a workload plans byte for byte as before.

The fixture world (every figure round, money almost all capex):
  chip x: 1 PF FP8 dense, $10,000, 1000 W, 100 Gb/s scale-out.
  torus16: a 16-chip torus rack (one rack per unit, domain 16), liquid, kit $0: $160,000 per unit, 16 PF.
  sw144:   2 racks x 72 chips, one 144-chip switched domain, one $72,000 scale-up switch per rack
           -> $1,440,000 + $144,000 = $1,584,000 per unit, 144 PF peak.
  Per peak PF the torus is cheaper ($10,000 against $11,000). Scale-out switches, optics, cooling capacity
  and colocation are free; energy is $0.001/kWh at 1% utilization, PUE 1: $0.0876 per IT kW-year (a sw144
  draws 144 kW: $12.61; 18 torus units 288 kW: $25.23), horizon 1 year, no cost of capital or maintenance:
  TCO = capex + under $30 of energy.
  Demand: 43 effective FP8 PFLOPs.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from trnplan.catalog import Scenario
from trnplan.costs import form_efficiency
from trnplan.errors import SpecError
from trnplan.plan import plan_scenario
from trnplan.plan.check import check_plan
from trnplan.plan.consistency import self_check
from trnplan.plan.file import parse_plan, plan_to_yaml
from trnplan.specs.load import load_specs
from trnplan.testkit.builders import catalog_from_dict

DENSE = {"name": "Dense", "efficiency": [{"value": 0.4}]}
MOE = {
    "name": "MoE",
    "efficiency": [{"topology": "switched", "min_domain_chips": 144, "value": 0.3}, {"value": 0.15}],
}


def world(workload: dict[str, Any] | None, demand: dict[str, Any] | None = None) -> dict[str, Any]:
    scenario: dict[str, Any] = {
        "sites": ["a"],
        "demand": demand or {"effective_fp8_pflops": 43},
        "horizon_years": 1,
        "cost_of_capital": 0.0,
        "utilization": 0.01,
        "maintenance_rate": 0.0,
        "fabric": {"cooling": "liquid"},
    }
    if workload is not None:
        scenario["workload"] = "w"
    rack = {"rack_overhead_kw": 0, "rack_bom": [], "endpoint_optics_per_chip": 0, "cooling": ["liquid"]}
    return copy.deepcopy(
        {
            "chips": {
                "x": {
                    "name": "X",
                    "vendor": "T",
                    "tdp_w": 1000,
                    "dense_tflops": {"fp8": 1000},
                    "hbm": {"generation": "HBM3E", "stacks": 4, "stack_gb": 24, "pin_gbps": 8.0,
                            "bus_bits": 1024},
                    "scale_up": {"pcie_gen": 6, "lanes": 64},
                    "scale_out_gbps": 100,
                    "unit_usd": 10000,
                }
            },
            "forms": {
                "torus16": {"chip": "x", "topology": "torus", "chips_per_rack": 16, "racks_per_unit": 1,
                            "domain_chips": 16, **rack},
                "sw144": {"chip": "x", "topology": "switched", "chips_per_rack": 72, "racks_per_unit": 2,
                          "domain_chips": 144, "scale_up": [{"switch": "up", "per_rack": 1}], **rack},
            },
            "switches": {
                "up": {"role": "scale_up", "protocol": "pcie6", "lanes": 160, "power_w": 0,
                       "unit_usd": 72000, "available_from": "2025-01"},
                "sw": {"role": "scale_out", "protocol": "ethernet", "bandwidth_gbps": 6400, "port_gbps": 100,
                       "rack_units": 1, "power_w": 0, "unit_usd": 0, "available_from": "2020-01"},
            },
            "cooling": {"liquid": {"max_rack_kw": 100, "pue": 1.0, "capex_usd_per_kw": 0}},
            "sites": {
                "a": {"it_power_mw": 10, "rack_positions": 100, "cooling": ["liquid"],
                      "electricity_usd_per_kwh": 0.001, "colocation_usd_per_kw_month": 0}
            },
            "scenarios": {"s": scenario},
            "workloads": {"w": workload} if workload is not None else {},
        }
    )


def _forms(plan: Any) -> dict[str, int]:
    return {d.form: d.units for s in plan.sites.values() for d in s.deployments}


def test_dense_workload_picks_the_torus() -> None:
    """Dense: 40% of peak everywhere, so the cheaper peak PF wins. torus16 delivers 16 x 0.4 = 6.4 PF per
    $160,000; 43 PF need ceil(43 / 6.4) = 7 units = $1,120,000 (44.8 PF delivered). One sw144 delivers
    144 x 0.4 = 57.6 PF for $1,584,000, and a mix with one sw144 costs more still: 7 x torus16 is optimal."""
    catalog = catalog_from_dict(world(DENSE))
    plan = plan_scenario(catalog, "s", alternatives=1)
    assert _forms(plan) == {"torus16": 7}
    assert plan.totals.capex_usd == 1_120_000
    assert plan.totals.tco_usd == pytest.approx(1_120_000 + 112 * 0.0876, abs=0.01)
    assert plan.totals.effective_fp8_pflops == pytest.approx(44.8)
    (dep,) = plan.sites["a"].deployments
    assert dep.efficiency == 0.4 and dep.effective_fp8_pflops == pytest.approx(44.8)
    assert plan.workload is not None and plan.workload.efficiency == {"sw144": 0.4, "torus16": 0.4}
    assert check_plan(plan, catalog) == []


def test_moe_workload_picks_the_144_chip_switched_domain_at_the_same_prices() -> None:
    """MoE: sw144 delivers 30% (switched, domain >= 144), the torus 15% (the default rule). One sw144 gives
    144 x 0.3 = 43.2 >= 43 PF for $1,584,000; the torus gives 16 x 0.15 = 2.4 PF per unit, so
    ceil(43 / 2.4) = 18 units = $2,880,000. Any plan with a sw144 needs just that one: sw144 alone wins."""
    catalog = catalog_from_dict(world(MOE))
    plan = plan_scenario(catalog, "s", alternatives=1)
    assert _forms(plan) == {"sw144": 1}
    assert plan.totals.capex_usd == 1_584_000
    assert plan.totals.effective_fp8_pflops == pytest.approx(43.2)
    assert plan.totals.fp8_pflops == pytest.approx(144)
    assert plan.totals.usd_per_effective_pflop_hour == pytest.approx(plan.totals.tco_usd / (43.2 * 8760))
    assert plan.objective is not None and plan.objective.kind == "min_tco"
    # The plan says why: the torus alternative costs 18 units x $160,000 = $2,880,000 for the same need.
    (alt,) = plan.alternatives
    assert alt.without == "form sw144" and alt.tco_usd == pytest.approx(2_880_000 + 25.23, abs=0.01)
    assert alt.effective_fp8_pflops == pytest.approx(43.2)
    assert plan.workload is not None and plan.workload.efficiency == {"sw144": 0.3, "torus16": 0.15}
    assert check_plan(plan, catalog) == []


def test_max_perf_maximises_effective_pflops() -> None:
    """max_perf within $1,600,000 of capex: 10 x torus16 = $1,600,000 gives 10 x 2.4 = 24 effective PF
    under MoE; one sw144 ($1,584,000) gives 43.2 and leaves $16,000, less than a torus unit: sw144 wins,
    though 10 torus units hold more peak (160 PF against 144)."""
    data = world(MOE)
    data["scenarios"]["s"].update({"objective": "max_perf", "budget": {"capex_usd": 1_600_000}, "demand": {}})
    plan = plan_scenario(catalog_from_dict(data), "s", alternatives=0)
    assert _forms(plan) == {"sw144": 1}
    assert plan.objective is not None and plan.objective.value == pytest.approx(43.2)
    assert plan.objective.unit == "effective FP8 PFLOPs"


def test_rules_first_match_wins_and_no_match_is_peak() -> None:
    catalog = catalog_from_dict(world({"name": "W", "efficiency": [
        {"forms": ["sw144"], "value": 0.5}, {"topology": "switched", "value": 0.2}]}))
    scenario = catalog.scenarios["s"]
    assert form_efficiency(catalog, scenario, "sw144") == 0.5
    assert form_efficiency(catalog, scenario, "torus16") == 1.0  # no rule matches: peak
    no_workload = Scenario.model_construct(workload=None)
    assert form_efficiency(catalog, no_workload, "sw144") == 1.0


def test_without_a_workload_the_plan_has_no_new_fields_and_an_unused_workload_changes_nothing() -> None:
    """The same scenario with a peak demand, planned with and without an (unnamed) workloads collection in
    the specs: byte-identical files, with none of the workload fields."""
    demand = {"fp8_pflops": 43}
    bare = world(None, demand)
    with_collection = world(None, demand)
    with_collection["workloads"] = {"w": MOE}
    a = plan_to_yaml(plan_scenario(catalog_from_dict(bare), "s", alternatives=1))
    b = plan_to_yaml(plan_scenario(catalog_from_dict(with_collection), "s", alternatives=1))
    assert a == b
    for key in ("effective_fp8_pflops", "usd_per_effective_pflop_hour", "efficiency", "workload"):
        assert key not in a


def test_plan_with_workload_reads_back_and_catches_edits() -> None:
    catalog = catalog_from_dict(world(MOE))
    plan = plan_scenario(catalog, "s", alternatives=0)
    text = plan_to_yaml(plan)
    assert parse_plan(text, "p.yaml") == plan
    assert self_check(plan) == []
    # An edited efficiency no longer agrees with the effective PFLOPs beside it, nor with the specs.
    edited = text.replace("efficiency: 0.3\n", "efficiency: 0.35\n", 1)
    assert edited != text
    data = plan.to_dict()
    data["sites"]["a"]["deployments"][0]["efficiency"] = 0.35
    forged = type(plan).model_validate(data)
    assert any("efficiency" in ".".join(map(str, m.path)) for m in self_check(forged))
    assert check_plan(forged, catalog) != []
    # Effective totals on a plan whose scenario names no workload are refused by the re-check.
    bare = catalog_from_dict(world(None, {"fp8_pflops": 43}))
    plain = plan_scenario(bare, "s", alternatives=0)
    stated = plain.to_dict()
    stated["totals"]["effective_fp8_pflops"] = stated["totals"]["fp8_pflops"]
    assert any("effective_fp8_pflops" in p for p in check_plan(type(plain).model_validate(stated), bare))


BAD = """\
workloads:
  w1:
    name: Bad
    efficiency:
      - {value: 0.5}
      - {topology: switched, value: 0.4}
      - {forms: [sw145], value: 35}
  w2:
    name: Shadow
    efficiency:
      - {topology: switched, min_domain_chips: 64, value: 0.3}
      - {topology: switched, min_domain_chips: 144, forms: [sw144], value: 0.4}
      - {value: 0}
scenarios:
  s1:
    sites: [a]
    workload: w3
    demand: {effective_fp8_pflops: 10}
    horizon_years: 1
    cost_of_capital: 0.0
    utilization: 0.5
    maintenance_rate: 0.0
    fabric: {cooling: liquid}
"""


def _spec_dir(tmp_path: Path) -> Path:
    import yaml

    data = world(MOE)
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(data, sort_keys=True))
    return tmp_path


def test_validate_refuses_bad_workloads_located(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    _spec_dir(specs)
    (specs / "bad.yaml").write_text(BAD)
    with pytest.raises(SpecError) as info:
        load_specs([specs])
    messages = [str(p) for p in info.value.problems]
    where = str(specs / "bad.yaml")
    expected = [
        f"{where}:6:9: workloads.w1.efficiency.1: this rule can never match: rule 0 (no condition",
        f"{where}:7:18: workloads.w1.efficiency.2.forms.0: unknown form 'sw145'; did you mean 'sw144'?",
        f"{where}:7:26: workloads.w1.efficiency.2.value: efficiency 35 is outside (0, 1]",
        f"{where}:12:9: workloads.w2.efficiency.1: this rule can never match: rule 0 (topology switched and "
        "min_domain_chips 64)",
        f"{where}:13:10: workloads.w2.efficiency.2.value: efficiency 0 is outside (0, 1]",
        f"{where}:17:5: scenarios.s1.workload: unknown workload 'w3'",
    ]
    for text in expected:
        assert any(m.startswith(text) for m in messages), (text, messages)
    assert "write 0.35 for 35%" in "\n".join(messages)


def test_effective_demand_needs_a_workload() -> None:
    with pytest.raises(ValueError, match="effective_fp8_pflops needs a workload"):
        catalog_from_dict(world(None))


def test_shipped_workloads_decide_the_form() -> None:
    """The shipped dense-train and moe-train scenarios: the same delivered demand and prices, efficiencies
    from the performance model. The dense job runs in BF16, whose peak is 51% of FP8's on Trainium2 and
    27% on Trainium3: it buys Trainium2 only. The MoE job runs in FP8 with expert all-to-all in the
    domain: it buys mostly Trainium3 in switched domains."""
    from trnplan.specs.load import bundled_specs_dir

    catalog = load_specs([bundled_specs_dir()])
    for sid in ("dense-train", "moe-train"):
        assert catalog.scenarios[sid].demand == catalog.scenarios["dense-train"].demand
    dense = plan_scenario(catalog, "dense-train", alternatives=0)
    moe = plan_scenario(catalog, "moe-train", alternatives=0)
    assert {catalog.forms[f].chip for f in _forms(dense)} == {"trn2"}
    trn3 = sum(d.chips for s in moe.sites.values() for d in s.deployments if d.form.startswith("trn3"))
    assert trn3 > 0.9 * moe.totals.chips
    for plan in (dense, moe):
        for s in plan.sites.values():
            for d in s.deployments:
                assert d.efficiency_source == "model" and d.mfu is not None and d.goodput is not None
    assert moe.totals.effective_fp8_pflops is not None and moe.totals.effective_fp8_pflops >= 10000


def test_the_digest_covers_the_named_workload_only() -> None:
    from trnplan.catalog import inputs_digest

    named, other = world(MOE), world(MOE)
    other["workloads"]["w"]["efficiency"][0]["value"] = 0.31
    assert inputs_digest(catalog_from_dict(named), "s") != inputs_digest(catalog_from_dict(other), "s")
    bare, extra = world(None, {"fp8_pflops": 43}), world(None, {"fp8_pflops": 43})
    extra["workloads"] = {"w": MOE}
    assert inputs_digest(catalog_from_dict(bare), "s") == inputs_digest(catalog_from_dict(extra), "s")


def test_diff_summary_carries_effective_metrics_only_when_a_plan_states_them() -> None:
    from trnplan.diff import diff_plans

    dense = plan_scenario(catalog_from_dict(world(DENSE)), "s", alternatives=0)
    moe = plan_scenario(catalog_from_dict(world(MOE)), "s", alternatives=0)
    metrics = {m.metric: m for m in diff_plans(dense, moe).summary}
    assert metrics["effective_fp8_pflops"].old == pytest.approx(44.8)
    assert metrics["effective_fp8_pflops"].new == pytest.approx(43.2)
    assert "usd_per_effective_pflop_hour" in metrics
    bare = plan_scenario(catalog_from_dict(world(None, {"fp8_pflops": 43})), "s", alternatives=0)
    names = [m.metric for m in diff_plans(bare, bare).summary]
    assert "effective_fp8_pflops" not in names and "usd_per_effective_pflop_hour" not in names


def test_an_empty_plan_states_no_effective_figures() -> None:
    """A new scenario's diff base is `Plan.empty`: it must not bring the workload metrics into a diff."""
    from trnplan.diff import diff_plans
    from trnplan.plan.model import Plan

    empty = Plan.empty("s")
    assert empty.totals.effective_fp8_pflops is None and empty.totals.usd_per_effective_pflop_hour is None
    bare = plan_scenario(catalog_from_dict(world(None, {"fp8_pflops": 43})), "s", alternatives=0)
    assert "effective_fp8_pflops" not in [m.metric for m in diff_plans(empty, bare).summary]


def test_a_sweep_row_carries_the_effective_figures_of_a_workload_plan() -> None:
    """A sweep row of a scenario with a workload states effective PFLOPs and $/effective-PFLOP-hour, as
    its plan does; a row of a scenario without one has neither key."""
    from trnplan.sweep.grid import Run
    from trnplan.sweep.rows import plan_row

    run = Run(0, {}, ())
    moe = plan_scenario(catalog_from_dict(world(MOE)), "s", alternatives=0)
    row = plan_row(run, moe)
    assert row["effective_fp8_pflops"] == moe.totals.effective_fp8_pflops == pytest.approx(43.2)
    assert row["usd_per_effective_pflop_hour"] == moe.totals.usd_per_effective_pflop_hour
    plain = plan_row(run, plan_scenario(catalog_from_dict(world(None, {"chips": 16})), "s", alternatives=0))
    assert "effective_fp8_pflops" not in plain and "usd_per_effective_pflop_hour" not in plain
