"""A phased plan's timeline: per period and site what is bought and what is installed, the power and rack
positions used of what the site has then, the scale-up switch generations bought and in use, the scale-out
fabric; a totals row per period. And its purchases: what each period buys, option by option.

Only the plan file is read. A site's limits in a period are not in the plan; what it has is derived from
the share the plan uses (`utilization`): available = used / share, shown as `-` where nothing is used.
"""

from __future__ import annotations

from collections import defaultdict

from trnplan.numbers import cents, fmt
from trnplan.plan.model import PeriodSite, Plan, PlanPeriod
from trnplan.render.tables import Col, Grid

TIMELINE_CAPTION = (
    "bought: units bought in the period; chips: installed; IT MW and positions: used / what the site has "
    "in the period (from the share used); scale-up: switch generations bought in the period, and in use"
)


def _mw(kw: float | None) -> str:
    return "-" if kw is None else fmt(kw, "mw").removesuffix(" MW")


def _available(used: float, share: float | None) -> float | None:
    """The site's limit in the period, from what the plan uses of it and the share that is."""
    return used / share if share else None


def _used_of(used: str, available: str) -> str:
    return f"{used} / {available}"


def _bought_capex(plan: Plan) -> dict[tuple[str, str], int]:
    """(period start, site) -> cents bought there then, from the BOM lines."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for line in plan.bom:
        out[(line.period or "", line.site)] += cents(line.extended_usd)
    return out


def _switches(s: PeriodSite, bought: bool) -> str:
    """The scale-up switches of a site's deployments (only those bought into when `bought`), joined by +."""
    return " + ".join(sorted({d.scale_up_switch for d in s.deployments if d.bought or not bought})) or "-"


def _site_row(t: Grid, period: PlanPeriod, site: str, s: PeriodSite, capex_cents: int) -> None:
    u = s.utilization
    power = _available(s.it_power_kw, u.it_power if u else None)
    positions = _available(s.positions, u.rack_positions if u else None)
    t.add_row(
        period.start, site,
        fmt(sum(d.bought for d in s.deployments), "int"),
        fmt(sum(d.chips for d in s.deployments), "int"),
        _used_of(_mw(s.it_power_kw), _mw(power)),
        _used_of(fmt(s.positions, "int"), fmt(positions, "int")),
        _switches(s, bought=True), _switches(s, bought=False),
        s.scale_out.switch, fmt(s.scale_out.tiers, "int"),
        fmt(capex_cents / 100, "usd"),
    )


def _total_row(t: Grid, period: PlanPeriod) -> None:
    sites = period.sites.values()
    pt = period.totals
    t.add_row(
        period.start, "all sites",
        fmt(sum(d.bought for s in sites for d in s.deployments), "int"),
        fmt(pt.chips, "int"),
        _mw(pt.it_power_kw),
        fmt(sum(s.positions for s in sites), "int"),
        "", "", "", "",
        fmt(pt.capex_bought_usd, "usd"),
        style="bold", end_section=True,
    )


def render_timeline(plan: Plan) -> Grid:
    """The timeline of a phased plan: a row per period and site with compute, then the period's totals."""
    assert plan.periods is not None
    t = Grid(
        "Timeline",
        [Col("period"), Col("site")]
        + [Col(h, right=True) for h in ("bought", "chips", "IT MW", "positions")]
        + [Col("scale-up\nbought", wrap=True), Col("scale-up\nin use", wrap=True), Col("fabric"),
           Col("tiers", right=True),
           Col("capex bought", right=True)],
        keys=2,
        stack=[(0, 1), (2, 3, 10), (4, 5), (8, 9), (6,), (7,)],
        caption=TIMELINE_CAPTION,
    )
    capex = _bought_capex(plan)
    for period in plan.periods:
        for site, s in sorted(period.sites.items()):
            _site_row(t, period, site, s, capex.get((period.start, site), 0))
        _total_row(t, period)
    return t


def render_purchases(plan: Plan) -> Grid:
    """What each period buys, option by option: units bought, and installed after the purchase."""
    assert plan.periods is not None
    t = Grid(
        "Purchases by period",
        [Col("period"), Col("site"), Col("form"), Col("cooling"), Col("scale-up")]
        + [Col(h, right=True) for h in ("bought", "installed", "chips")],
        keys=2,
        stack=[(0, 1), (2, 3), (4,), (5, 6), (7,)],
        caption="bought, chips: bought in the period; installed: units in place from then on",
    )
    for period in plan.periods:
        rows = [(site, d) for site, s in sorted(period.sites.items()) for d in s.deployments if d.bought]
        for i, (site, d) in enumerate(rows):
            per_unit = d.chips // d.units if d.units else 0
            t.add_row(period.start, site, d.form, d.cooling, d.scale_up_switch, fmt(d.bought, "int"),
                      fmt(d.units, "int"), fmt(d.bought * per_unit, "int"), end_section=i == len(rows) - 1)
    return t
