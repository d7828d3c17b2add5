"""Phased specs: periods, step schedules and demand by month are validated strictly, every mistake at its
file:line:col; a schedule read at a month; a hall that shrinks below what is installed is explained."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trnplan.catalog.periods import periods_of
from trnplan.catalog.schedules import value_at
from trnplan.errors import InfeasibleError, SpecError
from trnplan.plan import plan_scenario
from trnplan.specs.load import load_specs

FIXTURE = Path(__file__).parent / "fixtures" / "phased"


def layer(tmp_path: Path, old: str, new: str) -> Path:
    """The phased fixture with one edit, as a spec folder layered over the bundled catalog."""
    folder = tmp_path / "phased"
    shutil.copytree(FIXTURE, folder)
    path = folder / "phased.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return folder


def problems(folder: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_specs(["@catalog", str(folder)])
    return [str(p) for p in info.value.problems]


def line_of(folder: Path, needle: str) -> int:
    lines = (folder / "phased.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


@pytest.mark.parametrize(
    ("old", "new", "key", "message"),
    [
        ("periods: [2026-01, 2026-07, 2027-01]", "periods: [2026-01, 2027-01, 2026-07]", "periods:",
         "periods must increase: 2027-01 is followed by 2026-07"),
        ("      2026-07: {chips: 3000}", "      2026-08: {chips: 3000}", "demand:",
         "demand month 2026-08 is not a period start (periods: 2026-01, 2026-07, 2027-01)"),
        ("    horizon_years: 4", "    horizon_years: 4\n    as_of: 2026-06", "as_of:",
         "as_of is not allowed with periods: each period's start is its as_of"),
        ("    periods: [2026-01, 2026-07, 2027-01]\n", "", "demand:",
         "demand by month needs periods"),
        ("    horizon_years: 4", "    horizon_years: 1", "periods:",
         "periods end after the window: 2027-01 starts after it ends (2027-01: horizon_years 1 from "
         "2026-01)"),
    ],
    ids=["not-increasing", "demand-month", "as_of", "no-periods", "past-window"],
)
def test_scenario_mistakes_are_located(tmp_path: Path, old: str, new: str, key: str, message: str) -> None:
    folder = layer(tmp_path, old, new)
    found = problems(folder)
    assert len(found) == 1, found
    where, text = found[0].split(": ", 1)
    assert where.endswith(f"phased.yaml:{line_of(folder, key)}:5"), found[0]
    assert message in text, found[0]


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        ("it_power_mw: {2026-01: 2, 2026-07: 6, 2027-01: 12}", "it_power_mw: {2026-01: 2, 2026-07: 6000000}",
         "6000000", "6e+06 MW is outside the plausible range 0.01 to 10000 MW"),
        ("rack_positions: {2026-01: 40, 2027-01: 200}", "rack_positions: {2026-13: 40}", "2026-13",
         "'2026-13' is not a month"),
        ("rack_positions: {2026-01: 40, 2027-01: 200}", "rack_positions: {}", "rack_positions",
         "rack_positions"),
        ("rack_positions: {2026-01: 40, 2027-01: 200}", "rack_positions: {2026-01: 40.5}", "40.5",
         "40.5"),
    ],
    ids=["implausible-step", "bad-month", "empty", "fractional-positions"],
)
def test_schedule_mistakes_are_located(tmp_path: Path, old: str, new: str, needle: str, message: str) -> None:
    folder = layer(tmp_path, old, new)
    found = problems(folder)
    assert len(found) == 1, found
    assert f"phased.yaml:{line_of(folder, needle)}:" in found[0] and message in found[0], found[0]


def test_a_schedule_is_read_at_a_month() -> None:
    schedule = {"2026-01": 20.0, "2026-07": 45.0, "2027-01": 64.0}
    assert [value_at(schedule, m) for m in ("2025-12", "2026-01", "2026-06", "2026-07", "2030-01")] == [
        0.0, 20.0, 20.0, 45.0, 64.0,
    ]
    catalog = load_specs(["@catalog", str(FIXTURE)])
    site = catalog.sites["ramp-a"]
    assert site.it_power_mw == 12  # read without a month: the last step
    assert site.at("2026-09").it_power_mw == 6 and site.at("2026-09").rack_positions == 40
    assert site.at("2025-06").it_power_mw == 0  # before the first step the hall is closed
    periods = periods_of(catalog.scenarios["ramp-3"])
    assert [(p.start, p.years, p.remaining_years) for p in periods] == [
        ("2026-01", 0.5, 4.0), ("2026-07", 0.5, 3.5), ("2027-01", 3.0, 3.0),
    ]


def test_a_single_period_scenario_reads_a_schedule_at_its_as_of(tmp_path: Path) -> None:
    """A scenario without periods plans one moment: a scheduled site is read at its as_of."""
    folder = layer(tmp_path, "    periods: [2026-01, 2026-07, 2027-01]\n", "    as_of: 2026-07\n")
    edit = folder / "phased.yaml"
    text = edit.read_text(encoding="utf-8")
    start = text.index("    demand:\n")
    end = text.index("    horizon_years")
    edit.write_text(text[:start] + "    demand: {chips: 1500}\n" + text[end:], encoding="utf-8")
    catalog = load_specs(["@catalog", str(folder)])
    plan = plan_scenario(catalog, "ramp-3", alternatives=0)
    assert plan.format == "trnplan-plan/1"
    used = plan.sites["ramp-a"].it_power_kw if "ramp-a" in plan.sites else 0.0
    assert used <= 6000 + 1e-6  # the 2026-07 step, not the last one (12 MW)


def test_a_hall_that_shrinks_below_what_is_installed_is_explained(tmp_path: Path) -> None:
    """ramp-a alone; its power falls to 0.5 MW in 2027-01 while the racks bought for 2026-01's demand stay
    installed: no plan exists, and the explanation names the period and the site."""
    folder = layer(
        tmp_path,
        "it_power_mw: {2026-01: 2, 2026-07: 6, 2027-01: 12}",
        "it_power_mw: {2026-01: 2, 2026-07: 6, 2027-01: 0.5}",
    )
    catalog = load_specs(["@catalog", str(folder)], ["scenarios.ramp-3.sites=[ramp-a]"])
    with pytest.raises(InfeasibleError) as info:
        plan_scenario(catalog, "ramp-3", alternatives=0)
    text = "\n".join(info.value.explanation)
    assert "in 2027-01 ramp-a IT power" in text, text


# --- demand ramps -------------------------------------------------------------------------------------

RAMP = "    demand: {from: 2026-01, to: 2027-01, chips: [1000, 6000], step: linear}\n"
BY_MONTH = (
    "    demand:\n      2026-01: {chips: 1000}\n      2026-07: {chips: 3000}\n      2027-01: {chips: 6000}\n"
)


def test_a_ramp_expands_to_demand_by_month_exactly(tmp_path: Path) -> None:
    """From 1,000 chips in 2026-01 to 6,000 in 2027-01 over 12 quarters... here 3 periods: 2026-07 is 6 of
    the 12 months, 1,000 + 5,000 x 6 / 12 = 3,500. Over quarters from 2026-01 to 2028-10 (33 months) from
    6,000 to 30,000: 2026-04 asks 6,000 + 24,000 x 3 / 33 = 8,181.8..., rounded up to 8,182; PFLOPS round
    up to 0.001. The ramp's scenario digests as the same figures written month by month."""
    from trnplan.catalog import inputs_digest
    from trnplan.catalog.scenario import DemandRamp

    ramped = load_specs(["@catalog", str(layer(tmp_path / "r", BY_MONTH, RAMP))])
    scenario = ramped.scenarios["ramp-3"]
    assert scenario.ramped
    assert {m: d.chips for m, d in scenario.demand_by_month.items()} == {
        "2026-01": 1000, "2026-07": 3500, "2027-01": 6000
    }
    written = BY_MONTH.replace("3000", "3500")
    by_month = load_specs(["@catalog", str(layer(tmp_path / "m", BY_MONTH, written))])
    assert not by_month.scenarios["ramp-3"].ramped
    assert inputs_digest(ramped, "ramp-3") == inputs_digest(by_month, "ramp-3")

    quarters = [f"{y}-{m:02d}" for y in (2026, 2027, 2028) for m in (1, 4, 7, 10)]
    ramp = DemandRamp.model_validate(
        {"from": "2026-01", "to": "2028-10", "chips": [6000, 30000], "fp8_pflops": [1, 2]}
    )
    chips = {m: d.chips for m, d in ramp.by_month(quarters).items()}
    assert chips == {m: -(-(6000 * 33 + 24000 * 3 * i) // 33) for i, m in enumerate(quarters)}
    assert list(chips.values())[:3] == [6000, 8182, 10364] and chips["2028-10"] == 30000
    assert ramp.by_month(quarters)["2026-04"].fp8_pflops == 1.091  # 1 + 3 / 33 = 1.0909..., rounded up
    assert ramp.by_month(["2025-10", *quarters, "2029-01"]).keys() == set(quarters)  # none before, b after


@pytest.mark.parametrize(
    ("ramp", "needle", "message"),
    [
        ("{from: 2026-02, to: 2027-01, chips: [1000, 6000]}", "demand:",
         "demand ramp from 2026-02 is not a period start (periods: 2026-01, 2026-07, 2027-01)"),
        ("{from: 2027-01, to: 2026-01, chips: [1000, 6000]}", "demand:",
         "to 2026-01 must come after from 2027-01"),
        ("{from: 2026-01, to: 2027-01}", "demand:", "a ramp needs a figure to ramp"),
        ("{from: 2026-01, to: 2027-01, chips: [1000]}", "chips: [1000]", "needs at least 2 items"),
        ("{from: 2026-01, to: 2027-01, chips: [1000, 6000], step: cubic}", "step", "expected 'linear'"),
        ("{from: 2026-01, to: 2027-01, chips: [1000, 6000], cpus: [1, 2]}", "cpus", "unknown field 'cpus'"),
    ],
    ids=["from-not-a-period", "backwards", "no-figure", "one-figure", "step", "unknown-field"],
)
def test_ramp_mistakes_are_located(tmp_path: Path, ramp: str, needle: str, message: str) -> None:
    folder = layer(tmp_path, BY_MONTH, f"    demand: {ramp}\n")
    found = problems(folder)
    assert len(found) == 1, found
    where, text = found[0].split(": ", 1)
    line = line_of(folder, needle)
    col = (folder / "phased.yaml").read_text().splitlines()[line - 1].index(needle) + 1
    assert where.endswith(f"phased.yaml:{line}:{col}"), found[0]
    assert message in text, found[0]


def test_a_ramp_without_periods_is_refused(tmp_path: Path) -> None:
    folder = layer(tmp_path, "    periods: [2026-01, 2026-07, 2027-01]\n" + BY_MONTH, RAMP)
    assert any("demand as a ramp needs periods" in p for p in problems(folder))
