"""Tables that fit: at any width, every layout keeps each id and number whole (a real terminal at 80 and
120 columns: tests/test_terminal.py), and nothing is printed with trailing spaces."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console, RenderableType

from trnplan.bom import build_bom
from trnplan.diff import diff_plans
from trnplan.load import load_specs
from trnplan.optimize.progress import Progress
from trnplan.plan import read_plan
from trnplan.render import Trimmed, render_bom, render_catalog, render_diff, render_plan
from trnplan.render.progress import progress_text
from trnplan.render.tables import Col, Grid

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
    assert stacked[1].split() == ["site", "units"] and stacked[2].split() == ["form", "capex", "note"]
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
        missing = words(reference) - words(text)
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
