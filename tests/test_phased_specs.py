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
