"""What a user sees of a phased plan (`trnplan-plan/2`): the timeline `optimize` prints, `bom` as the
purchase schedule, `diff` period by period (and a single-period plan against a phased one), `--check`
naming the period that drifted; and that single-period plans read exactly as before.

The plans come from tests/fixtures/phased (a layer over the bundled catalog: a hall opening in stages
beside an open site, demand ramping over three periods, the catalog's scale-up switch generations arriving
inside the window), solved once per session; the second plan changes one demand month with `--set`.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import hidden_words, run
from rich.console import Console
from test_terminal import TRNPLAN, assert_fits, in_pty, words

from trnplan.bom import bom_to_csv, bom_to_dict, bom_to_json, bom_to_markdown, build_bom
from trnplan.catalog import Catalog
from trnplan.diff import diff_plans, diff_to_dict, diff_to_markdown, tco_parts_cents
from trnplan.drift import DriftState, check_drift
from trnplan.errors import EXIT_USAGE
from trnplan.numbers import cents, fmt
from trnplan.plan import Plan, write_plan
from trnplan.plan.build import plan_scenario
from trnplan.plan.file import plan_to_yaml
from trnplan.render import Trimmed, render_bom, render_diff, render_plan
from trnplan.specs.load import load_specs

FIXTURE = Path(__file__).parent / "fixtures" / "phased"
SPECS = ["@catalog", str(FIXTURE)]
SCENARIO = "ramp-3"
CHANGED_MONTH = "2026-07"
MORE_DEMAND = [f"scenarios.{SCENARIO}.demand.{CHANGED_MONTH}.chips=3500"]
SINGLE = [  # the same scenario without periods: a single-period plan at the last period's start
    f"scenarios.{SCENARIO}.periods=null",
    f"scenarios.{SCENARIO}.demand={{chips: 6000}}",
    f"scenarios.{SCENARIO}.as_of=2027-01",
]


def _catalog(overrides: list[str]) -> Catalog:
    return load_specs(SPECS, overrides)


@pytest.fixture(scope="session")
def plans(tmp_path_factory: pytest.TempPathFactory, phased_plan: Plan) -> dict[str, Path]:
    """The phased base plan, the same with more demand in one month, and the single-period plan, as
    files (what the commands read)."""
    root = tmp_path_factory.mktemp("phased-plans")
    out = {}
    for name, overrides in (("base", []), ("head", MORE_DEMAND), ("single", SINGLE)):
        plan = phased_plan if name == "base" else plan_scenario(_catalog(overrides), SCENARIO, alternatives=0)
        write_plan(plan, root / f"{name}.yaml")
        out[name] = root / f"{name}.yaml"
    return out


@pytest.fixture(scope="session")
def base(plans: dict[str, Path]) -> Plan:
    from trnplan.plan import read_plan

    return read_plan(plans["base"])


@pytest.fixture(scope="session")
def head(plans: dict[str, Path]) -> Plan:
    from trnplan.plan import read_plan

    return read_plan(plans["head"])


@pytest.fixture(scope="session")
def single(plans: dict[str, Path]) -> Plan:
    from trnplan.plan import read_plan

    return read_plan(plans["single"])


def text_of(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False, highlight=False, soft_wrap=False,
                      file=io.StringIO())
    console.print(Trimmed(renderable))
    return console.export_text()


def test_the_fixture_is_phased_and_uses_several_switch_generations(base: Plan, single: Plan) -> None:
    assert base.format == "trnplan-plan/2" and base.periods is not None and len(base.periods) == 3
    assert single.format == "trnplan-plan/1" and single.periods is None
    switches = {d.scale_up_switch for p in base.periods for s in p.sites.values() for d in s.deployments}
    assert len(switches) >= 2, switches  # the timeline has generations to show


# --- the timeline -----------------------------------------------------------------------------------


def _timeline_lines(text: str) -> list[str]:
    return text.split("\nTimeline\n", 1)[1].split("\n\nPurchases by period", 1)[0].splitlines()


def _row(lines: list[str], *keys: str) -> str:
    """The row whose first cells are `keys`, with its continuation lines (cells of several lines)."""
    (i,) = [i for i, line in enumerate(lines) if line.split()[: len(keys)] == list(keys)]
    block = [lines[i]]
    for line in lines[i + 1:]:
        if not line.startswith(" "):
            break
        block.append(line)
    return "\n".join(block)


def test_timeline_rows_state_each_period_and_site(base: Plan) -> None:
    """Wide (160 columns: one line a row): per period and site, the units bought, installed chips, the
    fabric and the scale-up switches bought, and the capex bought there (its BOM lines)."""
    assert base.periods is not None
    lines = _timeline_lines(text_of(render_plan(base), 160))
    for period in base.periods:
        for site, s in period.sites.items():
            row = _row(lines, period.start, site)
            bought = sum(d.bought for d in s.deployments)
            chips = sum(d.chips for d in s.deployments)
            here = (period.start, site)
            capex = sum(cents(ln.extended_usd) for ln in base.bom if (ln.period, ln.site) == here)
            assert f" {fmt(bought, 'int')} " in row and f" {fmt(chips, 'int')} " in row, row
            assert s.scale_out.switch in row.split(), row
            assert row.splitlines()[0].endswith(fmt(capex / 100, "usd")), row
            for d in s.deployments:
                if d.bought:
                    assert d.scale_up_switch in row.split(), (row, d.key)
        total = _row(lines, period.start, "all", "sites")
        assert total.endswith(fmt(period.totals.capex_bought_usd, "usd")), total
        assert f" {fmt(period.totals.chips, 'int')} " in total, total


def test_timeline_available_power_and_positions_are_the_sites_schedules(base: Plan) -> None:
    """`used / available`: available is derived from the plan's shares; it is the site's schedule value in
    that period (the hall that opens in stages shows each stage)."""
    assert base.periods is not None
    catalog = _catalog([])
    lines = _timeline_lines(text_of(render_plan(base), 160))
    seen = set()
    for period in base.periods:
        for site, s in period.sites.items():
            row = _row(lines, period.start, site)
            limits = catalog.sites[site].at(period.start)
            power = re.search(r"([\d.,]+) / ([\d.,]+)", row)
            assert power is not None, row
            assert float(power.group(2).replace(",", "")) == pytest.approx(limits.it_power_mw, abs=0.05)
            positions = f"{fmt(s.positions, 'int')} / {fmt(limits.rack_positions, 'int')}"
            assert positions in row, (row, positions)
            seen.add((site, limits.it_power_mw))
    assert len({mw for site, mw in seen if site == "ramp-a"}) >= 2, seen  # the hall opens in stages


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_timeline_fits_every_width_with_ids_and_figures_whole(base: Plan, width: int) -> None:
    assert base.periods is not None
    wide = text_of(render_plan(base), 250)
    narrow = text_of(render_plan(base), width)
    assert_fits(narrow, width)
    assert "…" not in narrow
    assert not sorted(words(wide) - words(narrow) - hidden_words(render_plan(base), width))[:5]
    for period in base.periods:
        assert period.start in narrow and fmt(period.totals.capex_bought_usd, "usd") in narrow


def test_a_single_period_plan_has_no_timeline(single: Plan) -> None:
    text = text_of(render_plan(single), 120)
    assert "Timeline" not in text and "Purchases by period" not in text and "periods" not in text


# --- the purchase schedule --------------------------------------------------------------------------


def test_bom_is_the_purchase_schedule_and_totals_capex_to_the_cent(base: Plan) -> None:
    assert base.periods is not None
    bom = build_bom(base)
    assert bom.phased and [ln.period for ln in bom.lines] == sorted(ln.period or "" for ln in bom.lines)
    assert cents(bom.total_usd) == cents(base.totals.capex_usd)
    by_period = bom.by_period()
    assert list(by_period) == [p.start for p in base.periods]
    for p in base.periods:
        assert cents(by_period[p.start]) == cents(p.totals.capex_bought_usd)
    assert sum(cents(v) for v in by_period.values()) == cents(base.totals.capex_usd)

    rows = list(csv.DictReader(io.StringIO(bom_to_csv(bom))))
    assert rows and all(r["period"] in by_period for r in rows)
    assert sum(cents(float(r["extended_usd"])) for r in rows) == cents(base.totals.capex_usd)

    data = json.loads(bom_to_json(bom))
    assert data["by_period"] == pytest.approx(by_period)
    assert data["lines"][0]["period"] == base.periods[0].start
    assert sum(cents(line["extended_usd"]) for line in data["lines"]) == cents(data["capex_usd"])

    md = bom_to_markdown(bom)
    assert md.startswith(f"### Purchase schedule: `{SCENARIO}`")
    for p in base.periods:
        assert f"| **{p.start}** |" in md  # a subtotal per period
    assert md.rstrip().endswith(f"${base.totals.capex_usd:,.2f}.")


def test_the_schedule_table_has_a_subtotal_per_period_and_the_total(base: Plan) -> None:
    assert base.periods is not None
    bom = build_bom(base)
    text = text_of(render_bom(bom), 160)
    assert text.startswith(f"Purchase schedule: {SCENARIO}")
    for p in base.periods:
        (sub,) = [line for line in text.splitlines() if f"{p.start} subtotal" in line]
        assert fmt(p.totals.capex_bought_usd, "usd") in sub
    (total,) = [line for line in text.splitlines() if line.startswith("total")]
    assert fmt(base.totals.capex_usd, "usd") in total
    narrow = text_of(render_bom(bom), 80)
    assert_fits(narrow, 80)
    hidden = hidden_words(render_bom(bom), 80)
    assert not sorted(words(text_of(render_bom(bom), 250)) - words(narrow) - hidden)[:5]


def test_a_single_period_bom_names_no_period(single: Plan) -> None:
    bom = build_bom(single)
    assert not bom.phased
    assert "period" not in bom_to_csv(bom).splitlines()[0]
    data = bom_to_dict(bom)
    assert all("period" not in line for line in data["lines"]) and "by_period" not in data
    assert bom_to_markdown(bom).startswith("### Bill of materials")


# --- diff -------------------------------------------------------------------------------------------


def test_diff_of_two_phased_plans_is_period_by_period(base: Plan, head: Plan) -> None:
    d = diff_plans(base, head)
    assert d.different and d.periods is not None and d.periods.kind == "phased"
    periods = {p.start: p for p in d.periods.periods}
    assert list(periods) == [p.start for p in base.periods or []]
    changed = periods[CHANGED_MONTH]
    assert changed.changed and changed.options
    chips = {f.metric: f for f in changed.figures}["chips"]
    assert chips.old is not None and chips.new is not None
    assert chips.old >= 3000 and chips.new >= 3500 and chips.delta == chips.new - chips.old
    for option in changed.options:  # every change is a real change of units installed or bought
        assert (option.old_units, option.old_bought) != (option.new_units, option.new_bought)
    back = diff_plans(head, base)
    assert back.periods is not None
    for a, b in zip(d.periods.periods, back.periods.periods, strict=True):
        assert [f.delta for f in a.figures] == [-f.delta for f in b.figures]


def test_phased_tco_attribution_sums_to_the_tco(base: Plan, head: Plan, single: Plan) -> None:
    for plan in (base, head):
        parts = tco_parts_cents(plan)
        assert parts is not None and sum(parts.values()) == cents(plan.totals.tco_usd)
        assert all(v >= 0 for v in parts.values()), parts
    for a, b in ((base, head), (single, base)):
        d = diff_plans(a, b)
        change = cents(b.totals.tco_usd) - cents(a.totals.tco_usd)
        assert sum(cents(x.delta_usd) for x in d.attribution) == change


def test_diff_forms_show_the_periods(base: Plan, head: Plan) -> None:
    d = diff_plans(base, head, "base.yaml", "head.yaml")
    md = diff_to_markdown(d)
    summary = md.index("| Metric |")
    assert summary < md.index("| Period | Installed chips |") < md.index("<details>")
    assert f"| {CHANGED_MONTH} | " in md and "<summary>Periods: " in md
    data = diff_to_dict(d)
    assert data["periods"]["kind"] == "phased" and len(data["periods"]["periods"]) == 3
    text = text_of(render_diff(d), 80)
    assert_fits(text, 80)
    assert "Periods" in text and "What changed in each period" in text and CHANGED_MONTH in text
    assert not sorted(words(text_of(render_diff(d), 250)) - words(text))[:5]


def test_identical_phased_plans_have_no_changes(base: Plan) -> None:
    d = diff_plans(base, base)
    assert not d.different and d.periods is not None and not d.periods.notes()
    assert diff_to_markdown(d).rstrip().endswith("no changes.")


def test_a_single_period_plan_against_a_phased_one_says_the_scenario_gained_periods(
    single: Plan, base: Plan
) -> None:
    d = diff_plans(single, base)
    assert d.different and d.periods is not None and d.periods.kind == "gained"
    assert any("gained periods" in n and "window totals" in n for n in d.notes)
    assert d.metric("tco_usd").delta == (cents(base.totals.tco_usd) - cents(single.totals.tco_usd)) / 100
    lost = diff_plans(base, single)
    assert lost.periods is not None and lost.periods.kind == "lost"
    assert any("lost its periods" in n for n in lost.notes)
    for form in (diff_to_markdown(d), text_of(render_diff(d), 80)):
        assert "gained periods" in form.replace("\n", " ")
    assert "periods" not in diff_to_dict(diff_plans(single, single))


# --- drift ------------------------------------------------------------------------------------------


def test_check_of_a_phased_plan_names_the_period_that_drifted(
    plans: dict[str, Path], base: Plan, head: Plan, tmp_path: Path
) -> None:
    same = check_drift(plan_to_yaml(base), plans["base"])
    assert same.state is DriftState.UP_TO_DATE and same.periods == ["3 periods from 2026-01 to 2027-01"]
    drift = check_drift(plan_to_yaml(head), plans["base"])
    assert drift.state is DriftState.OUT_OF_DATE
    named = {line.split(":")[0].removeprefix("in ") for line in drift.periods}
    d = diff_plans(base, head)
    assert d.periods is not None
    differing = {p.start for p in d.periods.periods if p.changed}
    assert CHANGED_MONTH in named and named == differing
    first = next(line for line in drift.periods if line.startswith(f"in {CHANGED_MONTH}:"))
    sites = {site for plan in (base, head) for p in plan.periods or [] for site in p.sites}
    assert any(f" {site} " in first for site in sites), first
    gained = check_drift(plan_to_yaml(base), plans["single"])
    assert gained.state is DriftState.OUT_OF_DATE and "gained periods" in gained.periods[0]


def test_optimize_check_on_a_phased_plan(plans: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "ramp.yaml"
    shutil.copy(plans["base"], target)
    args = ["optimize", SCENARIO, "--specs", SPECS[0], "--specs", SPECS[1], "--out", str(target),
            "--alternatives", "0", "--check"]
    ok = run(*args)
    assert ok.exit_code == 0 and "up to date (3 periods from 2026-01 to 2027-01)" in ok.output, ok.output
    shutil.copy(plans["head"], target)
    drift = run(*args)
    assert drift.exit_code == 1, drift.output
    assert f"  in {CHANGED_MONTH}: " in drift.output


# --- in a real terminal -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, plans: dict[str, Path]) -> Path:
    root = tmp_path_factory.mktemp("phased-pty")
    for name, path in plans.items():
        shutil.copy(path, root / f"{name}.yaml")
    return root


PTY_COMMANDS = {
    "optimize": ["optimize", SCENARIO, "--specs", SPECS[0], "--specs", SPECS[1], "--out", "out.yaml",
                 "--alternatives", "0"],
    "bom": ["bom", "base.yaml"],
    "diff": ["diff", "base.yaml", "head.yaml"],
    "diff 1-2": ["diff", "single.yaml", "base.yaml"],
}


@pytest.mark.skipif(not TRNPLAN.exists(), reason="trnplan is not installed beside this python")
@pytest.mark.parametrize("name", sorted(PTY_COMMANDS))
def test_phased_output_fits_an_80_column_terminal(name: str, workdir: Path, base: Plan) -> None:
    code, wide = in_pty(PTY_COMMANDS[name], 250, workdir)
    assert code == 0, wide[-2000:]
    code, text = in_pty(PTY_COMMANDS[name], 80, workdir)
    assert code == 0, text[-2000:]
    assert_fits(text, 80)
    assert "…" not in text
    tables = render_plan(base) if name == "optimize" else render_bom(build_bom(base))
    missing = sorted(words(wide) - words(text) - hidden_words(tables, 80))
    assert not missing, f"cut or folded at 80 columns: {missing[:12]}"
    assert base.periods is not None
    for period in base.periods:
        assert period.start in words(text)
    if name == "optimize":
        printed = words(text)
        for period in base.periods:
            assert fmt(period.totals.capex_bought_usd, "usd") in printed
            for site, s in period.sites.items():
                assert site in printed and s.scale_out.switch in printed
                assert {d.scale_up_switch for d in s.deployments} <= printed


def test_a_new_or_gone_phased_scenario_is_not_said_to_gain_or_lose_periods(base: Plan) -> None:
    """A pull request that adds (or removes) a phased scenario diffs it against nothing (`Plan.empty`)."""
    for d in (diff_plans(Plan.empty(SCENARIO), base), diff_plans(base, Plan.empty(SCENARIO))):
        assert d.different and d.periods is not None and d.periods.kind == "phased"
        assert not any("periods" in note for note in d.notes), d.notes
        assert len(d.periods.periods) == len(base.periods or [])


def test_a_phased_diff_says_what_its_window_level_tables_compare(base: Plan, head: Plan) -> None:
    notes = diff_plans(base, head).notes
    assert any("last period's installed base" in note for note in notes), notes


# --- spreadsheets: optimize --format csv ---------------------------------------------------------------


def test_the_plan_tables_as_csv(base: Plan, single: Plan) -> None:
    """Each table reads back as the plan: the purchases' chips bought add up to the chips installed at the
    end, the timeline has a row per period and site, the deployments are the installed base; a plan
    without periods is one period (an empty `period`, everything bought at once)."""
    from trnplan.plan.tables import CSV_TABLES, plans_to_csv

    assert base.periods is not None
    tables = {t: list(csv.DictReader(io.StringIO(plans_to_csv([base], t)))) for t in CSV_TABLES}
    for t, rows in tables.items():
        assert tuple(rows[0]) == CSV_TABLES[t] and {r["scenario"] for r in rows} == {SCENARIO}
    assert sum(int(r["chips_bought"]) for r in tables["purchases"]) == base.totals.chips
    assert [(r["period"], r["site"]) for r in tables["timeline"]] == [
        (p.start, s) for p in base.periods for s in sorted(p.sites)]
    bought = sum(cents(float(r["capex_bought_usd"])) for r in tables["timeline"])
    assert bought == cents(base.totals.capex_usd)
    installed = [(s, d.key, d.units) for s, site in sorted(base.sites.items()) for d in site.deployments]
    assert [(r["site"], f"{r['form']}/{r['cooling']}/{r['scale_up_switch']}", int(r["units"]))
            for r in tables["deployments"]] == installed
    one = list(csv.DictReader(io.StringIO(plans_to_csv([single], "purchases"))))
    assert {r["period"] for r in one} == {""} and all(r["units_bought"] == r["units_installed"] for r in one)
    assert sum(int(r["chips_bought"]) for r in one) == single.totals.chips


def test_optimize_prints_a_csv_table_of_every_plan_solved(tiny_solved: Path, tmp_path: Path) -> None:
    specs = tiny_solved / "specs"
    r = run("optimize", "--all", "--specs", specs, "--plans", tmp_path, "--format", "csv", "--csv-table",
            "purchases")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert {row["scenario"] for row in rows} == {"s", "t"}
    assert {row["scenario"]: int(row["chips_bought"]) for row in rows} == {"s": 64, "t": 16}
    deployments = run("optimize", "s", "--specs", specs, "--out", tmp_path / "s.yaml", "--format", "csv")
    assert deployments.stdout.splitlines()[0].startswith("scenario,site,form,cooling,scale_up_switch,units")
    wrong = run("optimize", "s", "--specs", specs, "--out", tmp_path / "s.yaml", "--csv-table", "timeline")
    assert wrong.exit_code == EXIT_USAGE and "--format csv" in wrong.stderr
