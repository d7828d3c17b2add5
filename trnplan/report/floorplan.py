"""A site's floor plan as SVG drawn here (a drawing, not a chart): the site's rack positions as the frame,
one cell per compute or network rack coloured by form and cooling, and the site's IT power as a bar below.

Positions and the power limit are not stored in a plan; they are what its utilization figures imply:
positions = (compute + network racks) / utilization.rack_positions, power limit = IT kW /
utilization.it_power (both shares are rounded to six decimals, so the limits are close, not exact).
Every cell is a `rect.rack` whose `data-racks` says how many racks it stands for (1, unless a site has
more racks than MAX_CELLS), so the cells of a plan add up to its compute plus network racks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from trnplan.numbers import plain
from trnplan.plan.model import SiteSection

COLUMNS = 40
CELL = 14
"""A position's pitch in the drawing; the rack drawn in it is 2 units smaller."""
AISLE = 8
"""Extra space between pairs of rows (a hall's rows face each other across an aisle)."""
MAX_CELLS = 5000
"""Most cells drawn for a site: beyond, one cell stands for several racks (the drawing says how many)."""
NETWORK_COLOUR = "#4d4d4d"
FREE_COLOUR = "#d9d9d9"
HUES = (
    ("#1f77b4", "#9ecae1", "#0b3d66"),  # blue: mid, light, dark
    ("#ff7f0e", "#fdc086", "#a6480a"),
    ("#2ca02c", "#a1d99b", "#145214"),
    ("#9467bd", "#cbc0e0", "#4a2d6b"),
    ("#d62728", "#f4a5a5", "#7a1414"),
    ("#8c564b", "#d2b5ad", "#4a2c26"),
)
"""A hue per form, a shade per cooling (mid, then light: both far from the network racks' dark grey):
the cells of one form look alike, its coolings apart."""
SWITCH_OPACITY = (1.0, 0.68, 0.42)
"""Deployments of one form and cooling with different scale-up switches: the same colour, less opaque."""
LABEL_HEIGHT = 4
BAR_HEIGHT = 14


@dataclass(frozen=True)
class Swatch:
    """What a colour stands for in a site's legend."""

    label: str
    colour: str
    racks: int
    opacity: float = 1.0


def opacities(site: SiteSection) -> dict[str, float]:
    """Deployment key -> opacity: the first scale-up switch of each form and cooling solid, the next ones
    fainter, so a site's deployments stay apart even where they share a colour."""
    seen: dict[tuple[str, str], int] = {}
    out = {}
    for d in site.deployments:
        n = seen.get((d.form, d.cooling), 0)
        seen[(d.form, d.cooling)] = n + 1
        out[d.key] = SWITCH_OPACITY[min(n, len(SWITCH_OPACITY) - 1)]
    return out


def colours(sites: dict[str, SiteSection]) -> dict[tuple[str, str], str]:
    """(form, cooling) -> colour, the same in every site's drawing and chart of one plan."""
    forms = sorted({d.form for s in sites.values() for d in s.deployments})
    coolings = sorted({d.cooling for s in sites.values() for d in s.deployments})
    return {
        (f, c): HUES[i % len(HUES)][j % 3]
        for i, f in enumerate(forms)
        for j, c in enumerate(coolings)
    }


def positions(site: SiteSection) -> int | None:
    """The site's rack positions, from the share the plan uses; None when the plan does not say."""
    used = site.racks + site.scale_out.network_racks
    share = site.utilization.rack_positions if site.utilization else 0.0
    if not share or not used:
        return None
    return max(used, round(used / share))


def power_limit_kw(site: SiteSection) -> float | None:
    """The site's IT power limit, from the share the plan uses; None when the plan does not say."""
    share = site.utilization.it_power if site.utilization else 0.0
    if not share or not site.it_power_kw:
        return None
    return max(site.it_power_kw, site.it_power_kw / share)


