"""Hostile phased plan files (`trnplan-plan/2`): an edit of any period's part is refused where it no longer
adds up, at its file:line:col; structural damage (no periods, a purchase in a month that is no period, a
deployment gone in a later period) is refused too; through the CLI every refusal is exit 3."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from test_plan_hostile import (
    CUT_HERE,
    DOES_NOT_ADD_UP,
    end_of,
    findable,
    first_lines,
    mark,
    refusal,
    refused_figures,
    run,
    scaled,
    set_value,
)

from trnplan.plan.file import PlanError, parse_plan
from trnplan.specs.yamlsafe import KeyPath, dotted

REPO = Path(__file__).resolve().parents[1]
PHASED = (REPO / "plans" / "trn3-life.yaml").read_text(encoding="utf-8")
DATA = yaml.safe_load(PHASED)
LAST = len(DATA["periods"]) - 1
SITE = sorted(DATA["periods"][LAST]["sites"])[-1]


def test_the_shipped_phased_plan_reads() -> None:
    plan = parse_plan(PHASED, "p.yaml")
    assert plan.format == "trnplan-plan/2" and plan.periods


PARTS: list[KeyPath] = [
    ("periods", 1, "totals", "chips"),
    ("periods", 1, "totals", "it_power_kw"),
    ("periods", 1, "totals", "capex_bought_usd"),
    ("periods", 1, "totals", "capex_usd"),
    ("periods", 1, "totals", "opex_usd_per_year"),
    ("periods", 1, "totals", "fp8_pflops"),
    ("periods", LAST, "sites", SITE, "positions"),
    ("periods", LAST, "sites", SITE, "it_power_kw"),
    ("periods", LAST, "sites", SITE, "racks"),
    ("periods", LAST, "sites", SITE, "deployments", 0, "bought"),
    ("periods", LAST, "sites", SITE, "deployments", 0, "units"),
    ("periods", 0, "years"),
    ("totals", "fp8_pflop_years"),
    ("totals", "tco_usd"),
]


@pytest.mark.parametrize("path", PARTS, ids=dotted)
def test_an_edited_period_part_does_not_add_up(path: KeyPath) -> None:
    lines = refusal(scaled(PHASED, path))
    assert lines and all(
        re.match(r"p\.yaml:\d+:\d+: plan file does not add up \(edited or damaged\?\): ", x) for x in lines
    ), lines


def test_structural_damage_is_refused() -> None:
    no_periods = re.sub(r"(?m)^periods:\n(?:[ -].*\n)*", "", PHASED)
    assert "periods exactly when its format is trnplan-plan/2" in refusal(no_periods)[0]
    empty = re.sub(r"(?m)^periods:\n(?:[ -].*\n)*", "periods: []\n", PHASED)
    assert any("at least one period" in x for x in refusal(empty))
    stray = set_value(PHASED, ("bom", 0, "period"), "2030-01")
    assert any("bought in 2030-01, not a period of the plan" in x for x in refusal(stray))
    not_a_month = set_value(PHASED, ("periods", 0, "start"), "'2026-13'")
    line, _ = mark(PHASED, ("periods", 0, "start"))
    assert refusal(not_a_month)[0].startswith(f"p.yaml:{line}:")


@pytest.mark.parametrize("command", ["bom", "diff"])
def test_commands_refuse_an_edited_phased_plan(command: str, tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(scaled(PHASED, ("periods", 1, "totals", "chips")), encoding="utf-8")
    args = [command, str(path)] + ([str(REPO / "plans" / "trn3-life.yaml")] if command == "diff" else [])
    r = run(*args)
    assert r.exit_code == 3, r.output
    assert "does not add up" in r.output and "Traceback" not in r.output


def test_no_economics_is_no_escape_from_the_phased_checks() -> None:
    cut = re.sub(r"(?m)^economics:\n(?:  .*\n)*", "", PHASED)
    assert cut != PHASED
    assert any("states its economics" in x for x in refusal(cut))
    bought = set_value(cut, ("periods", LAST, "sites", SITE, "deployments", 0, "bought"), "100000")
    assert any(
        re.search(r"bought 100,000 at line \d+ is not the growth of .*'s units", x) for x in refusal(bought)
    )


def test_one_scale_out_type_per_site_over_the_window() -> None:
    site = sorted(DATA["periods"][0]["sites"])[0]
    used = DATA["periods"][0]["sites"][site]["scale_out"]["switch"]
    other = "th3-12t8" if used != "th3-12t8" else "th5-51t2"
    edited = set_value(PHASED, ("periods", 0, "sites", site, "scale_out", "switch"), other)
    assert any("one type per site over the window" in x for x in refusal(edited))


def test_drift_when_a_site_is_used_in_a_period_on_one_side_only(tmp_path: Path, phased_plan) -> None:
    """A hall closed in the first period moves its purchases: `--check` reports drift (exit 1), by period."""
    from trnplan.drift import check_drift
    from trnplan.plan import plan_scenario
    from trnplan.plan.file import plan_to_yaml
    from trnplan.specs.load import load_specs

    specs = ["@catalog", str(REPO / "tests" / "fixtures" / "phased")]
    base = phased_plan
    closed = load_specs(specs, ["sites.ramp-a.it_power_mw={2026-07: 6, 2027-01: 12}"])
    moved = plan_scenario(closed, "ramp-3", alternatives=0)
    assert base.periods and moved.periods
    assert set(base.periods[0].sites) != set(moved.periods[0].sites)
    path = tmp_path / "ramp-3.yaml"
    path.write_text(plan_to_yaml(base), encoding="utf-8")
    drift = check_drift(plan_to_yaml(moved), str(path))
    assert drift.exit_code == 1
    assert any(line.startswith("in 2026-01") for line in drift.periods), drift.periods


def test_units_edited_in_a_period_is_refused_at_its_line_and_the_purchases_name_theirs() -> None:
    """One period's `units` 178 -> 180: refused at that line (356 racks are not 180 x 2), and what was bought
    in it and in the next period no longer follows, each naming the lines of the units it is the growth of."""
    site = next(
        site
        for site, section in sorted(DATA["periods"][1]["sites"].items())
        if len(section["deployments"]) > 1 and DATA["periods"][0]["sites"].get(site)
    )
    at = ("periods", 1, "sites", site, "deployments", 1)
    was = DATA["periods"][1]["sites"][site]["deployments"][1]["units"]
    line = mark(PHASED, (*at, "units"))[0]
    problems = refusal(set_value(PHASED, (*at, "units"), str(was + 2)))
    assert problems[0].startswith(
        f"p.yaml:{line}:9: {DOES_NOT_ADD_UP}{'.'.join(map(str, at))}.units {was + 2:,} "
    )
    bought = [x for x in problems if ".bought " in x and "is not the growth of" in x]
    assert bought and all(re.search(rf"lines? (\d+, )*{line}\b", x) for x in bought), bought


def test_every_tenth_cut_at_a_line_end_of_a_phased_plan_says_where_it_looks_cut_off() -> None:
    for n in range(1, len(PHASED.split("\n")) - 2, 10):
        cut = first_lines(PHASED, n)
        line, col = end_of(cut)
        problems = refusal(cut)
        assert any(p.startswith(f"p.yaml:{line}:{col}: ") and CUT_HERE in p for p in problems), (n, problems)


def test_every_refused_edit_of_a_period_figure_is_findable_from_the_messages() -> None:
    """As for a single-period plan: an edited period figure or total is where a problem is, or among the
    lines one names (the last period's figures and the totals, to keep it quick)."""
    refused = 0
    for path in refused_figures(PHASED, ("periods", "totals")):
        if path[0] == "periods" and path[1] != LAST:
            continue
        try:
            parse_plan(scaled(PHASED, path), "p.yaml")
            continue  # not recomputable from the plan alone (fabric sizing, capex per deployment)
        except PlanError as exc:
            problems = str(exc).split("\n")
        refused += 1
        assert findable(PHASED, path, problems), (path, problems)
    assert refused >= 25
