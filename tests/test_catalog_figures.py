"""The shipped catalog reproduces the published figures it was built from and says where each number is from.

Published figures (AWS Neuron docs unless noted; see facts/domain-facts.md):
Trn3 144 GB HBM at 4.9 TB/s, Trn2 96 GB at 2.9 TB/s, +70% per chip; Trn3 1.2 TB/s scale-up per direction
(144 Gen6 lanes, SemiAnalysis); Trn3 UltraServer (NL72x2) 362,448 TFLOPS, 20,736 GiB, 705.6 TB/s; Gen1
(NL32x2) 161,088 TFLOPS, 9,216 GiB, 313.6 TB/s; Trn2 UltraServer 83.2 PF, 185.6 TB/s; trn2.48xlarge 20.8 PF,
1,536 GiB, 46.4 TB/s; GB200 NVL72 130 TB/s NVLink, ~120 kW, ~3.1 M USD; GB300 NVL72 up to 142 kW, 3-4 M USD;
Ironwood pod 9,216 chips, 42.5 EF, 1.77 PB; Helios 1.4 EF FP8, 2.9 EF FP4, 31 TB, 1.4 PB/s, 260 TB/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trnplan.catalog import Catalog, form_derived
from trnplan.catalog.periods import catalog_at
from trnplan.costs import make_option, site_options
from trnplan.costs.fabric import tier_capacity
from trnplan.specs.load import load_specs

SPECS = Path(__file__).resolve().parent.parent / "specs"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_specs([SPECS])


def derived(catalog: Catalog, form_id: str) -> dict:
    return form_derived(catalog.forms[form_id], catalog)


# --- chips ----------------------------------------------------------------------------------------------


def test_trainium_hbm_capacity_and_bandwidth(catalog: Catalog) -> None:
    trn2, trn3 = catalog.chips["trn2"], catalog.chips["trn3"]
    assert trn3.hbm_capacity_gb == 144  # 4 x 36 GB, 12-high
    assert trn2.hbm_capacity_gb == 96  # 4 x 24 GB, 8-high
    assert trn3.hbm_bandwidth_tbps == pytest.approx(4.9152)  # 4 x 1024 bit x 9.6 Gb/s
    assert trn3.hbm_bandwidth_tbps == pytest.approx(4.9, rel=0.005)  # AWS arch page (NKI guide: 4.7)
    assert trn2.hbm_bandwidth_tbps == pytest.approx(2.9184)  # 4 x 1024 bit x 5.7 Gb/s
    assert trn2.hbm_bandwidth_tbps == pytest.approx(2.9, rel=0.01)
    ratio = trn3.hbm_bandwidth_tbps / trn2.hbm_bandwidth_tbps
    assert ratio == pytest.approx(1.684, rel=1e-3)  # "1.7x", "+70%"
    assert ratio == pytest.approx(1.7, rel=0.02)


def test_scale_up_bandwidth_per_direction(catalog: Catalog) -> None:
    assert catalog.chips["trn3"].scale_up_tbps == pytest.approx(1.152)  # 144 Gen6 lanes: "1.2 TB/s"
    assert catalog.chips["trn2"].scale_up_tbps * 2 == pytest.approx(1.28)  # NeuronLink-v3, bidirectional
    for nvidia in ("gb200", "gb300"):
        assert catalog.chips[nvidia].scale_up_tbps == pytest.approx(0.9)  # NVLink5: 1.8 TB/s bidirectional
    assert catalog.chips["tpu7x"].scale_up_tbps * 2 == pytest.approx(1.2)  # ICI 1,200 GB/s bidirectional
    assert catalog.chips["mi455x"].scale_up_tbps * 2 * 72 == pytest.approx(260, rel=0.01)  # Helios 260 TB/s


def test_comparison_chips_hbm(catalog: Catalog) -> None:
    for chip_id, gb, tbps, rel in [
        ("gb200", 192, 8.0, 0.025),
        ("gb300", 288, 8.0, 0.025),
        ("tpu7x", 192, 7.38, 0.002),
        ("mi355x", 288, 8.0, 0.002),
        ("mi455x", 432, 19.6, 0.004),
    ]:
        chip = catalog.chips[chip_id]
        assert chip.hbm_capacity_gb == gb, chip_id
        assert chip.hbm_bandwidth_tbps == pytest.approx(tbps, rel=rel), chip_id


def test_trainium4_follows_the_stated_ratios(catalog: Catalog) -> None:
    trn3, trn4 = catalog.chips["trn3"], catalog.chips["trn4"]
    assert trn4.dense_tflops["fp8"] == pytest.approx(3 * trn3.dense_tflops["fp8"])
    assert trn4.dense_tflops["fp4"] == pytest.approx(6 * trn3.dense_tflops["mxfp4"])
    assert trn4.hbm_bandwidth_tbps == pytest.approx(4 * trn3.hbm_bandwidth_tbps)
    assert trn4.hbm_capacity_gb == 2 * trn3.hbm_capacity_gb
    assert trn4.available_from > trn3.available_from


# --- forms: domain figures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("form_id", "domain", "fp8_pflops", "hbm_gb", "hbm_tbps", "scale_out_tbps"),
    [
        ("trn3-nl72x2", 144, 362.448, 20736, 705.6, 28.8),
        ("trn3-nl32x2", 64, 161.088, 9216, 313.6, 12.8),
        ("trn2-ultraserver", 64, 83.136, 6144, 185.6, 12.8),
        ("trn2-server", 16, 20.784, 1536, 46.4, 3.2),
    ],
)
def test_trainium_domain_figures(catalog, form_id, domain, fp8_pflops, hbm_gb, hbm_tbps, scale_out_tbps):
    d = derived(catalog, form_id)
    chip = catalog.chips[catalog.forms[form_id].chip]
    assert d["domain_chips"] == domain
    assert d["domain_fp8_pflops"] == pytest.approx(fp8_pflops)
    assert d["domain_hbm_tb"] * 1000 == pytest.approx(hbm_gb)
    # AWS multiplies the per-chip bandwidth rounded to 0.1 TB/s (4.9, 2.9), which reproduces the figure
    # exactly; unrounded it lands within 0.7% (Trn2: 64 x 2.918 = 186.8 vs 185.6; Trn3: 0.3%).
    assert domain * round(chip.hbm_bandwidth_tbps, 1) == pytest.approx(hbm_tbps)
    assert d["domain_hbm_bandwidth_tbps"] == pytest.approx(hbm_tbps, rel=0.007)
    assert domain * chip.scale_out_gbps / 1000 == pytest.approx(scale_out_tbps)  # EFA bandwidth per domain


def test_published_rounded_domain_figures(catalog: Catalog) -> None:
    assert derived(catalog, "trn3-nl72x2")["domain_fp8_pflops"] == pytest.approx(362.4, abs=0.05)
    assert derived(catalog, "trn2-ultraserver")["domain_fp8_pflops"] == pytest.approx(83.1, abs=0.05)
    assert derived(catalog, "trn2-server")["domain_fp8_pflops"] == pytest.approx(20.8, abs=0.05)
    assert derived(catalog, "trn3-nl32x2")["domain_fp8_pflops"] == pytest.approx(161, abs=0.1)
    nl72 = derived(catalog, "trn3-nl72x2")
    assert nl72["domain_hbm_bandwidth_tbps"] == pytest.approx(705.6, rel=0.005)
    assert derived(catalog, "trn3-nl32x2")["domain_hbm_bandwidth_tbps"] == pytest.approx(313.6, rel=0.005)
    # Trn3 Gen2 vs Trn2 UltraServer: 4.4x compute, ~3.8-3.9x memory bandwidth
    trn2us = derived(catalog, "trn2-ultraserver")
    assert nl72["domain_fp8_pflops"] / trn2us["domain_fp8_pflops"] == pytest.approx(4.36, abs=0.01)
    bandwidth_gain = nl72["domain_hbm_bandwidth_tbps"] / trn2us["domain_hbm_bandwidth_tbps"]
    assert bandwidth_gain == pytest.approx(3.8, abs=0.1)


def test_form_names_are_the_rosetta_stone(catalog: Catalog) -> None:
    names = {fid: f.names for fid, f in catalog.forms.items()}
    assert (names["trn3-nl32x2"].codename, names["trn3-nl32x2"].topology) == ("Teton3 PDS", "NL32x2 Switched")
    assert (names["trn3-nl72x2"].codename, names["trn3-nl72x2"].topology) == ("Teton3 MAX", "NL72x2 Switched")
    assert names["trn3-nl72x2"].brand.startswith("Trn3 UltraServer")
    assert names["trn3-nl32x2"].brand == "Trn3 Gen1 UltraServer"
    assert names["trn2-ultraserver"].topology == "4x4x4 3D torus"
    assert catalog.forms["trn3-nl32x2"].cooling[0] == "air"
    assert catalog.forms["trn3-nl72x2"].cooling == ["liquid"]


def test_comparison_racks(catalog: Catalog) -> None:
    tpu = catalog.chips["tpu7x"]
    assert 9216 * tpu.fp8_tflops / 1e6 == pytest.approx(42.5, rel=0.002)  # Ironwood pod, EF
    assert 9216 * tpu.hbm_capacity_gb / 1e6 == pytest.approx(1.77, rel=0.002)  # PB
    assert 9216 / catalog.forms["tpu7x-cube"].chips_per_rack == 144  # racks per pod
    helios = derived(catalog, "amd-helios")
    mi455x = catalog.chips["mi455x"]
    assert helios["domain_fp8_pflops"] / 1000 == pytest.approx(1.4, rel=0.03)
    assert 72 * mi455x.dense_tflops["fp4"] / 1e6 == pytest.approx(2.9, rel=0.01)
    assert helios["domain_hbm_tb"] == pytest.approx(31, rel=0.01)
    assert helios["domain_hbm_bandwidth_tbps"] / 1000 == pytest.approx(1.4, rel=0.02)
    gb200 = catalog.chips["gb200"]
    assert 72 * gb200.scale_up_tbps * 2 == pytest.approx(130, rel=0.01)  # NVL72 130 TB/s NVLink
    assert 72 * gb200.dense_tflops["fp8"] * 2 / 1000 == pytest.approx(720)  # 720 PF FP8 sparse
    # NVLink: 9 trays x 144 links x 400 Gb/s = 72 GPUs x 900 GB/s per direction
    tray = catalog.switches["nvlink5-tray"]
    assert 9 * tray.lanes * 400 / 8 / 1000 == pytest.approx(72 * gb200.scale_up_tbps)


# --- forms: power and money ------------------------------------------------------------------------------


def test_nvl72_rack_power_and_price(catalog: Catalog) -> None:
    gb200 = make_option(catalog, "gb200-nvl72", "liquid", "nvlink5-tray")
    gb300 = make_option(catalog, "gb300-nvl72", "liquid", "nvlink5-tray")
    assert gb200.rack_it_kw == pytest.approx(120)  # ~120 kW (press); 132 kW power-shelf output
    assert gb300.rack_it_kw == pytest.approx(142)  # "requiring up to 142 kW"

    def rack_usd(opt) -> float:  # chips, kit and NVLink trays: what a rack price covers
        return opt.capex_usd - opt.it_kw * catalog.cooling[opt.cooling].capex_usd_per_kw

    assert rack_usd(gb200) == pytest.approx(3.1e6, rel=0.01)  # FETCH ~3.1 M USD
    assert 3.0e6 <= rack_usd(gb300) <= 4.0e6  # AA-GB300 3-4 M USD
    assert rack_usd(gb200) / 72 == pytest.approx(43_000, rel=0.01)  # ~43 k USD all-in per GPU


def test_trainium_price_rule(catalog: Catalog) -> None:
    """Custom silicon: all-in per FP8 PFLOP at 50% of GB200's (Trn3, "up to 50% cheaper", at its launch
    price: its path falls from 2027), 65% for Trn2."""
    catalog = catalog_at(catalog, "trn3-100k", "2026-06")
    gb200 = make_option(catalog, "gb200-nvl72", "liquid", "nvlink5-tray")
    gb200_kit_usd = gb200.capex_usd - gb200.it_kw * catalog.cooling["liquid"].capex_usd_per_kw
    gpu_per_pf = gb200_kit_usd / gb200.fp8_pflops
    for form_id, cooling, switch, share in [
        ("trn3-nl72x2", "liquid", "pcie6-160", 0.50),
        ("trn2-ultraserver", "air", "none", 0.65),
    ]:
        opt = make_option(catalog, form_id, cooling, switch)
        # what a rack price covers: chips, kit and scale-up switches (not cooling, not the copper to the leaf)
        network = opt.copper_links * catalog.forms[form_id].copper_usd
        rack = opt.capex_usd - opt.it_kw * catalog.cooling[cooling].capex_usd_per_kw - network
        assert rack / opt.fp8_pflops / gpu_per_pf == pytest.approx(share, rel=0.01), form_id


def test_every_rack_fits_a_cooling_it_supports(catalog: Catalog) -> None:
    for form_id, form in catalog.forms.items():
        for option, kw in derived(catalog, form_id)["rack_it_kw"].items():
            limits = [catalog.cooling[q].max_rack_kw for q in form.cooling]
            assert kw <= max(limits), f"{form_id}/{option}: {kw:.1f} kW fits none of {form.cooling}"


def test_air_nl32x2_fits_the_air_hall(catalog: Catalog) -> None:
    limit = min(catalog.cooling["air"].max_rack_kw, catalog.sites["iad-air"].max_rack_kw)
    for option, kw in derived(catalog, "trn3-nl32x2")["rack_it_kw"].items():
        # 32 x ~1 kW plus overhead and switches; 9 UALink switches (counted by lanes) push it past 45 kW
        top = limit if option.startswith("pcie6") else catalog.cooling["air"].max_rack_kw
        assert 32 < kw <= top, option
    for option, kw in derived(catalog, "trn3-nl72x2")["rack_it_kw"].items():
        assert catalog.cooling["air"].max_rack_kw < kw <= catalog.cooling["liquid"].max_rack_kw, option


# Switch levels AWS documents: Gen1 all-to-all through one NeuronSwitch-v1 level; Gen2 a level-1 switch in
# each server and level-2 switches across servers, level 2 taken at half the chip lanes (forms.yaml header).
SWITCH_LANES_PER_CHIP_LANE = {"trn3-nl32x2": 1, "trn3-nl72x2": 2, "amd-helios": 1}


def test_scale_up_switch_counts_cover_the_chip_lanes(catalog: Catalog) -> None:
    """Per rack and switch level, switch lanes cover the chips' active lanes, for all three generations:
    a UALink switch is counted by lanes too (a 64 Gb/s PCIe Gen6 chip lane takes a 200G lane whole)."""
    for form_id, levels in SWITCH_LANES_PER_CHIP_LANE.items():
        form = catalog.forms[form_id]
        chip = catalog.chips[form.chip]
        for opt in form.scale_up:
            switch = catalog.switches[opt.switch]
            need, have = levels * form.chips_per_rack * chip.scale_up.lanes, opt.per_rack * switch.lanes
            assert need <= have, (form_id, opt.switch)
            assert (opt.per_rack - 1) * switch.lanes < need, (form_id, opt.switch)  # no spare switch
    by_id = {o.switch: o.per_rack for o in catalog.forms["trn3-nl72x2"].scale_up}
    assert by_id == {"pcie6-160": 130, "pcie6-320": 65, "ualink-200g": 41}  # 2 x 10,368 lanes
    by_id = {o.switch: o.per_rack for o in catalog.forms["trn3-nl32x2"].scale_up}
    assert by_id == {"pcie6-160": 29, "pcie6-320": 15, "ualink-200g": 9}  # 4,608 lanes


def test_endpoint_optics_match_scale_out_bandwidth(catalog: Catalog) -> None:
    """Rack-side optics are counted in 200G port-equivalents: one per 200 Gb/s of chip scale-out."""
    for form_id, form in catalog.forms.items():
        chip = catalog.chips[form.chip]
        assert form.endpoint_optics_per_chip == pytest.approx(chip.scale_out_gbps / 200), form_id


# --- switches ---------------------------------------------------------------------------------------------


def test_scale_out_radix_and_two_tier_reach(catalog: Catalog) -> None:
    expected = {
        "th3-12t8": (64, 2048),
        "th4-25t6": (128, 8192),
        "th5-51t2": (256, 32768),
        "th6-102t4": (512, 131072),
    }
    for switch_id, (radix, two_tier) in expected.items():
        switch = catalog.switches[switch_id]
        assert switch.role == "scale_out" and switch.port_gbps == 200
        assert switch.radix == radix
        assert tier_capacity(radix, 2) == two_tier
    # Broadcom: TH6 reaches more than 100,000 XPUs in two tiers at 200G
    assert tier_capacity(catalog.switches["th6-102t4"].radix, 2) > 100_000


def test_scale_out_trade_offs(catalog: Catalog) -> None:
    """Each generation: cheaper per port (every port is 200 Gb/s, so per bit: The Next Platform's cost per
    bit falls every generation) though dearer per box, fewer watts per port, no dearer optics per port."""
    ids = ["th3-12t8", "th4-25t6", "th5-51t2", "th6-102t4"]
    switches = [catalog.switches[i] for i in ids]
    per_port_usd = [s.unit_usd / s.radix for s in switches]
    per_port_w = [s.power_w / s.radix for s in switches]
    assert per_port_usd == sorted(per_port_usd, reverse=True) and len(set(per_port_usd)) == len(ids)
    assert [s.unit_usd for s in switches] == sorted(s.unit_usd for s in switches)
    assert per_port_w == sorted(per_port_w, reverse=True)
    assert [s.optic_w for s in switches] == sorted((s.optic_w for s in switches), reverse=True)
    assert [s.available_from for s in switches] == sorted(s.available_from for s in switches)


def test_scale_up_switches(catalog: Catalog) -> None:
    s160, s320, ualink = (catalog.switches[i] for i in ("pcie6-160", "pcie6-320", "ualink-200g"))
    assert (s160.lanes, s160.ports) == (160, 20)
    assert s320.lanes * 8 * 2 / 1000 == pytest.approx(5.12)  # Scorpio X: 5.12 TB/s bidirectional
    assert s160.available_from < s320.available_from < ualink.available_from  # the Trn3 roadmap
    assert all(s.role == "scale_up" for s in (s160, s320, ualink))


# --- sites, cooling, scenarios ----------------------------------------------------------------------------


def test_site_prices_are_the_published_rates(catalog: Catalog) -> None:
    """PJM halls pay 2026 power: the EIA rate plus PJM's capacity price rise to 2026/27 at full load."""
    pjm_2026 = (329.17 - 28.92) / 24 / 1000  # USD/MW-day -> USD/kWh
    sites = catalog.sites
    assert sites["iad-air"].electricity_usd_per_kwh == pytest.approx(0.0892 + pjm_2026, abs=1e-4)  # EIA VA
    assert sites["ind-new"].electricity_usd_per_kwh == pytest.approx(0.0901 + pjm_2026, abs=1e-4)  # EIA IN
    assert sites["ind-own"].electricity_usd_per_kwh == sites["ind-new"].electricity_usd_per_kwh
    assert catalog.sites["wa-remote"].electricity_usd_per_kwh == pytest.approx(0.0635)  # EIA WA 2023, not PJM
    # a 64 MW secondary-market hall leases wholesale: ~7 B USD for 250 MW over 15 years (Applied Digital)
    assert catalog.sites["ind-new"].colocation_usd_per_kw_month == pytest.approx(7e9 / 250_000 / 180, abs=1)
    assert catalog.sites["iad-air"].colocation_usd_per_kw_month == pytest.approx(195.94)  # CBRE H2 2025


