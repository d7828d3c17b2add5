"""The spec loader: every problem at once with file:line:col, layering, --set, digests.

Fixtures: `tests/fixtures/tiny_specs/` (valid: one chip, two switches, two cooling types, one form, one
site, one scenario) and `tests/fixtures/bad_specs/` (planted mistakes, listed at the top of each file).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from trnplan.catalog import Catalog, Origin
from trnplan.errors import SpecError
from trnplan.specs.load import bundled_specs_dir, default_spec_dirs, inputs_digest, load_specs

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
TINY = FIXTURES / "tiny_specs"


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return directory


def tiny_copy(tmp_path: Path, name: str = "specs") -> Path:
    return Path(shutil.copytree(TINY, tmp_path / name))


def problems_of(dirs: list[Path] | list[str], overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_specs(dirs, overrides)
    assert str(info.value).endswith(
        f"{len(info.value.problems)} problem{'s' if len(info.value.problems) != 1 else ''} found"
    )
    return [str(p) for p in info.value.problems]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# Every planted mistake, located


def test_bad_specs_fixture_reports_every_planted_mistake_located(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    d = "tests/fixtures/bad_specs"
    assert problems_of([d]) == [
        f"{d}/chips.yaml:6:3: chips.trn3: missing required field 'tdp_w'",
        f"{d}/chips.yaml:9:5: chips.trn3.tdp_watts: unknown field 'tdp_watts'; did you mean 'tdp_w'?",
        f"{d}/chips.yaml:18:5: chips.trn2.vendor: duplicate key 'vendor' (first at line 17)",
        f"{d}/chips.yaml:19:5: chips.trn2.tdp_w: 0.5 W is outside the plausible range 50 to 5000 W; "
        "this looks like kW typed into a W field",
        f"{d}/chips.yaml:21:29: chips.trn2.hbm.stacks: expected a whole number, got the text 'four'",
        f"{d}/chips.yaml:25:3: chips.Trn1: 'Trn1' is not a valid id: ids use lowercase letters, digits, "
        "'.' and '-', and start with a letter or digit; did you mean 'trn1'?",
        f"{d}/forms.yaml:7:5: forms.trn2-server.chip: unknown chip 'trn-2'; did you mean 'trn2'?",
        f"{d}/forms.yaml:19:5: forms.trn3-nl32x2.domain_chips: domain_chips 48 must divide the unit "
        "(32 chips x 2 racks = 64)",
        f"{d}/forms.yaml:20:23: forms.trn3-nl32x2.cooling.1: unknown cooling type 'aire'; did you mean "
        "'air'?",
        f"{d}/sites.yaml:6:3: cooling.air: cooling type 'air' is defined twice in this spec directory; "
        f"first at {d}/forms.yaml:26:3",
        f"{d}/sites.yaml:14:5: sites.iad-a.it_power_mw: 40000 MW is outside the plausible range 0.01 to "
        "10000 MW; this looks like kW typed into a MW field",
        f"{d}/sites.yaml:22:13: scenarios.trn3-big.sites.0: unknown site 'iad-b'; did you mean 'iad-a'?",
    ]


def test_tiny_specs_load_with_origins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    catalog = load_specs(["tests/fixtures/tiny_specs"])
    assert isinstance(catalog, Catalog)
    assert list(catalog.chips) == ["trn3"]
    assert list(catalog.switches) == ["pcie6-160", "th5-51t2"]
    assert list(catalog.cooling) == ["air", "liquid"]
    assert catalog.forms["trn3-nl72x2"].unit_chips == 144
    assert catalog.chips["trn3"].tdp_w == 1000.0
    assert catalog.origins[("chips", "trn3")] == Origin("tests/fixtures/tiny_specs/hardware.yaml", 3, 3)
    assert catalog.origins[("scenarios", "trn3-10k")] == Origin("tests/fixtures/tiny_specs/sites.yaml", 14, 3)
    assert len(catalog.origins) == 8
    assert load_specs("tests/fixtures/tiny_specs").chips == catalog.chips  # one directory, given bare


def test_type_field_and_shape_errors_are_human(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    edit(specs / "hardware.yaml", "    scale_out_gbps: 200\n", "    scale_out_gbps: 200 Gbps\n")
    edit(specs / "hardware.yaml", "    unit_usd: 20000\n", "    unit_usd: '20000'\n")
    edit(
        specs / "hardware.yaml",
        "scale_up: {pcie_gen: 6, lanes: 144}",
        "scale_up: {pcie_gen: 6, lanes: 144, lane_gbps: 64}",
    )
    edit(specs / "forms.yaml", "    topology: switched\n", "    topology: switchd\n")
    edit(specs / "forms.yaml", "    cooling: [liquid]\n", "    cooling: []\n")
    edit(specs / "forms.yaml", "{brand: Trn3 UltraServer,", "{brand: Trn3 UltraServer, codenam: x,")
    edit(specs / "sites.yaml", "    rack_positions: 900\n", "    rack_positions: 900.5\n")
    edit(specs / "sites.yaml", "    as_of: 2026-06\n", "    as_of: 2026-13\n")
    edit(specs / "sites.yaml", "    utilization: 0.8\n", "    utilization: 80\n")
    f = str(specs)
    assert problems_of([specs]) == [
        f"{f}/forms.yaml:5:38: forms.trn3-nl72x2.names.codenam: unknown field 'codenam'; did you mean "
        "'codename'?",
        f"{f}/forms.yaml:6:5: forms.trn3-nl72x2.topology: expected 'switched' or 'torus', got the text "
        "'switchd'; did you mean 'switched'?",
        f"{f}/forms.yaml:10:5: forms.trn3-nl72x2.cooling: needs at least 1 item",
        f"{f}/hardware.yaml:9:5: chips.trn3.scale_up: give exactly one of pcie_gen (PCIe lane rate) or "
        "lane_gbps",
        f"{f}/hardware.yaml:10:5: chips.trn3.scale_out_gbps: expected a number, got the text '200 Gbps'; "
        "write a bare number, the unit is in the field name",
        f"{f}/hardware.yaml:11:5: chips.trn3.unit_usd: expected a number, got the text '20000'; "
        "write numbers without quotes",
        f"{f}/sites.yaml:6:5: sites.iad-a.rack_positions: expected a whole number, got 900.5",
        f"{f}/sites.yaml:19:5: scenarios.trn3-10k.as_of: '2026-13' is not a month: write YYYY-MM, e.g. "
        "2026-06",
        f"{f}/sites.yaml:24:5: scenarios.trn3-10k.utilization: 80 (fraction) is outside the plausible range "
        "0.01 to 1 (fraction); this looks like a percentage; write 0.8 for 80%",
    ]


def test_whole_entity_rules_point_at_the_field_they_name(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    edit(specs / "hardware.yaml", "dense_tflops: {fp8: 2517, bf16: 671}", "dense_tflops: {bf16: 671}")
    edit(specs / "sites.yaml", "cooling_fixed_usd: {liquid: 2000000}", "cooling_fixed_usd: {Liquid: 2000000}")
    edit(specs / "sites.yaml", "    sites: [iad-a]\n", "    sites: [iad-a, iad-a]\n")
    f = str(specs)
    assert problems_of([specs]) == [
        f"{f}/hardware.yaml:7:5: chips.trn3.dense_tflops: dense_tflops needs an fp8 entry "
        "(FP8 PFLOPs are what plans count)",
        f"{f}/sites.yaml:8:25: sites.iad-a.cooling_fixed_usd.Liquid: 'Liquid' is not a valid key: ids use "
        "lowercase letters, digits, '.' and '-', and start with a letter or digit; did you mean 'liquid'?",
        f"{f}/sites.yaml:15:5: scenarios.trn3-10k.sites: sites lists a site twice",
    ]


def test_cross_references_are_located_with_did_you_mean(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    edit(
        specs / "forms.yaml",
        "      - {switch: pcie6-160, per_rack: 9}\n",
        "      - {switch: pcie6-16, per_rack: 9}\n      - {switch: th5-51t2, per_rack: 1}\n",
    )
    edit(specs / "sites.yaml", "cooling_fixed_usd: {liquid: 2000000}", "cooling_fixed_usd: {liqiud: 2000000}")
    edit(specs / "sites.yaml", "    chips: [trn3]\n", "    chips: [trn3, trn4]\n    forms: [trn3-nl72]\n")
    edit(specs / "sites.yaml", "supply: {pcie6-160: 4000}", "supply: {pcie6-160: 4000, pcie7: 1}")
    edit(specs / "sites.yaml", "fabric: {cooling: air}", "fabric: {cooling: aircooled}")
    f = str(specs)
    assert problems_of([specs]) == [
        f"{f}/forms.yaml:15:10: forms.trn3-nl72x2.scale_up.0.switch: unknown switch 'pcie6-16'; did you "
        "mean 'pcie6-160'?",
        f"{f}/forms.yaml:16:10: forms.trn3-nl72x2.scale_up.1.switch: switch 'th5-51t2' is a scale_out "
        "switch; scale_up options need a scale_up switch",
        f"{f}/sites.yaml:8:25: sites.iad-a.cooling_fixed_usd.liqiud: 'liqiud' is not among this site's "
        "cooling (air, liquid); did you mean 'liquid'?",
        f"{f}/sites.yaml:16:19: scenarios.trn3-10k.chips.1: unknown chip 'trn4'; did you mean 'trn3'?",
        f"{f}/sites.yaml:17:13: scenarios.trn3-10k.forms.0: unknown form 'trn3-nl72'; did you mean "
        "'trn3-nl72x2'?",
        f"{f}/sites.yaml:21:31: scenarios.trn3-10k.supply.pcie7: unknown chip, form or switch 'pcie7'",
        f"{f}/sites.yaml:27:14: scenarios.trn3-10k.fabric.cooling: unknown cooling type 'aircooled'",
    ]


def test_default_fabric_cooling_must_exist(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    edit(specs / "sites.yaml", "    fabric: {cooling: air}\n", "")
    edit(specs / "hardware.yaml", "  air: {max_rack_kw: 45", "  dry: {max_rack_kw: 45")
    edit(specs / "sites.yaml", "cooling: [air, liquid]", "cooling: [dry, liquid]")
    assert problems_of([specs]) == [
        f"{specs}/sites.yaml:14:3: scenarios.trn3-10k.fabric: the scale-out fabric is cooled by 'air' unless "
        "fabric.cooling says otherwise, and there is no cooling type 'air'"
    ]


def test_file_level_problems(tmp_path: Path) -> None:
    specs = write(
        tmp_path / "s",
        {
            "a.yaml": "chip:\n  x: {}\n",
            "b.yaml": "- chips\n",
            "c.yaml": "chips: [x]\n",
            "d.yaml": "# only a comment\n",
            "e.yaml": "",
        },
    )
    assert problems_of([specs]) == [
        f"{specs}/a.yaml:1:1: chip: unknown collection 'chip' (expected chips, forms, switches, cooling, "
        "sites, scenarios, workloads, power_chains); did you mean 'chips'?",
        f"{specs}/b.yaml:1:1: a spec file is a mapping of chips, forms, switches, cooling, sites, scenarios, "
        "workloads, power_chains; got a list of 1 item",
        f"{specs}/c.yaml:1:1: chips: expected a mapping of id -> chip, got a list of 1 item",
    ]


def test_an_id_twice_in_one_file_or_one_directory(tmp_path: Path) -> None:
    cooling = "{max_rack_kw: 45, pue: 1.3, capex_usd_per_kw: 1}"
    specs = write(
        tmp_path / "s",
        {
            "a.yaml": f"cooling:\n  air: {cooling}\n  air: {cooling}\n",
            "b.yml": f"cooling:\n  air: {cooling}\n",
        },
    )
    assert problems_of([specs]) == [
        f"{specs}/a.yaml:3:3: cooling.air: duplicate key 'air' (first at line 2)",
        f"{specs}/b.yml:2:3: cooling.air: cooling type 'air' is defined twice in this spec directory; "
        f"first at {specs}/a.yaml:2:3",
    ]


def test_an_unreadable_file_does_not_cascade_into_unknown_references(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    (specs / "hardware.yaml").write_text("chips: [unclosed\n", encoding="utf-8")
    problems = problems_of([specs])
    assert problems == [
        f"{specs}/hardware.yaml:2:1: YAML syntax: a '[' list opened at line 1 is never closed: add the ']' "
        "(the parser: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence started at "
        "line 1))"
    ]


def test_directories_are_read_recursively_in_sorted_order_skipping_hidden(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    (specs / "nested" / "deeper").mkdir(parents=True)
    (specs / "hardware.yaml").rename(specs / "nested" / "deeper" / "hardware.yml")
    write(specs / ".git", {"junk.yaml": "not: [valid\n"})
    (specs / "README.md").write_text("not yaml", encoding="utf-8")
    catalog = load_specs([specs])
    assert catalog.origins[("chips", "trn3")].file == f"{specs}/nested/deeper/hardware.yml"


def test_a_missing_or_empty_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path / "docs", {"notes.txt": "hello"})
    assert problems_of([tmp_path / "nope", tmp_path / "empty", tmp_path / "docs"]) == [
        f"{tmp_path}/docs: no spec files (*.yaml, *.yml) in this directory",
        f"{tmp_path}/empty: no spec files (*.yaml, *.yml) in this directory",
        f"{tmp_path}/nope: spec directory not found",
    ]
    with pytest.raises(SpecError):
        load_specs([])


def test_paths_are_shown_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = tiny_copy(tmp_path)
    edit(specs / "hardware.yaml", "    tdp_w: 1000\n", "    tdp_w: 1.2\n")
    monkeypatch.chdir(tmp_path)
    expected = (
        "specs/hardware.yaml:6:5: chips.trn3.tdp_w: 1.2 W is outside the plausible range 50 to 5000 W; "
        "this looks like kW typed into a W field"
    )
    assert problems_of([specs]) == [expected]
    assert problems_of(["specs"]) == [expected]
    assert problems_of(["./specs/"]) == [expected]


# ---------------------------------------------------------------------------------------------------
# Plausible but unusual values pass


def test_small_and_huge_sites_are_plausible(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    extra = write(
        tmp_path / "more",
        {
            "sites.yaml": """
            sites:
              edge-1:
                it_power_mw: 0.2
                rack_positions: 4
                cooling: [air]
                electricity_usd_per_kwh: 0.31
                colocation_usd_per_kw_month: 0
              gigawatt:
                it_power_mw: 2000
                grid_power_mw: 2600
                rack_positions: 40000
                cooling: [air, liquid]
                electricity_usd_per_kwh: 0.04
                colocation_usd_per_kw_month: 95
            """
        },
    )
    catalog = load_specs([specs, extra])
    assert catalog.sites["edge-1"].it_power_mw == 0.2
    assert catalog.sites["gigawatt"].it_power_kw == 2_000_000
    assert sorted(catalog.sites) == ["edge-1", "gigawatt", "iad-a"]


def test_numbers_written_with_an_exponent_are_numbers(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    edit(specs / "hardware.yaml", "    unit_usd: 20000\n", "    unit_usd: 2e4\n")
    assert load_specs([specs]).chips["trn3"].unit_usd == 20000.0


# ---------------------------------------------------------------------------------------------------
# Layering


def test_later_directories_replace_whole_entities(tmp_path: Path) -> None:
    base = tiny_copy(tmp_path, "base")
    overlay = write(
        tmp_path / "overlay",
        {
            "mine.yaml": """
            sites:
              iad-a:
                it_power_mw: 12
                rack_positions: 300
                cooling: [air]
                electricity_usd_per_kwh: 0.05
                colocation_usd_per_kw_month: 150
            cooling:
              immersion: {max_rack_kw: 200, pue: 1.05, capex_usd_per_kw: 4000}
            """
        },
    )
    catalog = load_specs([base, overlay])
    site = catalog.sites["iad-a"]
    assert site.it_power_mw == 12
    assert site.grid_power_mw is None  # not merged field by field: the base's 52 MW is gone
    assert site.cooling_fixed_usd == {}
    assert catalog.origins[("sites", "iad-a")] == Origin(f"{overlay}/mine.yaml", 2, 3)
    assert sorted(catalog.cooling) == ["air", "immersion", "liquid"]
    assert catalog.chips == load_specs([base]).chips
    reversed_order = load_specs([overlay, base])
    assert reversed_order.sites["iad-a"].it_power_mw == 40


def test_an_overlay_may_fix_a_reference_of_the_base(tmp_path: Path) -> None:
    base = tiny_copy(tmp_path, "base")
    edit(base / "forms.yaml", "    chip: trn3\n", "    chip: trn3e\n")
    assert problems_of([base]) == [
        f"{base}/forms.yaml:4:5: forms.trn3-nl72x2.chip: unknown chip 'trn3e'; did you mean 'trn3'?"
    ]
    chips = (
        (TINY / "hardware.yaml")
        .read_text(encoding="utf-8")
        .split("\nswitches:")[0]
        .replace("  trn3:", "  trn3e:")
    )
    overlay = write(tmp_path / "overlay", {"chips.yaml": chips})
    assert sorted(load_specs([base, overlay]).chips) == ["trn3", "trn3e"]


# ---------------------------------------------------------------------------------------------------
# --set PATH=VALUE


def test_set_overrides_values_after_layering(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    catalog = load_specs(
        [specs],
        [
            "sites.iad-a.it_power_mw=35",
            "sites.iad-a.cooling=[air, liquid]",
            "scenarios.trn3-10k.demand.chips=50000",
            "scenarios.trn3-10k.budget.capex_usd=2.0e9",
            "scenarios.trn3-10k.supply.th5-51t2=40",
            "forms.trn3-nl72x2.scale_up.0.per_rack=4",
            "chips.trn3.hbm.stacks=6",
            "chips.trn3.hbm.stacks=8",
        ],
    )
    assert catalog.sites["iad-a"].it_power_mw == 35
    assert catalog.scenarios["trn3-10k"].demand.chips == 50000
    assert catalog.scenarios["trn3-10k"].budget.capex_usd == 2e9
    assert catalog.scenarios["trn3-10k"].supply == {"pcie6-160": 4000, "th5-51t2": 40}
    assert catalog.forms["trn3-nl72x2"].scale_up[0].per_rack == 4
    assert catalog.chips["trn3"].hbm.stacks == 8  # the last --set wins


def test_set_resolves_ids_and_keys_that_contain_dots(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    for path in (specs / "forms.yaml", specs / "sites.yaml"):
        path.write_text(path.read_text(encoding="utf-8").replace("pcie6-160", "pcie6.160"), encoding="utf-8")
    edit(specs / "hardware.yaml", "  pcie6-160:", "  pcie6.160:")
    edit(specs / "forms.yaml", "  trn3-nl72x2:", "  trn2.48xlarge:")
    catalog = load_specs(
        [specs],
        [
            "forms.trn2.48xlarge.chips_per_rack=144",
            "scenarios.trn3-10k.supply.pcie6.160=7",
            "switches.pcie6.160.ports=24",
        ],
    )
    assert catalog.forms["trn2.48xlarge"].chips_per_rack == 144
    assert catalog.scenarios["trn3-10k"].supply == {"pcie6.160": 7}
    assert catalog.switches["pcie6.160"].ports == 24


def test_bad_set_paths_and_values_are_located_at_the_argument(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    assert problems_of(
        [specs],
        (
            "site.iad-a.it_power_mw=40",
            "sites.iad-b.it_power_mw=40",
            "sites.iad-a.it_power_m=40",
            "sites.iad-a.it_power_mw=40000",
            "sites.iad-a.it_power_mw.x=1",
            "forms.trn3-nl72x2.scale_up.3.per_rack=1",
            "sites.iad-a",
            "sites.iad-a.cooling=[air, liquid",
            "sites.iad-a.rack_positions=!!python/object/apply:os.system [ls]",
            "scenarios.trn3-10k.fabric.cooling=liqiud",
        ),
    ) == [
        "--set:1:1: site: unknown collection 'site' (expected chips, forms, switches, cooling, sites, "
        "scenarios, workloads, power_chains); did you mean 'sites'?",
        "--set:2:7: sites.iad-b: unknown site 'iad-b'; did you mean 'iad-a'?",
        "--set:3:24: sites.iad-a.it_power_m: unknown field 'it_power_m'; did you mean 'it_power_mw'?",
        "--set:4:25: sites.iad-a.it_power_mw: 40000 MW is outside the plausible range 0.01 to 10000 MW; "
        "this looks like kW typed into a MW field",
        "--set:5:25: sites.iad-a.it_power_mw: it_power_mw holds the whole number 40000; there is no 'x' "
        "inside it",
        "--set:6:28: forms.trn3-nl72x2.scale_up.3: scale_up is a list of 1 item; item numbers are 0 to 0",
        "--set:7:1: expected PATH=VALUE (e.g. sites.iad-a.it_power_mw=40), got 'sites.iad-a'",
        "--set:8:33: sites.iad-a.cooling: YAML syntax: a '[' list opened at line 1 is never closed: add the "
        "']' (the parser: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence started "
        "at line 1))",
        "--set:9:28: sites.iad-a.rack_positions: tag '!!python/object/apply:os.system' is not allowed: "
        "specs are plain YAML (mappings, lists, text, numbers, booleans, null)",
        "--set:10:35: scenarios.trn3-10k.fabric.cooling: unknown cooling type 'liqiud'; did you mean "
        "'liquid'?",
    ]


# ---------------------------------------------------------------------------------------------------
# Where specs come from, and digests


def test_default_spec_dirs_prefer_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert default_spec_dirs() == [bundled_specs_dir()]
    (tmp_path / "specs").mkdir()
    assert default_spec_dirs() == [Path("specs")]
    assert bundled_specs_dir().name in ("_specs", "specs")
    assert bundled_specs_dir().parent.name in ("trnplan", REPO.name)


def test_digest_is_stable_under_formatting_and_changes_with_inputs(tmp_path: Path) -> None:
    specs = tiny_copy(tmp_path)
    base = inputs_digest(load_specs([specs]), "trn3-10k")
    assert base.startswith("sha256:") and len(base) == len("sha256:") + 64

    edit(specs / "hardware.yaml", "    tdp_w: 1000\n", "    tdp_w: 1000.0   # same number, reformatted\n")
    edit(
        specs / "hardware.yaml",
        "  air: {max_rack_kw: 45, pue: 1.3, capex_usd_per_kw: 1500}",
        "  air:\n    capex_usd_per_kw: 1500\n    pue: 1.30\n    max_rack_kw: 45",
    )
    assert inputs_digest(load_specs([specs]), "trn3-10k") == base

    other_site = write(
        tmp_path / "more",
        {
            "site.yaml": """
        sites:
          elsewhere: {it_power_mw: 1, rack_positions: 10, cooling: [air], electricity_usd_per_kwh: 0.1,
                      colocation_usd_per_kw_month: 100}
        """
        },
    )
    assert inputs_digest(load_specs([specs, other_site]), "trn3-10k") == base  # a site it cannot use

    assert inputs_digest(load_specs([specs], ["chips.trn3.tdp_w=1001"]), "trn3-10k") != base
    assert inputs_digest(load_specs([specs], ["sites.iad-a.it_power_mw=39"]), "trn3-10k") != base
    assert inputs_digest(load_specs([specs], ["scenarios.trn3-10k.utilization=0.7"]), "trn3-10k") != base
    assert inputs_digest(load_specs([specs], ["cooling.liquid.pue=1.1"]), "trn3-10k") != base


def test_digest_of_an_unknown_scenario_is_a_spec_error(tmp_path: Path) -> None:
    catalog = load_specs([tiny_copy(tmp_path)])
    with pytest.raises(SpecError, match="unknown scenario 'trn3-10'; did you mean 'trn3-10k'"):
        inputs_digest(catalog, "trn3-10")


def test_a_partial_entity_in_an_override_directory_says_why(tmp_path) -> None:
    """An entity in a later --specs directory replaces the earlier one whole: a lone field is not a patch."""
    import pytest

    from trnplan.errors import SpecError
    from trnplan.specs.load import load_specs

    base = Path(__file__).resolve().parent.parent / "specs"
    over = tmp_path / "over"
    over.mkdir()
    (over / "c.yaml").write_text("chips:\n  trn3:\n    unit_usd: 9000\n")
    with pytest.raises(SpecError) as info:
        load_specs([base, over])
    messages = [p.message for p in info.value.problems]
    assert any("replaces the entity of an earlier --specs directory" in m for m in messages)


def test_an_unknown_scenario_with_default_specs_names_what_was_read_and_how_to_layer_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --specs, no ./specs: the bundled catalog is read. A folder beside it that defines the scenario
    asked for is named, with the --specs that layers it over the catalog; in 80 columns."""
    from tests.conftest import run
    from trnplan.errors import EXIT_USAGE

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "scenarios.yaml").write_text(
        "scenarios:\n  trn3-30k:\n    sites: [iad-air]\n    demand: {chips: 30000}\n    horizon_years: 5\n"
        "    cost_of_capital: 0.08\n    utilization: 0.8\n    maintenance_rate: 0.03\n"
    )
    (tmp_path / "plans").mkdir()  # plan files are not specs
    (tmp_path / "plans" / "x.yaml").write_text("scenarios: {}\n")
    monkeypatch.chdir(tmp_path)
    r = run("optimize", "trn3-30k", columns=80)
    assert r.exit_code == EXIT_USAGE
    assert r.stderr.splitlines() == [
        "error: unknown scenario 'trn3-30k'; did you mean 'trn3-100k'?",
        "trnplan read only the catalog bundled with it; mine/ defines 'trn3-30k'",
        "to layer mine/ over it: --specs @catalog --specs mine/",
    ]
    r = run("optimize", "trn3-3k", "--specs", "@catalog", "--specs", "mine/")  # layered: no hint
    assert r.stderr.splitlines() == ["error: unknown scenario 'trn3-3k'; did you mean 'trn3-30k'?"]
    # with ./specs read, the folder read is named, and a folder that does not define it is still offered
    shutil.copytree(bundled_specs_dir(), tmp_path / "specs")
    (tmp_path / "mine" / "scenarios.yaml").write_text("sites: {}\n")
    r = run("sweep", "trn3-30k", "--vary", "scenarios.trn3-30k.utilization=0.5,0.6")
    assert "trnplan read only ./specs; mine/ holds specs too" in r.stderr
    assert "to layer mine/ over it: --specs specs --specs mine/" in r.stderr


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        # 70 is a typical price per MWh, and 70 cents would be a dear one: both readings, with their values
        (70, "this looks like USD/MWh typed into a USD/kWh field (0.07 USD/kWh) or cents typed into a USD "
         "field (0.7 USD/kWh)"),
        (150, "this looks like USD/MWh typed into a USD/kWh field (0.15 USD/kWh) or cents typed into a USD "
         "field (1.5 USD/kWh)"),
        (1000, "this looks like USD/MWh typed into a USD/kWh field"),
        (5000, ""),
    ],
)
def test_an_electricity_price_in_the_wrong_unit_names_every_reading_that_fits(
    tmp_path: Path, value: float, hint: str
) -> None:
    specs = tiny_copy(tmp_path)
    with pytest.raises(SpecError) as info:
        load_specs([specs], [f"sites.iad-a.electricity_usd_per_kwh={value}"])
    (problem,) = info.value.problems
    words = f"{value} USD/kWh is outside the plausible range 0.001 to 2 USD/kWh"
    assert problem.message == words + (f"; {hint}" if hint else "")


def test_an_unknown_field_named_like_a_union_tag_is_named(tmp_path: Path) -> None:
    """A key `'@'` is the user's unknown field, not a tagged union's tag to drop (an IndexError before)."""
    d = tiny_copy(tmp_path)
    edit(d / "forms.yaml", "    chip: trn3", "    '@': trn3")
    found = problems_of([d])
    assert any("unknown field '@'" in p for p in found), found
    assert any("missing required field 'chip'" in p for p in found), found
