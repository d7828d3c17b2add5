"""Plan files: canonical numbers, round trips, atomic writes, and clean refusals of non-plans."""

from __future__ import annotations

import os

import pytest

from trnplan.errors import InputError
from trnplan.numbers import canon, cents
from trnplan.plan import PLAN_FORMAT, Plan, plan_scenario
from trnplan.plan.check import check_plan
from trnplan.plan.file import parse_plan, plan_to_yaml, read_plan, write_plan
from trnplan.testkit.builders import base_specs, catalog_from_dict


@pytest.fixture(scope="module")
def plan():
    return plan_scenario(catalog_from_dict(base_specs()), "s", alternatives=2)


def test_canon_numbers() -> None:
    assert canon(0.1 + 0.2) == 0.3
    assert canon(2.0000000001) == 2 and isinstance(canon(2.0000000001), int)
    assert canon(-0.0) == 0
    assert canon({"b": 1.0, "a": [1.5, -1e-9]}) == {"a": [1.5, 0], "b": 1}
    with pytest.raises(ValueError):
        canon(float("nan"))


def test_round_trip_is_byte_identical(plan, tmp_path) -> None:
    path = tmp_path / "plans" / "s.yaml"
    write_plan(plan, path)
    text = path.read_text()
    again = read_plan(path)
    assert plan_to_yaml(again) == text
    assert text.startswith("alternatives:")  # sorted keys
    assert f"format: {PLAN_FORMAT}" in text
    assert not any(word in text for word in ("time:", "timestamp", "elapsed", "seconds"))  # no timings


def test_plan_passes_its_check(plan) -> None:
    assert check_plan(plan, catalog_from_dict(base_specs())) == []


def test_check_catches_a_tampered_plan(plan) -> None:
    data = plan.to_dict()
    data["sites"]["a"]["deployments"][0]["units"] = 1  # fewer units than demand needs
    # reading it already sees it does not add up
    with pytest.raises(
        InputError, match=r"totals\.units \d+ at line \d+ is not the sum of its deployments' units"
    ):
        parse_plan(__import__("yaml").safe_dump(data))
    tampered = Plan.model_validate(data)  # the checks against the specs, without the reader's
    problems = check_plan(tampered, catalog_from_dict(base_specs()))
    assert any("demand chips" in p for p in problems)
    assert any("totals.capex_usd" in p for p in problems)


def test_reading_refuses_a_plan_that_does_not_add_up(plan) -> None:
    import yaml

    data = plan.to_dict()
    data["bom"][0]["extended_usd"] += 1  # a BOM edited by hand
    with pytest.raises(InputError, match="BOM lines sum to"):
        parse_plan(yaml.safe_dump(data))
    data = plan.to_dict()
    data["totals"]["tco_usd"] = 1.0  # a TCO edited by hand
    with pytest.raises(
        InputError, match=r"totals\.tco_usd \$1\.00 at line \d+ is not capex_usd x tco_per_capex_usd"
    ):
        parse_plan(yaml.safe_dump(data))


def test_a_plan_cut_after_its_tco_is_refused(plan) -> None:
    text = plan_to_yaml(plan)
    cut = text[: text.index("  tco_usd:") + len("  tco_usd: 8")]
    with pytest.raises(InputError, match="truncated|does not add up"):
        parse_plan(cut, "cut.yaml")


def test_atomic_write_leaves_no_temp_and_replaces(plan, tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("old\n")
    write_plan(plan, path)
    assert path.read_text() == plan_to_yaml(plan)
    assert os.listdir(tmp_path) == ["s.yaml"]


def test_unwritable_folder_is_an_input_error(plan, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot write"):
        write_plan(plan, blocker / "plans" / "s.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not a trnplan plan file"),
        ("just a string\n", "not a trnplan plan file"),
        (".inf\n", "not a trnplan plan file"),  # a document that is one number (found by the plan fuzzer)
        ("[1, 2]\n", "not a trnplan plan file"),
        ("format: trnplan-plan/9\n", "not readable by this trnplan"),
        ("format: terraform\n", "not a trnplan plan file"),
        ("format: trnplan-plan/1\nscenario: x\n", "malformed or truncated plan file"),
        ("format: trnplan-plan/1\n  bad: [indent\n", "not a readable plan file"),
    ],
)
def test_non_plans_are_refused_clearly(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_plan(text, "p.yaml")


def test_truncated_plan_is_refused(plan) -> None:
    text = plan_to_yaml(plan)
    with pytest.raises(InputError):
        parse_plan(text[: len(text) // 3], "cut.yaml")


def test_binary_and_missing_files(tmp_path) -> None:
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"\xff\xfe\x00\x01garbage")
    with pytest.raises(InputError, match="not UTF-8"):
        read_plan(binary)
    with pytest.raises(InputError, match="no such plan file"):
        read_plan(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="directory"):
        read_plan(tmp_path)


def test_new_files_follow_the_umask_and_replacements_keep_their_mode(plan, tmp_path) -> None:
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.yaml"
        write_plan(plan, fresh)
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.yaml"
        kept.write_text("x")
        kept.chmod(0o640)
        write_plan(plan, kept)
        assert kept.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


ONE_PERIOD = """\
scenarios:
  one-period:
    sites: [iad-air, ind-new, wa-remote]
    chips: [trn3]
    demand: {chips: 100000}
    periods: [2026-06]
    objective: min_tco
    horizon_years: 5
    cost_of_capital: 0.08
    utilization: 0.8
    maintenance_rate: 0.03
    fabric: {cooling: air, oversubscription: 1, rack_usd: 10000}
"""


def test_one_period_plans_exactly_as_no_periods(tmp_path) -> None:
    """The shipped trn3-100k (as_of 2026-06) and the same scenario with `periods: [2026-06]` and no as_of:
    one model, one cost formula (L = W = horizon_years), so the same deployments, fabric and purchases, and
    the same capex and TCO to the cent. Only the plan formats differ (trnplan-plan/1 and /2)."""
    from trnplan.specs.load import load_specs

    (tmp_path / "scenarios.yaml").write_text(ONE_PERIOD, encoding="utf-8")
    catalog = load_specs(["@catalog", str(tmp_path)])
    single = plan_scenario(catalog, "trn3-100k", alternatives=0)
    one = plan_scenario(catalog, "one-period", alternatives=0)
    assert (single.format, one.format) == (PLAN_FORMAT, "trnplan-plan/2")
    assert one.periods is not None and [(p.start, p.years) for p in one.periods] == [("2026-06", 5)]

    def deployments(plan: Plan) -> dict[str, list[tuple[str, int, int, float]]]:
        return {
            site: [(d.key, d.units, d.chips, d.capex_usd) for d in s.deployments]
            for site, s in plan.sites.items()
        }

    assert deployments(one) == deployments(single)
    assert {k: s.scale_out for k, s in one.sites.items()} == {k: s.scale_out for k, s in single.sites.items()}
    money = ("capex_usd", "tco_usd", "opex_usd_per_year", "energy_usd_per_year", "colocation_usd_per_year")
    for key in money:
        assert cents(getattr(one.totals, key)) == cents(getattr(single.totals, key)), key
    assert [(x.site, x.item, x.quantity, x.extended_usd) for x in one.bom] == [
        (x.site, x.item, x.quantity, x.extended_usd) for x in single.bom
    ]
    assert {line.period for line in one.bom} == {"2026-06"} and {line.period for line in single.bom} == {None}
    assert one.totals.usd_per_pflop_hour == pytest.approx(single.totals.usd_per_pflop_hour, rel=1e-12)
    assert one.economics == single.economics
