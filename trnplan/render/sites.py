"""What a plan deploys where, site by site: the installed base (`Deployments`, `Scale-out fabric and site
use`; a plan with periods shows its last period's) and, for a plan with periods, each period's (`Timeline`,
`Purchases by period`). A plan without periods is one period: it has the installed base and no timeline.

Only the plan file is read. A site's limits in a period are not in the plan; what it has is derived from
the share the plan uses (`utilization`): available = used / share, shown as `-` where nothing is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from trnplan.numbers import fmt
from trnplan.plan.model import DeploymentRow, PeriodDeployment, PeriodSite, Plan, PlanPeriod, ScaleOut
from trnplan.plan.tables import bought_capex
from trnplan.render.tables import Col, Grid

SiteT = TypeVar("SiteT")


def site_tables(plan: Plan) -> list[Grid]:
    """The tables of a plan's sites: each period's (with periods), then the installed base."""
    installed = [_deployments(plan), _fabric(plan)]
    if plan.periods is None:
        return installed
    return [_timeline(plan.periods, bought_capex(plan)), _purchases(plan.periods), *installed]


def _sorted(sites: Mapping[str, SiteT]) -> list[tuple[str, SiteT]]:
    return sorted(sites.items())


def _option(d: DeploymentRow | PeriodDeployment) -> tuple[str, str, str]:
    """The cells that name an option: form, cooling, scale-up switch."""
    return d.form, d.cooling, d.scale_up_switch


def _scale_out(f: ScaleOut) -> tuple[str, str]:
    """A site's scale-out fabric in brief: its switch and tier count."""
    return f.switch, fmt(f.tiers, "int")


# --- the installed base -----------------------------------------------------------------------------


def _last(plan: Plan, title: str) -> str:
    """A table's title; a plan with periods shows the last period's installed base."""
    return f"{title}, installed in {plan.periods[-1].start}" if plan.periods else title


def _deployments(plan: Plan) -> Grid:
    effective = plan.workload is not None
    model = any(d.mfu is not None for s in plan.sites.values() for d in s.deployments)
    figures = ["units", "racks", "chips", "domains", "FP8"] + (["effective"] if effective else [])
    figures += ["MFU", "goodput"] if model else []
    stack: list[tuple[int, ...]] = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]
    stack += [(10, 11)] if effective else [(10,)]
    if model:
        stack += [(12, 13)]
    rank = {"units": 0, "racks": 3, "chips": 0, "domains": 4, "FP8": 2, "effective": 1, "MFU": 3,
            "goodput": 3, "IT power": 2, "capex": 0}
    t = Grid(
        _last(plan, "Deployments"),
        [Col("site"), Col("form"), Col("cooling"), Col("scale-up", priority=1)]
        + [Col(h, right=True, priority=rank[h]) for h in (*figures, "IT power", "capex")],
        keys=4,
        stack=stack,
        caption="effective = FP8 x efficiency (in brackets) = MFU x precision peak / FP8 peak x goodput"
        if model else None,
    )
    for site_id, s in _sorted(plan.sites):
        for d in s.deployments:
            share = f"{fmt(d.effective_fp8_pflops, 'pflops')} ({fmt(d.efficiency, 'pct')})"
            extra = [share] if effective else []
            extra += [fmt(d.mfu, "pct"), fmt(d.goodput, "pct")] if model else []
            t.add_row(
                site_id, *_option(d),
                fmt(d.units, "int"), fmt(d.racks, "int"), fmt(d.chips, "int"),
                fmt(d.domains, "int"), fmt(d.fp8_pflops, "pflops"), *extra,
                fmt(d.it_power_kw, "kw"), fmt(d.capex_usd, "usd"),
            )
    return t


def _fabric(plan: Plan) -> Grid:
    headers = {"tiers": 1, "ports": 4, "switches": 3, "optics": 5, "net racks": 4, "net power": 5, "capex": 0,
               "IT power": 1, "positions": 1, "grid": 2}
    t = Grid(
        _last(plan, "Scale-out fabric and site use"),
        [Col("site"), Col("switch")] + [Col(h, right=True, priority=rank) for h, rank in headers.items()],
        keys=2,
        stack=[(0, 1), (2, 3), (4, 5), (6, 7), (8,), (9, 10, 11)],
        caption="IT power, positions and grid: share of each site's limit the plan uses",
    )
    for site_id, s in _sorted(plan.sites):
        f = s.scale_out
        u = s.utilization
        t.add_row(
            site_id, *_scale_out(f),
            fmt(f.ports, "int"), fmt(f.switches, "int"),
            fmt(f.optics, "int"), fmt(f.network_racks, "int"), fmt(f.it_power_kw, "kw"),
            fmt(f.capex_usd, "usd"),
            fmt(u.it_power if u else None, "pct"), fmt(u.rack_positions if u else None, "pct"),
            fmt(u.grid_power if u else None, "pct"),
        )
    return t


# --- each period ------------------------------------------------------------------------------------


TIMELINE_CAPTION = (
    "units bought in the period; chips installed from then on; IT MW and positions: used / what the site "
    "has in the period (from the share used); scale-up: switch generations bought in the period, and in use"
)


def _mw(kw: float | None) -> str:
    return "-" if kw is None else fmt(kw, "mw").removesuffix(" MW")


def _available(used: float, share: float | None) -> float | None:
    """The site's limit in the period, from what the plan uses of it and the share that is."""
    return used / share if share else None


def _used_of(used: str, available: str) -> str:
    return f"{used} / {available}"


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
        *_scale_out(s.scale_out),
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


def _timeline(periods: list[PlanPeriod], capex: dict[tuple[str, str], int]) -> Grid:
    """A row per period and site with compute, then the period's totals."""
    t = Grid(
        "Timeline",
        [Col("period"), Col("site"), Col("units\nbought", right=True), Col("chips\ninstalled", right=True),
         Col("IT MW", right=True, priority=1), Col("positions", right=True, priority=2),
         Col("scale-up\nbought", wrap=True, priority=3), Col("scale-up\nin use", wrap=True, priority=4),
         Col("fabric", priority=3), Col("tiers", right=True, priority=4),
         Col("capex\nbought", right=True)],
        keys=2,
        stack=[(0, 1), (2, 3, 10), (4, 5), (8, 9), (6,), (7,)],
        caption=TIMELINE_CAPTION,
    )
    for period in periods:
        for site, s in _sorted(period.sites):
            _site_row(t, period, site, s, capex.get((period.start, site), 0))
        _total_row(t, period)
    return t


def _purchases(periods: list[PlanPeriod]) -> Grid:
    """What each period buys, option by option: units bought, and installed after the purchase."""
    t = Grid(
        "Purchases by period",
        [Col("period"), Col("site"), Col("form"), Col("cooling"), Col("scale-up", priority=1),
         Col("units\nbought", right=True), Col("units\ninstalled", right=True, priority=2),
         Col("chips\nbought", right=True)],
        keys=2,
        stack=[(0, 1), (2, 3), (4,), (5, 6), (7,)],
        caption="units and chips bought in the period; units installed: in place from then on",
    )
    for period in periods:
        rows = [(site, d) for site, s in _sorted(period.sites) for d in s.deployments if d.bought]
        for i, (site, d) in enumerate(rows):
            per_unit = d.chips // d.units if d.units else 0
            t.add_row(period.start, site, *_option(d), fmt(d.bought, "int"),
                      fmt(d.units, "int"), fmt(d.bought * per_unit, "int"), end_section=i == len(rows) - 1)
    return t