def _xy(index: int) -> tuple[int, int]:
    """The top-left corner of position `index` (row-major, COLUMNS a row, rows in facing pairs)."""
    row, col = divmod(index, COLUMNS)
    return col * CELL, LABEL_HEIGHT + (row // 2) * (2 * CELL + AISLE) + (row % 2) * CELL


def _cells(racks: int, per_cell: int) -> list[int]:
    """How many racks each cell of a group stands for: per_cell each, the last one the remainder."""
    full, rest = divmod(racks, per_cell)
    return [per_cell] * full + ([rest] if rest else [])


def _rack_group(
    start: int, racks: int, per_cell: int, colour: str, title: str, kind: str, opacity: float = 1.0
) -> tuple[str, int]:
    faint = f' fill-opacity="{opacity:g}"' if opacity < 1 else ""
    parts = [f'<g class="{kind}" fill="{colour}"{faint}><title>{escape(title)}</title>']
    index = start
    for n in _cells(racks, per_cell):
        x, y = _xy(index)
        parts.append(f'<rect class="rack" data-racks="{n}" x="{x + 1}" y="{y + 1}" width="{CELL - 2}" '
                     f'height="{CELL - 2}"/>')
        index += 1
    parts.append("</g>")
    return "".join(parts), index


def _free(start: int, end: int, site_id: str) -> str:
    """Free positions [start, end) as one pattern-filled strip per row."""
    parts = []
    index = start
    while index < end:
        row_end = min(end, (index // COLUMNS + 1) * COLUMNS)
        x, y = _xy(index)
        parts.append(f'<rect x="{x}" y="{y}" width="{(row_end - index) * CELL}" height="{CELL}" '
                     f'fill="url(#free-{site_id})"/>')
        index = row_end
    return "".join(parts)


def _pattern(site_id: str) -> str:
    return (
        f'<defs><pattern id="free-{site_id}" width="{CELL}" height="{2 * CELL + AISLE}" '
        f'patternUnits="userSpaceOnUse" y="{LABEL_HEIGHT}">'
        f'<rect x="1.5" y="1.5" width="{CELL - 3}" height="{CELL - 3}" fill="none" stroke="{FREE_COLOUR}"/>'
        f'<rect x="1.5" y="{CELL + 1.5}" width="{CELL - 3}" height="{CELL - 3}" fill="none" '
        f'stroke="{FREE_COLOUR}"/></pattern></defs>'
    )


def _mw(kw: float) -> str:
    return f"{plain(kw / 1000, 2)} MW"


def _power_bar(site: SiteSection, palette: dict[tuple[str, str], str], y: int) -> str:
    """IT power in use (per deployment, then the fabric) against the site's limit, as one bar."""
    width = COLUMNS * CELL
    limit = power_limit_kw(site) or site.it_power_kw or 1.0
    parts = [f'<g class="power"><rect x="0" y="{y}" width="{width}" height="{BAR_HEIGHT}" fill="#f2f2f2" '
             f'stroke="#999"/>']
    x = 0.0
    faint = opacities(site)
    pieces = [(d.it_power_kw, palette[(d.form, d.cooling)], faint[d.key], f"{d.key}: {_mw(d.it_power_kw)}")
              for d in site.deployments]
    pieces.append((site.scale_out.it_power_kw, NETWORK_COLOUR, 1.0,
                   f"fabric: {_mw(site.scale_out.it_power_kw)}"))
    for kw, colour, opacity, title in pieces:
        w = width * min(kw, limit) / limit
        if w > 0:
            parts.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{BAR_HEIGHT}" fill="{colour}" '
                         f'fill-opacity="{opacity:g}"><title>{escape(title)}</title></rect>')
        x += w
    parts.append("</g>")
    return "".join(parts)


def _scale(site: SiteSection) -> tuple[int, int, int | None]:
    """(racks a cell stands for, cells drawn, positions) of the site's drawing."""
    network = site.scale_out.network_racks
    per_cell = max(1, math.ceil((site.racks + network) / MAX_CELLS))
    used_cells = sum(len(_cells(n, per_cell)) for n in [d.racks for d in site.deployments] + [network])
    total = positions(site)
    drawn = max(used_cells, min(math.ceil(total / per_cell), MAX_CELLS)) if total else used_cells
    return per_cell, drawn, total


def caption(site: SiteSection) -> str:
    """What the drawing shows in words: positions used, IT power used against the limit."""
    used = site.racks + site.scale_out.network_racks
    per_cell, drawn, total = _scale(site)
    where = f"{used:,} racks (positions not stated)"
    if total:
        where = f"{used:,} of {total:,} rack positions used"
    limit = power_limit_kw(site)
    power = f"IT power (the bar) {_mw(site.it_power_kw)}" + (f" of {_mw(limit)}" if limit else "")
    notes = [f"a cell is {per_cell} racks"] if per_cell > 1 else []
    if total and drawn * per_cell < total:
        notes.append(f"{total - drawn * per_cell:,} more free positions not drawn")
    extra = f" ({'; '.join(notes)})" if notes else ""
    return f"{where}{extra} · {power}"


def floor_plan(site_id: str, site: SiteSection, palette: dict[tuple[str, str], str]) -> str:
    """The site's floor plan as an `<svg class="floorplan">` element."""
    network = site.scale_out.network_racks
    per_cell, drawn, _ = _scale(site)
    body: list[str] = []
    index = 0
    faint = opacities(site)
    for d in site.deployments:
        title = (f"{d.key}: {d.racks:,} racks, {d.units:,} units, {d.chips:,} chips, "
                 f"{_mw(d.it_power_kw)}")
        group, index = _rack_group(index, d.racks, per_cell, palette[(d.form, d.cooling)], title, "compute",
                                   faint[d.key])
        body.append(group)
    if network:
        group, index = _rack_group(index, network, per_cell, NETWORK_COLOUR,
                                   f"network ({site.scale_out.switch}): {network:,} racks", "network")
        body.append(group)
    body.append(_free(index, drawn, site_id))
    rows = max(1, math.ceil(drawn / COLUMNS))
    grid_bottom = _xy((rows - 1) * COLUMNS)[1] + CELL
    width = COLUMNS * CELL
    frame = (f'<rect class="frame" x="-3" y="{LABEL_HEIGHT - 3}" width="{width + 6}" '
             f'height="{grid_bottom - LABEL_HEIGHT + 6}" fill="none" stroke="#666" stroke-width="1.5"/>')
    bar_y = grid_bottom + 14
    height = bar_y + BAR_HEIGHT + 4
    return (
        f'<svg class="floorplan" xmlns="http://www.w3.org/2000/svg" viewBox="-4 0 {width + 8} {height}" '
        f'data-site="{escape(site_id)}" data-racks="{site.racks + network}" role="img" '
        f'aria-label="{escape(site_id)}: {escape(caption(site))}">{_pattern(site_id)}'
        f"{frame}{''.join(body)}{_power_bar(site, palette, bar_y)}</svg>"
    )


def legend(site: SiteSection, palette: dict[tuple[str, str], str]) -> list[Swatch]:
    """The site's colours: one swatch per deployment (form / cooling / scale-up), then the network racks."""
    faint = opacities(site)
    out = [Swatch(f"{d.form} / {d.cooling} / {d.scale_up_switch}", palette[(d.form, d.cooling)], d.racks,
                  faint[d.key]) for d in site.deployments]
    if site.scale_out.network_racks:
        out.append(Swatch(f"network ({site.scale_out.switch})", NETWORK_COLOUR, site.scale_out.network_racks))
    return out
