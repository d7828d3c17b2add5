"""Tables that fit: at any width, every layout keeps each id and number whole (a real terminal at 80 and
120 columns: tests/test_terminal.py), and nothing is printed with trailing spaces."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import hidden_words, run
from rich.cells import cell_len
from rich.console import Console, RenderableType

from trnplan.bom import build_bom
from trnplan.diff import diff_plans
from trnplan.numbers import fmt
from trnplan.optimize.progress import Progress
from trnplan.plan import read_plan
from trnplan.render import Trimmed, render_bom, render_catalog, render_diff, render_plan
from trnplan.render.plan import delta_text
from trnplan.render.progress import progress_text
from trnplan.render.tables import Col, Grid
from trnplan.specs.load import load_specs

REPO = Path(__file__).resolve().parents[1]


def printed(renderable: RenderableType, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, highlight=False, soft_wrap=False).print(
        Trimmed(renderable)
    )
    return out.getvalue()


def words(text: str) -> set[str]:
    return {w for line in text.splitlines() if set(line) - set("─ ") for w in line.split()}


def grid() -> Grid:
    g = Grid("Deployments", [Col("site"), Col("form"), Col("units", right=True), Col("capex", right=True),
                             Col("note", wrap=True)], keys=2, stack=[(0, 1), (2, 3), (4,)])
    g.add_row("iad-air", "trn3-nl32x2", "78", "$61,638,408", "air-cooled racks in the legacy hall")
    g.add_row("wa-remote", "trn3-nl72x2", "324", "$569,520,720", "liquid")
    return g


def test_a_grid_picks_wide_then_stacked_then_records() -> None:
    g = grid()
    assert [g.layout(w) for w in (120, 66, 50, 30)] == ["wide", "wide", "stacked", "records"]
    wide = printed(g, 120).splitlines()
    assert wide[0] == "Deployments"
    assert wide[3].split() == ["iad-air", "trn3-nl32x2", "78", "$61,638,408", "air-cooled", "racks", "in",
                               "the", "legacy", "hall"]
    stacked = printed(g, 50).splitlines()
    # each stacked header's lines stand over its values' lines: a lone header on the first line
    assert stacked[1].split() == ["site", "units", "note"] and stacked[2].split() == ["form", "capex"]
    assert stacked[4].split()[:3] == ["iad-air", "78", "air-cooled"]
    assert stacked[5].split()[:2] == ["trn3-nl32x2", "$61,638,408"]
    assert printed(g, 30).splitlines()[1:7] == [
        "site  form",  # what the first line of each record names
        "iad-air  trn3-nl32x2",
        "  units 78   capex $61,638,408",
        "  note air-cooled racks in the",
        "    legacy hall",
        "wa-remote  trn3-nl72x2",
    ]


@pytest.mark.parametrize("width", [31, 40, 52, 64, 80, 97, 120, 160])
def test_every_rendering_keeps_its_words_whole_and_fits_any_width(width: int) -> None:
    """Every table trnplan prints, at widths from 31 (a little more than its longest id,
    `trn3-nl72x2/liquid/pcie6-160`) to 160: no line wider than the width, and every word of the
    250-wide rendering still there whole."""
    plan = read_plan(REPO / "plans" / "trn3-100k.yaml")
    other = read_plan(REPO / "plans" / "moe-144.yaml")
    catalog = load_specs([REPO / "specs"])
    renderables = [render_plan(plan), render_bom(build_bom(plan)), render_diff(diff_plans(plan, other))]
    renderables += [render_catalog(kind, catalog) for kind in ("chips", "forms", "switches", "sites")]
    for renderable in renderables:
        text = printed(renderable, width)
        assert max(cell_len(line) for line in text.splitlines()) <= width
        reference = printed(renderable, 250)
        missing = words(reference) - words(text) - hidden_words(renderable, width)
        assert not missing, (width, sorted(missing)[:10])


def test_trimmed_output_has_no_trailing_spaces() -> None:
    text = printed(grid(), 120)
    assert all(line == line.rstrip() for line in text.splitlines())


def test_progress_text() -> None:
    assert progress_text(Progress("solving s", 3.8625e9, 3.85e9, 0.0033, 12.4, "USD")) == (
        "solving s: best $3.86B, bound $3.85B, gap 0.33%, 12 s"
    )
    assert progress_text(Progress("solving s", None, None, None, 0.2, "USD")) == "solving s: no plan yet, 0 s"
    assert progress_text(Progress("solving s, ratio step 2", 0.5, 0.7, 0.4, 3, "")) == (
        "solving s, ratio step 2: gap 40%, 3 s"
    )


# --- at 80 columns: the alternatives, the chips, a phased BOM's subtotals ------------------------------


ALTERNATIVES = "Alternatives: the best plan without each choice made"


def lines_at(renderable: RenderableType, width: int) -> list[str]:
    lines = printed(renderable, width).splitlines()
    assert max(cell_len(line) for line in lines) <= width, width
    return lines


def block(lines: list[str], title: str) -> list[str]:
    """The lines of the table titled `title`, up to the empty line after it."""
    start = lines.index(title)
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


@pytest.mark.parametrize("scenario", ["trn3-100k", "moe-144"])
def test_the_alternatives_at_80_columns_keep_each_row_on_its_line_and_each_site_whole(scenario: str) -> None:
    """Too narrow for the choices beside the figures: a row's figures stay on its first line, beside what
    it is without, and each site's choice follows under it, whole, its further options indented."""
    plan = read_plan(REPO / "plans" / f"{scenario}.yaml")
    alternatives = block(lines_at(render_plan(plan), 80), ALTERNATIVES)
    for i, alt in enumerate(plan.alternatives, 1):
        (first,) = [line for line in alternatives if line.startswith(f"{i}  ")]
        assert first.split()[1:] == [*alt.without.split(), *(
            [fmt(alt.tco_usd, "usd"), fmt(alt.fp8_pflops, "pflops").split()[0], "PF",
             delta_text(alt.delta_pct or 0.0)]
            if alt.feasible else ["-", "-", "infeasible"])]
        for site_choice in alt.choice.split("; "):
            head, *more = site_choice.split(" + ")
            at = alternatives.index(f"   {head}" + (" +" if more else ""))
            assert alternatives[at + 1:at + 1 + len(more)] == [
                f"     {option}" + (" +" if n < len(more) - 1 else "") for n, option in enumerate(more)]