def test_sites_pull_in_different_directions(catalog: Catalog) -> None:
    iad, ind, wa = catalog.sites["iad-air"], catalog.sites["ind-new"], catalog.sites["wa-remote"]
    assert iad.cooling == ["air"]
    assert ind.grid_power_mw is not None and ind.grid_power_mw < ind.it_power_mw * catalog.cooling["air"].pue
    assert ind.cooling_fixed_usd.get("liquid", 0) == 0 < wa.cooling_fixed_usd["liquid"]
    assert wa.electricity_usd_per_kwh < min(iad.electricity_usd_per_kwh, ind.electricity_usd_per_kwh)
    cooling = catalog.cooling
    assert cooling["liquid"].pue < cooling["rear-door"].pue < cooling["air"].pue
    assert cooling["air"].max_rack_kw < cooling["rear-door"].max_rack_kw < cooling["liquid"].max_rack_kw


def test_every_scenario_site_has_options(catalog: Catalog) -> None:
    for scenario_id, scenario in catalog.scenarios.items():
        options = {s: site_options(catalog, scenario, s) for s in scenario.sites}
        assert any(options.values()), scenario_id


@pytest.mark.slow
@pytest.mark.parametrize("scenario_id", ["trn3-100k", "moe-144", "perf-per-tco", "max-perf-1b"])
def test_shipped_scenarios_are_feasible(catalog: Catalog, scenario_id: str) -> None:
    from trnplan.plan import plan_scenario
    from trnplan.plan.check import check_plan

    plan = plan_scenario(catalog, scenario_id, alternatives=0)
    assert check_plan(plan, catalog) == []
    scenario = catalog.scenarios[scenario_id]
    if scenario.demand.chips:
        assert plan.totals.chips >= scenario.demand.chips
    if scenario.demand.fp8_pflops:
        assert plan.totals.fp8_pflops >= scenario.demand.fp8_pflops


