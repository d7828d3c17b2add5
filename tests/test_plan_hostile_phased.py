"""Hostile phased plan files (`trnplan-plan/2`): an edit of any period's part is refused where it no longer
adds up, at its file:line:col; structural damage (no periods, a purchase in a month that is no period, a
deployment gone in a later period) is refused too; through the CLI every refusal is exit 3."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from test_plan_hostile import mark, refusal, run, scaled, set_value

from trnplan.plan.file import parse_plan
from trnplan.yamlsafe import KeyPath, dotted

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