def test_the_alternatives_stay_side_by_side_where_each_choice_fits() -> None:
    """120 columns (the README's quick start) and a pipe's 160: the choices in their column, a line per
    site and per further option, next to the figures."""
    plan = read_plan(REPO / "plans" / "trn3-100k.yaml")
    for width in (120, 160):
        alternatives = block(lines_at(render_plan(plan), width), ALTERNATIVES)
        assert alternatives[1].split() == ["#", "without", "choice", "TCO", "FP8", "vs", "plan"]
        assert alternatives[3].split()[:4] == ["1", "scale-out", "switch", "th5-51t2"]
        first = plan.alternatives[0]
        assert f"iad-air: trn3-nl32x2 / air / pcie6-160 / th4-25t6  ${first.tco_usd:,.0f}" in alternatives[3]
        assert any(line.strip() == "wa-remote: trn3-nl32x2 / air / pcie6-160 +" for line in alternatives)


@pytest.mark.parametrize("width", [80, 120])
def test_show_chips_keeps_a_chip_its_name_and_its_vendor_together(width: int) -> None:
    """Name and vendor are columns of their own: stacked, a chip is two lines (id and vendor, then name
    and date), never a vendor alone on a line of its own; a pipe's 160 columns give one line a chip."""
    catalog = load_specs([REPO / "specs"])
    lines = lines_at(render_catalog("chips", catalog), width)
    for cid, chip in catalog.chips.items():
        (at,) = [i for i, line in enumerate(lines) if line.split()[:1] == [cid]]
        assert lines[at].split()[1] == chip.vendor
        assert lines[at + 1].startswith(f"{chip.name}  ") and chip.available_from in lines[at + 1]
    assert not [line for line in lines if line.strip() in {c.vendor for c in catalog.chips.values()}]
    wide = lines_at(render_catalog("chips", catalog), 160)
    assert wide[1].split()[:3] == ["chip", "name", "vendor"]
    for cid, chip in catalog.chips.items():
        (line,) = [line for line in wide if line.split()[:1] == [cid]]
        assert f"  {chip.name}  " in line and f"  {chip.vendor}  " in line