def test_shipped_scenario_ids(catalog: Catalog) -> None:
    assert {"trn3-100k", "moe-144", "perf-per-tco", "max-perf-1b"} <= set(catalog.scenarios)
    assert catalog.scenarios["moe-144"].min_domain_chips == 144
    assert catalog.scenarios["trn3-100k"].demand.chips == 100_000


# --- provenance -------------------------------------------------------------------------------------------

KINDS = ("chips", "forms", "switches", "cooling", "sites", "scenarios")


def test_every_entity_has_a_source(catalog: Catalog) -> None:
    for kind in KINDS:
        for entity_id, entity in catalog.of(kind).items():
            assert entity.sources, f"{kind}.{entity_id} has no sources"
            assert all(("http" in s or "." in s) for s in entity.sources), f"{kind}.{entity_id}"


def _estimated(entity, field: str) -> bool:
    """A field counts as estimated when it, or any dotted part of it, is listed."""
    return any(e == field or e.startswith(field + ".") for e in entity.estimates)


def test_unpublished_numbers_are_marked_estimates(catalog: Catalog) -> None:
    for chip_id in ("trn2", "trn3", "trn4"):
        chip = catalog.chips[chip_id]
        assert _estimated(chip, "tdp_w") and _estimated(chip, "unit_usd"), chip_id  # no Trainium TDP or price
    for chip_id, chip in catalog.chips.items():
        assert _estimated(chip, "unit_usd"), chip_id  # no list prices: all derive from rack-price estimates
    for chip_id in ("tpu7x", "mi455x", "trn4"):
        assert _estimated(catalog.chips[chip_id], "tdp_w"), chip_id  # not public
    for form_id, form in catalog.forms.items():
        assert _estimated(form, "rack_overhead_kw"), form_id  # no rack overhead is published
        assert _estimated(form, "rack_bom"), form_id  # no rack BOM is published
        if any(o.switch != "nvlink5-tray" for o in form.scale_up):
            assert _estimated(form, "scale_up"), form_id  # switch counts per rack are not published
    for switch_id, switch in catalog.switches.items():
        assert _estimated(switch, "unit_usd"), switch_id  # no switch price is public
        # power is public only as a shipping system's datasheet figure, and then cited
        assert _estimated(switch, "power_w") or any("913 W" in s for s in switch.sources), switch_id
        if switch.role == "scale_out":
            assert _estimated(switch, "optic_usd") and _estimated(switch, "optic_w"), switch_id
    for cooling_id, cooling in catalog.cooling.items():
        assert _estimated(cooling, "pue") and _estimated(cooling, "capex_usd_per_kw"), cooling_id
    for site_id, site in catalog.sites.items():
        assert _estimated(site, "it_power_mw") and _estimated(site, "rack_positions"), site_id
        assert not _estimated(site, "electricity_usd_per_kwh"), site_id  # EIA rates are published
    for scenario_id, scenario in catalog.scenarios.items():
        assert _estimated(scenario, "cost_of_capital"), scenario_id
        assert not _estimated(scenario, "horizon_years"), scenario_id  # Amazon's 5-year server life


def test_estimates_name_fields_that_are_set(catalog: Catalog) -> None:
    for kind in KINDS:
        for entity_id, entity in catalog.of(kind).items():
            for name in entity.estimates:
                top = name.split(".")[0]
                value = getattr(entity, top)
                assert value is not None, f"{kind}.{entity_id}: estimates names unset field {name}"
                if "." in name:
                    sub = name.split(".", 1)[1]
                    container = value if isinstance(value, dict) else value.model_dump()
                    assert sub in container, f"{kind}.{entity_id}: estimates names unknown part {name}"
