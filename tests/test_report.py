"""`trnplan report`: one self-contained HTML page of a plan. Same plan, same bytes (also from a fresh
interpreter with another hash seed); the floor plans' rack cells add up to each site's compute plus network
racks, with positions and power read from the plan's utilization; nothing is fetched at view time; a sweep's
rows add its charts; the timeline chart from synthetic rows; the command's exit codes (2 without the extra,
3 for bad plans, sweeps and hostile --out targets). The page in a real browser: test_report_browser.py.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run

from trnplan.errors import EXIT_INVALID, EXIT_USAGE
from trnplan.plan.file import read_plan
from trnplan.plan.model import Plan
from trnplan.report.floorplan import MAX_CELLS, floor_plan, positions, power_limit_kw
from trnplan.report.sweep import is_grid
from trnplan.report.timeline import TimelineRow, timeline_rows

pytest.importorskip("matplotlib", reason='the report needs the extra: pip install "trnplan[report]"')

from trnplan.report import render_report  # noqa: E402  (after the skip: it draws with matplotlib)
from trnplan.report.charts import choices_chart, timeline_chart, tornado_chart  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PLANS = sorted((ROOT / "plans").glob("*.yaml"))
FLOORPLAN = re.compile(r'<svg class="floorplan".*?</svg>', re.S)


def drawn_racks(svg: str) -> int:
    return sum(int(n) for n in re.findall(r'<rect class="rack" data-racks="(\d+)"', svg))


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {p.stem: render_report(read_plan(p)) for p in PLANS}


@pytest.mark.parametrize("plan_path", PLANS, ids=[p.stem for p in PLANS])
def test_floor_plans_hold_every_rack(plan_path: Path, pages: dict[str, str]) -> None:
    plan = read_plan(plan_path)
    svgs = FLOORPLAN.findall(pages[plan_path.stem])
    assert [re.search(r'data-site="([^"]+)"', s).group(1) for s in svgs] == sorted(plan.sites)
    for svg, (_, site) in zip(svgs, sorted(plan.sites.items()), strict=True):
        assert drawn_racks(svg) == site.racks + site.scale_out.network_racks
    assert sum(drawn_racks(s) for s in svgs) == plan.totals.racks + (plan.totals.network_racks or 0)


def test_same_plan_same_bytes(pages: dict[str, str], tmp_path: Path) -> None:
    plan_path = ROOT / "plans" / "trn3-100k.yaml"
    assert render_report(read_plan(plan_path)) == pages["trn3-100k"]
    out = tmp_path / "again.html"
    code = ("import sys; from trnplan.plan.file import read_plan; from trnplan.report import render_report; "
            "open(sys.argv[2], 'w', encoding='utf-8').write(render_report(read_plan(sys.argv[1])))")
    subprocess.run([sys.executable, "-c", code, str(plan_path), str(out)], check=True,
                   env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert out.read_text(encoding="utf-8") == pages["trn3-100k"]


def test_nothing_is_fetched(pages: dict[str, str]) -> None:
    for text in pages.values():
        assert "Content-Security-Policy" in text and "default-src 'none'" in text
        assert not re.search(r"<script|<link|<img|<iframe|@import|src=", text)
        # the only URLs are SVG's XML namespaces, which are names, not requests
        urls = set(re.findall(r"https?://[^\"' )]+", text))
        assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
        ids = re.findall(r'\bid="([^"]+)"', text)
        assert len(ids) == len(set(ids)), "charts on one page share no id"


def test_positions_and_power_from_utilization() -> None:
    """moe-144: ind-new's positions and power, read back from the shares of them its racks and IT kW use,
    are the 1,000 positions and about 64 MW that specs/sites.yaml gives it."""
    site = read_plan(ROOT / "plans" / "moe-144.yaml").sites["ind-new"]
    assert positions(site) == 1000
    limit = power_limit_kw(site)
    assert limit is not None and abs(limit - 64000) < 5
    bare = site.model_copy(update={"utilization": None})
    assert positions(bare) is None and power_limit_kw(bare) is None
    palette = {(d.form, d.cooling): "#000" for d in site.deployments}
    assert drawn_racks(floor_plan("ind-new", bare, palette)) == site.racks + site.scale_out.network_racks


def test_a_huge_site_is_drawn_in_bounded_cells() -> None:
    """Beyond MAX_CELLS racks a cell stands for several; the cells still add up to every rack."""
    site = read_plan(ROOT / "plans" / "moe-144.yaml").sites["wa-remote"]
    big = site.model_copy(update={"deployments": [d.model_copy(update={"racks": d.racks * 50})
                                                  for d in site.deployments], "racks": site.racks * 50})
    palette = {(d.form, d.cooling): "#000" for d in site.deployments}
    svg = floor_plan("wa-remote", big, palette)
    assert drawn_racks(svg) == big.racks + big.scale_out.network_racks
    assert len(re.findall(r'<rect class="rack"', svg)) <= MAX_CELLS + len(site.deployments) + 1


def test_hostile_text_is_escaped() -> None:
    plan = read_plan(ROOT / "plans" / "moe-144.yaml")
    line = plan.bom[0].model_copy(update={"item": "<script>alert(1)</script>", "category": 'x"><b>'})
    other = plan.bom[1].model_copy(update={"category": "--><script>alert(2)</script><!--"})
    text = render_report(plan.model_copy(update={"bom": [line, other, *plan.bom[2:]]}))
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert 'x"><b>' not in text


MATHS = ("$\\undefinedcmd$", "$x^2$", "a $ b $ c", "$\\frac{1}{0}$")
"""Labels matplotlib read as mathtext: the first crashed the report (`Unknown symbol`), the others were drawn
as maths, not as the text they are."""


def test_labels_are_literal_text_not_maths() -> None:
    """A BOM category, a site key, a sweep's choice and `set` path, a timeline's site: drawn as written."""
    plan = read_plan(ROOT / "plans" / "moe-144.yaml")
    bom = [line.model_copy(update={"category": MATHS[i % len(MATHS)]}) for i, line in enumerate(plan.bom)]
    text = render_report(plan.model_copy(update={"bom": bom}))
    for label in MATHS:
        assert f"<!-- {html.escape(label, quote=False)} -->" in text  # matplotlib names each text it draws
    svg = choices_chart({label: [{"choice": label, "runs": 1, "share": 0.5}] for label in MATHS})
    assert all(f"<!-- {html.escape(label, quote=False)}: {html.escape(label, quote=False)} -->" in svg
               for label in MATHS)
    bars = [{"path": label, "low": 1, "high": 2, "tco_low_usd": 1e6, "tco_high_usd": 2e6, "swing_usd": 1e6}
            for label in MATHS]
    assert all(f"<!-- {html.escape(label, quote=False)} -->" in tornado_chart(bars, 1.5e6) for label in MATHS)
    rows = [TimelineRow("2026-01", label, 1000.0, 10, 1, {}) for label in MATHS]
    assert all(f"<!-- {html.escape(label, quote=False)} -->" in timeline_chart(rows) for label in MATHS)


# --- the timeline ----------------------------------------------------------------------------------


def test_a_timeline_exactly_with_periods(pages: dict[str, str]) -> None:
    for p in PLANS:
        phased = read_plan(p).periods is not None
        assert bool(timeline_rows(read_plan(p))) == phased
        assert ("<h2>Timeline</h2>" in pages[p.stem]) == phased


@pytest.fixture(scope="module")
def phased(phased_plan: Plan) -> Plan:
    """A real phased plan: tests/fixtures/phased over the bundled catalog (a hall opening in stages)."""
    return phased_plan


def test_timeline_rows_of_a_phased_plan(phased: Plan) -> None:
    rows = timeline_rows(phased)
    assert phased.periods is not None
    expected = [(p.start, site) for p in phased.periods for site in sorted(p.sites)]
    assert [(r.start, r.site) for r in rows] == expected
    for row in rows:
        period = next(p for p in phased.periods if p.start == row.start)
        part = period.sites[row.site]
        assert row.chips == sum(d.chips for d in part.deployments)
        racks = sum(d.racks for d in part.deployments)
        assert row.rack_positions_used == racks + part.scale_out.network_racks
        assert row.it_power_kw == part.it_power_kw
        assert sum(row.switches_bought.values()) == sum(d.bought for d in part.deployments)
    # across the window, what was bought with each switch is what is installed with it at the end
    bought: dict[str, int] = {}
    for row in rows:
        for switch, n in row.switches_bought.items():
            bought[switch] = bought.get(switch, 0) + n
    installed: dict[str, int] = {}
    for s in phased.periods[-1].sites.values():
        for d in s.deployments:
            installed[d.scale_up_switch] = installed.get(d.scale_up_switch, 0) + d.units
    assert bought == installed and len(bought) >= 2


def test_timeline_chart_from_synthetic_rows() -> None:
    rows = [
        TimelineRow("2026-01", "ind-new", 20000.0, 10000, 150, {"pcie6-160": 70}),
        TimelineRow("2026-07", "ind-new", 45000.0, 25000, 330, {"pcie6-320": 100}),
        TimelineRow("2026-07", "wa-remote", 10000.0, 5000, 80, {"pcie6-320": 35}),
        TimelineRow("2027-01", "wa-remote", 60000.0, 30000, 420, {"ualink-200g": 200}),
    ]
    svg = timeline_chart(rows)
    assert svg.startswith("<svg") and 'data-chart="timeline"' in svg
    for text in ("2026-01", "2026-07", "2027-01", "ind-new", "wa-remote", "installed IT MW",
                 "installed chips"):
        assert f"<!-- {text} -->" in svg  # matplotlib names each text it draws as paths
    # 2 panels x 2 sites x 3 periods bars (a site's bar is there, 0 high, in a period it has nothing)
    assert len(re.findall(r'<g id="timeline-patch_\d+">', svg)) >= 2 * 2 * 3
    assert timeline_chart(rows) == svg
    assert timeline_chart(rows[:2]) != svg


def test_the_page_of_a_phased_plan_has_a_timeline(phased: Plan) -> None:
    text = render_report(phased)
    assert "<h2>Timeline</h2>" in text and 'data-chart="timeline"' in text
    for row in timeline_rows(phased):
        for switch, n in row.switches_bought.items():
            assert f"{switch}: {n:,}" in text


# --- sweeps ----------------------------------------------------------------------------------------


def sweep_rows(grid: bool) -> list[dict]:
    rows = []
    for n in range(12):
        price = 5000 + 1000 * (n % 4) if grid else 5000 + 397 * n
        power = 0.05 + 0.05 * (n // 4) if grid else 0.05 + 0.011 * ((n * 7) % 12)
        tco = 1e9 + price * 1e5 + power * 1e9
        choice = "f/liquid/ualink-200g/th6" if price < 7000 else "f/air/pcie6-160/th6"
        varied = {"chips.trn3.unit_usd": price, "sites.*.electricity_usd_per_kwh": power}
        rows.append({"run": n, "set": varied, "status": "optimal", "tco_usd": tco, "capex_usd": tco / 2,
                     "objective": tco, "choices": {"ind-new": [choice]}})
    rows.append({"run": 12, "set": {"chips.trn3.unit_usd": 1, "sites.*.electricity_usd_per_kwh": 9},
                 "status": "infeasible", "tco_usd": None, "capex_usd": None, "objective": None, "choices": {},
                 "message": "no plan"})
    return rows


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_grid_or_draws() -> None:
    paths = ["chips.trn3.unit_usd", "sites.*.electricity_usd_per_kwh"]
    assert is_grid(sweep_rows(True)[:12], paths)
    assert not is_grid(sweep_rows(False)[:12], paths)
    assert not is_grid(sweep_rows(True)[:11], paths)  # a grid cut short is read as draws


@pytest.mark.parametrize("grid", [True, False], ids=["grid", "sample"])
def test_report_with_a_sweep(grid: bool, tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "runs.jsonl", sweep_rows(grid))
    out = tmp_path / "r.html"
    result = run("report", str(ROOT / "plans" / "trn3-100k.yaml"), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    # the infeasible 13th run makes both read as draws: their inputs are ranked (SALib), not barred
    for chart in ("sweep-objective", "sweep-choices", "sweep-sensitivity"):
        assert f'data-chart="{chart}"' in text
    assert 'data-chart="sweep-tornado"' not in text
    assert "13 of 13 runs finished (1 infeasible, 12 optimal)" in text
    assert "<!-- chips.trn3.unit_usd -->" in text and "<!-- ind-new: f/liquid/ualink-200g/th6 -->" in text


def test_report_with_an_exact_tornado(tmp_path: Path) -> None:
    """A tornado's rows (run 0 the base, 2k+1 and 2k+2 one input's ends) give its exact bars."""
    base = {"status": "optimal", "capex_usd": 1.0, "objective": 1.0, "choices": {"ind-new": ["a"]}}
    rows = [{"run": 0, "set": {}, "tco_usd": 100.0, **base},
            {"run": 1, "set": {"chips.trn3.unit_usd": 3750}, "tco_usd": 90.0, **base},
            {"run": 2, "set": {"chips.trn3.unit_usd": 6970}, "tco_usd": 125.0, **base},
            {"run": 3, "set": {"cooling.air.pue": 1.12}, "tco_usd": 99.0, **base},
            {"run": 4, "set": {"cooling.air.pue": 1.3}, "tco_usd": 101.0, **base, "choices": {"x": ["b"]}}]
    out = tmp_path / "r.html"
    result = run("report", str(ROOT / "plans" / "trn3-100k.yaml"), "--sweep",
                 str(write_rows(tmp_path / "runs.jsonl", rows)), "--out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert 'data-chart="sweep-tornado"' in text and "the line is the TCO of the base plan" in text
    assert "exact re-solves" in text and "TCO re-solved" in text


@pytest.mark.parametrize("content, said", [
    ("not json\n", "not a sweep row"),
    ('{"run": 0, "set": {}}\n', "no status"),
    ('{"run": 0, "set": {}, "status": "optimal", "tco_usd": NaN, "capex_usd": 1, "objective": 1, '
     '"choices": {}}\n', "tco_usd is not a finite number"),
    ('{"run": 0, "set": {}, "status": "optimal", "tco_usd": 1, "capex_usd": 1, "objective": 1, '
     '"choices": {"a": "x"}}\n', "choices is not"),
    ("", "holds no runs"),
    ('{"run": 0, "set": {}, "status": "optimal", "tco_usd": 1, "capex_usd": 1, "objective": 1, '
     '"choices": {}, "scenario": 7}\n', "scenario is not a string"),
    ('{"run": 0, "set": {}, "status": "opt', "runs.jsonl:1:1: the last line is incomplete"),
])
def test_bad_sweep_files(content: str, said: str, tmp_path: Path) -> None:
    rows = tmp_path / "runs.jsonl"
    rows.write_text(content, encoding="utf-8")
    out = tmp_path / "r.html"
    result = run("report", str(ROOT / "plans" / "moe-144.yaml"), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == EXIT_INVALID and said in result.output
    assert not out.exists()


def test_a_sweep_cut_off_mid_row_is_reported_without_that_row_and_says_so(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "runs.jsonl", sweep_rows(True))
    with rows.open("a", encoding="utf-8") as file:
        file.write('{"run": 13, "set": {"chips.trn3.unit_')
    out = tmp_path / "r.html"
    result = run("report", str(ROOT / "plans" / "trn3-100k.yaml"), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"warning: {rows}:14:1: the last line is incomplete" in result.output
    assert "13 of 13 runs finished" in out.read_text(encoding="utf-8")
    write_rows(rows, sweep_rows(True))  # whole again: no warning
    result = run("report", str(ROOT / "plans" / "trn3-100k.yaml"), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == 0 and "warning" not in result.output


def test_a_sweep_of_another_scenario_is_refused_and_one_on_other_specs_warned(tmp_path: Path) -> None:
    plan_file = ROOT / "plans" / "trn3-100k.yaml"
    digest = read_plan(plan_file).inputs_digest
    out = tmp_path / "r.html"
    rows = tmp_path / "runs.jsonl"
    write_rows(rows, [{**r, "scenario": "moe-144", "base_inputs_digest": digest} for r in sweep_rows(True)])
    result = run("report", str(plan_file), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == EXIT_INVALID, result.output
    assert "the sweep is of scenario moe-144 and the plan of trn3-100k" in result.output
    assert not out.exists()
    other = "0" * 64
    write_rows(rows, [{**r, "scenario": "trn3-100k", "base_inputs_digest": other} for r in sweep_rows(True)])
    result = run("report", str(plan_file), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"warning: {rows}: the sweep was run on other specs than the plan" in result.output
    write_rows(rows, [{**r, "scenario": "trn3-100k", "base_inputs_digest": digest} for r in sweep_rows(True)])
    result = run("report", str(plan_file), "--sweep", str(rows), "--out", str(out))
    assert result.exit_code == 0 and "warning" not in result.output


# --- the command -----------------------------------------------------------------------------------


def test_report_command_writes_the_page(tmp_path: Path, pages: dict[str, str]) -> None:
    out = tmp_path / "deep" / "moe-144.html"
    result = run("report", str(ROOT / "plans" / "moe-144.yaml"), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == pages["moe-144"]
    assert f"wrote {out}" in result.output


def test_without_the_extra_it_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("trnplan.report.charts_available", lambda: False)
    out = tmp_path / "r.html"
    result = run("report", str(ROOT / "plans" / "moe-144.yaml"), "--out", str(out))
    assert result.exit_code == EXIT_USAGE
    assert 'pip install "trnplan[report]"' in result.output
    assert not out.exists()


def test_bad_plans_are_the_readers_errors(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = run("report", str(tmp_path / "nope.yaml"), "--out", str(out))
    assert result.exit_code == EXIT_INVALID and "no such plan file" in result.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("format: trnplan-plan/1\nscenario: [\n", encoding="utf-8")
    result = run("report", str(broken), "--out", str(out))
    assert result.exit_code == EXIT_INVALID and str(broken) in result.output
    assert not out.exists()


def test_hostile_out_targets_are_refused(tmp_path: Path) -> None:
    plan = str(ROOT / "plans" / "moe-144.yaml")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to(victim)
    targets = ((link, "is a symlink"), (tmp_path, "is a folder"), (Path("/dev/null"), "not a regular"))
    for target, said in targets:
        result = run("report", plan, "--out", str(target))
        assert result.exit_code == EXIT_INVALID and said in result.output, result.output
    assert victim.read_text(encoding="utf-8") == "keep me"


# --- a phased plan's BOM and a long timeline; the tornado's labels --------------------------------------


def test_the_bom_of_a_phased_plan_dates_each_line(phased: Plan) -> None:
    """The page's BOM of a phased plan is its purchase schedule: a period column, each line's period."""
    text = render_report(phased)
    bom = text[text.index("<h2>Bill of materials</h2>"):]
    head = re.search(r"<tr>(<th.*?)</tr>", bom)
    assert head is not None
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head.group(1))[:3] == ["period", "site", "category"]
    rows = re.findall(r"<tr><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>", bom)
    assert {period for period, _site in rows} == {line.period for line in phased.bom}
    single = render_report(read_plan(ROOT / "plans" / "trn3-100k.yaml"))
    assert ">period</th>" not in single[single.index("<h2>Bill of materials</h2>"):]


def _drawn(monkeypatch: pytest.MonkeyPatch) -> list:
    """Figures as `charts` hands them to SVG, kept so a test can measure what was drawn."""
    from trnplan.report import charts

    figures: list = []
    original = charts._svg

    def keep(fig, name):  # type: ignore[no-untyped-def]
        figures.append(fig)
        return original(fig, name)

    monkeypatch.setattr(charts, "_svg", keep)
    return figures


def _boxes(fig, texts) -> list:  # type: ignore[no-untyped-def]
    from trnplan.report.charts import renderer_of

    renderer = renderer_of(fig)
    return [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()]


@pytest.mark.parametrize("periods", [4, 12, 24])
def test_the_timeline_period_labels_never_run_together(periods: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Quarters over 3 or 6 years: the period labels under each panel do not overlap (slanted, then every
    k-th shown once slanting is not enough), and the first period is always labelled."""
    figures = _drawn(monkeypatch)
    starts = [f"{2026 + q // 4}-{1 + 3 * (q % 4):02d}" for q in range(periods)]
    rows = [TimelineRow(s, site, 1000.0 * (i + 1), 64 * (i + 1), 10, {}) for i, s in enumerate(starts)
            for site in ("ohio-liquid", "oregon-air")]
    svg = timeline_chart(rows)
    assert f"<!-- {starts[0]} -->" in svg
    (fig,) = figures
    for ax in fig.axes:
        boxes = _boxes(fig, ax.get_xticklabels())
        assert boxes and not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False)), periods
        assert len(boxes) >= min(periods, 6)


def test_tornado_labels_stand_apart_on_short_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each end's value label is outside its bar, away from the other end's: a bar of a hair (TCO falling
    or rising with the input) never has its two labels on top of each other."""
    from trnplan.report.charts import tornado_chart

    figures = _drawn(monkeypatch)
    inputs = [
        {"path": "chips.trn3.unit_usd", "low": 3750, "high": 6970, "tco_low_usd": 3.0e9,
         "tco_high_usd": 3.6e9},
        {"path": "sites.oh.electricity_usd_per_kwh", "low": 0.06, "high": 0.09, "tco_low_usd": 3.3e9,
         "tco_high_usd": 3.3e9 + 2e5},
        {"path": "cooling.liquid.pue", "low": 1.05, "high": 1.2, "tco_low_usd": 3.3e9 + 3e5,
         "tco_high_usd": 3.3e9},
    ]
    tornado_chart(inputs, 3.3e9)
    (fig,) = figures
    (ax,) = fig.axes
    labels = _boxes(fig, ax.texts)
    assert len(labels) == 6
    for low, high in zip(labels[::2], labels[1::2], strict=True):
        assert not low.overlaps(high)