@pytest.mark.parametrize("width", [80, 120])
def test_a_phased_bom_puts_each_subtotal_beside_its_figure(width: int) -> None:
    """At 80 columns the schedule is stacked; a subtotal's label rises to the line of its amount, as in
    the wide layout, instead of standing a line below it."""
    plan = read_plan(REPO / "plans" / "trn3-life.yaml")
    bom = build_bom(plan)
    lines = lines_at(render_bom(bom), width)
    bought = sorted({line.period for line in bom.lines if line.period})
    assert len(bought) >= 3
    for period in bought:
        subtotal = sum(line.extended_usd for line in bom.lines if line.period == period)
        (line,) = [line for line in lines if f"{period} subtotal" in line]
        assert line.split()[-2 if width == 120 else -1] == fmt(subtotal, "usd")
    (total,) = [line for line in lines if line.startswith("total")]
    assert fmt(bom.total_usd, "usd") in total


def test_wrapped_text_in_a_cell_gets_a_hanging_indent() -> None:
    """A BOM item wrapped in its column: the lines after its first are indented, so the next item (or
    the next stacked category) is not read as its continuation."""
    plan = read_plan(REPO / "plans" / "trn3-life.yaml")
    lines = lines_at(render_bom(build_bom(plan)), 80)
    at = next(i for i, line in enumerate(lines) if "JBOG compute tray (2 chip" in line)
    column = lines[at].index("JBOG")
    assert lines[at + 1][column:column + 2] == "  " and lines[at + 1][column + 2] != " "


def detail_grid() -> Grid:
    columns = [Col("#", right=True), Col("name"), Col("detail", wrap=True), Col("cost", right=True)]
    g = Grid("Options", columns, keys=2, detail=2)
    g.add_row("1", "first", "alpha beta gamma delta epsilon zeta eta theta", "$1,000")
    g.add_row("2", "second", "", "$20")
    return g


def test_a_detail_column_goes_under_its_row_when_it_does_not_fit_beside() -> None:
    g = detail_grid()
    assert [g.layout(w) for w in (80, 40, 15, 12)] == ["wide", "detail", "stacked", "records"]
    assert printed(g, 80).splitlines()[3].split() == ["1", "first", "alpha", "beta", "gamma", "delta",
                                                      "epsilon", "zeta", "eta", "theta", "$1,000"]
    assert printed(g, 30).splitlines() == [
        "Options",
        "   name",
        "#  detail    cost",
        "─────────────────",
        "1  first   $1,000",
        "   alpha beta gamma delta",
        "     epsilon zeta eta theta",
        "2  second     $20",
    ]


def test_a_summary_row_rises_over_its_blank_cells_when_stacked() -> None:
    g = grid()
    g.add_row("", "", "", "$631,159,128", "", summary=True)
    g.add_row("", "total", "", "", "", summary=True)
    stacked = printed(g, 50).splitlines()
    assert stacked[-2].split() == ["$631,159,128"] and stacked[-1].split() == ["total"]
    assert stacked[-2].index("$631,159,128") < stacked[4].index("air-cooled")  # first line, capex column


# --- narrow terminals: fewer columns, not folded ones ------------------------------------------------


HINT = "not shown at this width: "


