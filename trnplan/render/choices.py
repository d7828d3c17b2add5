"""`trnplan options`: each site's options priced per chip, with what rules each out, as one table a site."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from trnplan.numbers import fmt
from trnplan.render.tables import Col, Grid, spaced

if TYPE_CHECKING:
    from trnplan.optimize.choices import SiteOptions

OPTIONS_CAPTION = (
    "per chip, from one unit: capex (chips, rack kit, scale-up switches, cooling per kW), opex a year "
    "(energy, colocation, maintenance), their TCO over the horizon, and TCO per effective PFLOP-hour "
    "(the workload's share of peak); the scale-out fabric and one-off costs are left out, as every option "
    "at the site shares them"
)


def _money(usd: float) -> str:
    return fmt(usd, "usd")


def render_options(scenario: str, sites: list[SiteOptions], every: bool = False) -> RenderableType:
    """A table per site: its options, chosen first, then allowed, dominated and ruled out, each cheapest
    per effective PFLOP-hour first, with why (under the row where it does not fit beside)."""
    parts: list[RenderableType] = [Text(f"Options for {scenario}", style="bold")]
    for s in sites:
        shown = [o for o in s.options if every or not o.scenario_filter]
        hidden = len(s.options) - len(shown)
        t = Grid(
            f"{s.site}",
            [Col("form"), Col("cooling"), Col("scale-up", priority=1),
             Col("capex\n/chip", right=True), Col("opex\n/chip-yr", right=True, priority=2),
             Col("TCO\n/chip", right=True), Col("$/eff\nPF-hour", right=True),
             Col("chips\n/rack", right=True, priority=3), Col("kW\n/chip", right=True, priority=3),
             Col("status", wrap=True)],
            keys=3,
            detail=9,
        )
        for o in shown:
            t.add_row(o.form, o.cooling, o.scale_up_switch, _money(o.capex_usd_per_chip),
                      _money(o.opex_usd_per_chip_year), _money(o.tco_usd_per_chip),
                      fmt(o.usd_per_effective_pflop_hour, "usd"), fmt(o.chips_per_rack),
                      fmt(o.it_kw_per_chip), o.why(), style="bold" if o.status == "chosen" else "")
        notes = [f"one-off to use {cooling} cooling here: {_money(usd)}"
                 for cooling, usd in s.one_off_usd.items()]
        if hidden:
            notes.append(f"{hidden} options of forms or chips the scenario does not list are not shown "
                         "(--all shows them)")
        t.caption = "; ".join(notes) or None
        parts.append(t)
    parts.append(Text(OPTIONS_CAPTION, style="dim"))
    return Group(*spaced(parts))
