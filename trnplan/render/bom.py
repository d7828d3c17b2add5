"""A bill of materials as one table: lines by site and category, a subtotal per site, the total."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from rich.console import RenderableType

from trnplan.numbers import fmt
from trnplan.plan.model import BomLine
from trnplan.render.tables import Col, Grid

if TYPE_CHECKING:
    from trnplan.bom import Bom


def _figures() -> list[Col]:
    """A BOM line's figures; a narrow terminal leaves out IT kW, then the unit price, then the quantity."""
    ranks = {"quantity": 2, "unit": 3, "extended": 0, "share": 1, "IT kW": 4}
    return [Col(h, right=True, priority=rank) for h, rank in ranks.items()]


def render_bom(bom: Bom) -> RenderableType:
    """BOM lines grouped by site and category, with a subtotal per site and the total (= plan capex); a
    phased plan's is its purchase schedule (see `render_schedule`)."""
    if bom.phased:
        return render_schedule(bom)
    t = Grid(
        f"Bill of materials: {bom.scenario}",
        [Col("site"), Col("category"), Col("item", wrap=True, min_width=24)] + _figures(),
        keys=3,
        stack=[(0, 1), (2,), (3, 4), (5, 6), (7,)],
        caption=f"plan capex {fmt(bom.capex_usd, 'usd')}",
    )
    by_site: dict[str, list[BomLine]] = defaultdict(list)
    for line in bom.lines:
        by_site[line.site].append(line)
    for site in sorted(by_site):
        _add_site(t, bom, site, by_site[site])
    t.add_row("total", "", "", "", "", fmt(bom.total_usd, "usd"), "100%" if bom.total_usd else "", "",
              style="bold", summary=True)
    return t


def _add_site(t: Grid, bom: Bom, site: str, site_lines: list[BomLine]) -> None:
    """A site's lines by category and item (site and category named once), then its subtotal."""
    capex = bom.capex_usd
    lines = sorted(site_lines, key=lambda ln: (ln.category, ln.item))
    previous = None
    for line in lines:
        t.add_row(
            site if previous is None else "",
            line.category if line.category != previous else "",
            line.item,
            fmt(line.quantity),
            fmt(line.unit_usd, "usd"),
            fmt(line.extended_usd, "usd"),
            fmt(line.extended_usd / capex if capex else bom.share(line), "pct"),
            fmt(line.it_kw, "kw") if line.it_kw is not None else "",
        )
        previous = line.category
    subtotal = sum(ln.extended_usd for ln in lines)
    t.add_row("", "", f"{site} subtotal", "", "", fmt(subtotal, "usd"),
              fmt(subtotal / capex, "pct") if capex else "", "", style="italic", end_section=True,
              summary=True)


def render_schedule(bom: Bom) -> RenderableType:
    """A purchase schedule: lines by period, site and category (each named once), a subtotal per period,
    the total (= plan capex, everything bought in the window)."""
    t = Grid(
        f"Purchase schedule: {bom.scenario}",
        [Col("period"), Col("site"), Col("category"), Col("item", wrap=True, min_width=24)] + _figures(),
        keys=4,
        stack=[(0, 1), (2, 3), (4, 5), (6, 7), (8,)],
        caption=f"plan capex {fmt(bom.capex_usd, 'usd')}: everything bought in the window",
    )
    capex = bom.capex_usd
    by_period: dict[str, list[BomLine]] = defaultdict(list)
    for line in bom.lines:
        by_period[line.period or ""].append(line)
    for period in sorted(by_period):
        lines = by_period[period]
        named: tuple[str, str] | None = None
        for i, line in enumerate(lines):
            site = line.site if named is None or named[0] != line.site else ""
            category = line.category if site or named is None or named[1] != line.category else ""
            t.add_row(
                period if i == 0 else "", site, category, line.item, fmt(line.quantity),
                fmt(line.unit_usd, "usd"), fmt(line.extended_usd, "usd"),
                fmt(line.extended_usd / capex if capex else bom.share(line), "pct"),
                fmt(line.it_kw, "kw") if line.it_kw is not None else "",
            )
            named = (line.site, line.category)
        subtotal = sum(ln.extended_usd for ln in lines)
        t.add_row("", "", "", f"{period} subtotal", "", "", fmt(subtotal, "usd"),
                  fmt(subtotal / capex, "pct") if capex else "", "", style="italic", end_section=True,
                  summary=True)
    t.add_row("total", "", "", "", "", "", fmt(bom.total_usd, "usd"), "100%" if bom.total_usd else "", "",
              style="bold", summary=True)
    return t