def test_at_80_columns_a_table_keeps_its_essential_columns_a_row_a_line_and_names_the_rest() -> None:
    """kubectl's default against `-o wide`: the deployments at 80 columns are one line a deployment under
    one line of headers, the less needed columns (racks, domains, FP8, IT power) left out and named
    under the table with `--wide`; at 120 every column is there and nothing is said."""
    plan = read_plan(REPO / "plans" / "trn3-100k.yaml")
    deployments = block(lines_at(render_plan(plan), 80), "Deployments")
    assert deployments[1].split() == ["site", "form", "cooling", "scale-up", "units", "chips", "capex"]
    rows = [d for s in plan.sites.values() for d in s.deployments]
    assert len(deployments) == 3 + len(rows) + 1
    (hint,) = [line for line in deployments if line.startswith(HINT)]
    assert hint == f"{HINT}racks, domains, FP8, IT power; --wide shows them"
    for line, d in zip(deployments[3:], [d for _, s in sorted(plan.sites.items()) for d in s.deployments],
                       strict=False):
        assert line.split()[1:] == [d.form, d.cooling, d.scale_up_switch, fmt(d.units, "int"),
                                    fmt(d.chips, "int"), fmt(d.capex_usd, "usd")]
    wide = block(lines_at(render_plan(plan), 120), "Deployments")
    assert "racks" in wide[1].split() and not any(line.startswith(HINT) for line in wide)


def test_show_forms_is_a_line_a_form_at_80_columns() -> None:
    """A form is a line, one more per further scale-up option or wrapped brand-name line, never nine;
    codename and topology are left out at 80 columns and named (they are there at 120)."""
    catalog = load_specs([REPO / "specs"])
    lines = lines_at(render_catalog("forms", catalog), 80)
    assert lines[2].split()[:2] == ["form", "brand"]
    for fid, form in catalog.forms.items():
        (at,) = [i for i, line in enumerate(lines) if line.split()[:1] == [fid]]
        taken = 1
        while at + taken < len(lines) and lines[at + taken].startswith(" "):
            taken += 1
        assert taken <= max(4, len(form.scale_up)), (fid, lines[at:at + taken])
    assert any(line.startswith(HINT) and "codename" in line for line in lines)
    wide = lines_at(render_catalog("forms", catalog), 120)
    assert "codename" in wide[2].split() and "Teton3 MAX" in "\n".join(wide)


def test_a_bom_at_80_columns_keeps_each_category_beside_its_item() -> None:
    """A category is a column of its own on its item's first line; an item's further lines are indented
    under the item, and the category column beside them is empty (no category under a folded item)."""
    plan = read_plan(REPO / "plans" / "trn3-100k.yaml")
    lines = lines_at(render_bom(build_bom(plan)), 80)
    assert lines[1].split()[:3] == ["site", "category", "item"]
    column = lines[1].index("item")
    categories = {line.category for line in plan.bom}
    for line in lines[3:]:
        head = line[:column].split()
        if head and head[-1] in categories:
            assert line[column:column + 1].strip(), line  # the item starts on the category's line
        elif line[column:column + 2] == "  " and line[column + 2:column + 3].strip():
            assert not line[:column].strip(), line  # a folded item's next line: nothing beside it


def test_wide_prints_every_column_at_any_width(tmp_path: Path) -> None:
    r = run("bom", REPO / "plans" / "trn3-100k.yaml", "--wide", columns=80)
    assert r.exit_code == 0, r.output
    header = r.stdout.splitlines()[1].split()
    assert header == ["site", "category", "item", "quantity", "unit", "extended", "share", "IT", "kW"]
    assert HINT not in r.stdout
    narrow = run("bom", REPO / "plans" / "trn3-100k.yaml", columns=80)
    assert f"{HINT}unit, IT kW; --wide shows them" in narrow.stdout


@pytest.mark.parametrize("width", [80, 120])
def test_the_timeline_and_the_purchases_name_installed_and_bought_chips_apart(width: int) -> None:
    """Side by side, the timeline's chips are installed and the purchases' chips are bought: each header
    says which (its second line, over the same right edge)."""
    plan = read_plan(REPO / "plans" / "trn3-life.yaml")
    lines = lines_at(render_plan(plan), width)
    for title, chips, units in (("Timeline", "installed", "bought"), ("Purchases by period", "bought",
                                                                      "bought")):
        first, second = block(lines, title)[1:3]
        end = first.index("chips") + len("chips")
        assert second[:end].endswith(chips), (title, first, second)
        end = first.index("units") + len("units")
        assert second[:end].endswith(units), (title, first, second)
