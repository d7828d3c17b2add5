"""Why this choice: every (form, cooling, scale-up switch) option at each of a scenario's sites, priced per
chip as the optimizer prices it, and what rules each out (the site's cooling, power or positions, the
scenario's `as_of` and `min_domain_chips`, a rack too hot for its cooling) or makes it never worth taking
(another option at the site does at least as well on every count: the model leaves it out).

The figures are the option's own, per unit, from the cost model (`make_option`, `rates`): its capex (chips,
rack kits, scale-up switches, cooling per IT kW, copper links; at an owned site the plant and the hall),
its opex per year (energy and colocation per IT kW, maintenance on its capex) and their TCO over the
horizon; the site's scale-out fabric and one-off costs (`cooling_fixed_usd`) are shared by the options and
left out, the one-off costs listed beside. A scenario with periods is priced at its last period's figures
and says from which period each option may be bought.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from trnplan.catalog import HOURS_PER_YEAR, Catalog, Scenario
from trnplan.catalog.periods import periods_of
from trnplan.costs import (
    Option,
    all_options,
    form_efficiency,
    make_option,
    option_month,
    option_problems,
)
from trnplan.costs.rates import maintenance_usd_per_year, opex_usd_per_kw_year, tco_per_capex_usd
from trnplan.optimize.build import period_views
from trnplan.optimize.options import dominates, option_upper_bound

OPTIONS_FORMAT = "trnplan-options/1"
STATUSES = ("chosen", "allowed", "dominated", "ruled out")
"""What an option is at a site: in the plan given; open to the optimizer; left out of the model because
another option at the site does at least as well on every count; not allowed (its `reasons`)."""


@dataclass(frozen=True)
class OptionCost:
    """One option at one site: its figures per chip and per effective PFLOP-hour, and its status."""

    site: str
    form: str
    cooling: str
    scale_up_switch: str
    status: str
    chips_per_unit: int
    capex_usd_per_chip: float
    opex_usd_per_chip_year: float
    tco_usd_per_chip: float
    usd_per_effective_pflop_hour: float
    efficiency: float
    chips_per_rack: float
    it_kw_per_chip: float
    reasons: list[str] = field(default_factory=list)
    dominated_by: str | None = None
    from_period: str | None = None
    scenario_filter: bool = False
    """Ruled out by the scenario's own `forms` or `chips` list (shown only on request)."""

    @property
    def key(self) -> str:
        return f"{self.form}/{self.cooling}/{self.scale_up_switch}"

    def why(self) -> str:
        """The status in words: 'chosen', 'dominated by ...', or the reasons it is ruled out."""
        if self.status == "dominated":
            return f"dominated by {self.dominated_by}: no dearer, hotter or bigger, as much delivered"
        if self.status == "ruled out":
            return "; ".join(self.reasons)
        return self.status + (f" (from {self.from_period})" if self.from_period else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "form": self.form, "cooling": self.cooling, "scale_up_switch": self.scale_up_switch,
            "status": self.status, "chips_per_unit": self.chips_per_unit,
            "capex_usd_per_chip": round(self.capex_usd_per_chip, 2),
            "opex_usd_per_chip_year": round(self.opex_usd_per_chip_year, 2),
            "tco_usd_per_chip": round(self.tco_usd_per_chip, 2),
            "usd_per_effective_pflop_hour": round(self.usd_per_effective_pflop_hour, 6),
            "efficiency": self.efficiency, "chips_per_rack": self.chips_per_rack,
            "it_kw_per_chip": round(self.it_kw_per_chip, 6), "reasons": self.reasons,
            "dominated_by": self.dominated_by, "from_period": self.from_period,
        }


@dataclass(frozen=True)
class SiteOptions:
    """A site's options, cheapest per effective PFLOP-hour first within each status, and its one-off
    costs by cooling (left out of the per-chip figures)."""

    site: str
    options: list[OptionCost]
    one_off_usd: dict[str, float]


def _costs(catalog: Catalog, scenario: Scenario, site_id: str, opt: Option) -> tuple[float, ...]:
    """(capex, opex per year, TCO, USD per effective PFLOP-hour) of one unit of `opt` at the site."""
    site = catalog.sites[site_id]
    pue = catalog.cooling[opt.cooling].pue
    opex = opt.it_kw * opex_usd_per_kw_year(site, pue, scenario) + maintenance_usd_per_year(
        scenario, opt.capex_usd)
    years = scenario.horizon_years
    tco = tco_per_capex_usd(scenario) * opt.capex_usd + years * opt.it_kw * opex_usd_per_kw_year(site, pue,
                                                                                                 scenario)
    hours = opt.effective_fp8_pflops * HOURS_PER_YEAR * years
    return opt.capex_usd, opex, tco, tco / hours if hours else 0.0


def _capacity_reasons(catalog: Catalog, scenario: Scenario, site_id: str, opt: Option) -> list[str]:
    """Why not one unit of the option fits the site: its IT power, rack positions, grid or a supply cap."""
    if option_upper_bound(catalog, scenario, site_id, opt) > 0:
        return []
    site = catalog.sites[site_id]
    out = []
    if site.it_power_kw < opt.it_kw:
        out.append(f"a unit draws {opt.it_kw:,.0f} kW, over the site's {site.it_power_kw:,.0f} kW")
    if site.rack_positions < opt.racks:
        out.append(f"a unit takes {opt.racks} racks, over the site's {site.rack_positions:,} positions")
    pue = catalog.cooling[opt.cooling].pue
    if site.grid_power_mw is not None and site.grid_power_mw * 1000 < opt.it_kw * pue:
        out.append(f"a unit draws {opt.it_kw * pue:,.0f} kW from the grid, over the site's "
                   f"{site.grid_power_mw:g} MW")
    return out or ["a supply cap allows no unit of it"]


def _first_period(views: list[Catalog], scenario_id: str, site_id: str, key: tuple[str, str, str],
                  starts: list[str]) -> str | None:
    """The first period whose figures allow the option at the site (None when none does)."""
    for view, start in zip(views, starts, strict=True):
        scenario = view.scenarios[scenario_id]
        if option_problems(view, scenario, site_id, *key):
            continue
        opt = make_option(view, *key, form_efficiency(view, scenario, key[0]), site_id)
        if option_upper_bound(view, scenario, site_id, opt) > 0:
            return start
    return None


@dataclass(frozen=True)
class _Views:
    """What a scenario's options are read against: each period's catalog and start, the widest view (what
    the model's options come from) and the view prices are read in (the last period's)."""

    scenario_id: str
    views: list[Catalog]
    starts: list[str]
    wide: Catalog
    multi: bool

    @property
    def priced(self) -> Catalog:
        return self.views[-1]


def _site_options(v: _Views, site_id: str, picked: set[tuple[str, str, str, str]]) -> list[OptionCost]:
    """One site's options, each priced with its status and reasons, sorted."""
    wide_scenario = v.wide.scenarios[v.scenario_id]
    entries: list[tuple[Option, list[str], bool]] = []
    for key in all_options(v.wide):
        problems = option_problems(v.wide, wide_scenario, site_id, *key)
        opt = make_option(v.priced, *key, form_efficiency(v.wide, wide_scenario, key[0]), site_id)
        reasons = [r.text for r in problems] or _capacity_reasons(v.wide, wide_scenario, site_id, opt)
        entries.append((opt, reasons, any("among the scenario's" in r.text for r in problems)))
    allowed = [o for o, why, _ in entries if not why]
    when = (lambda o: option_month(v.wide, o)) if v.multi else None
    options = []
    for opt, reasons, own in entries:
        beaten = None if reasons else next(
            (a for a in allowed if a is not opt and dominates(a, opt, wide_scenario, when)), None)
        status = ("chosen" if (site_id, *opt.key) in picked else "ruled out" if reasons else
                  "dominated" if beaten is not None else "allowed")
        capex, opex, tco, per_hour = _costs(v.priced, v.priced.scenarios[v.scenario_id], site_id, opt)
        start = _first_period(v.views, v.scenario_id, site_id, opt.key, v.starts) if v.multi and not reasons \
            else None
        options.append(OptionCost(
            site_id, *opt.key, status=status, chips_per_unit=opt.chips,
            capex_usd_per_chip=capex / opt.chips, opex_usd_per_chip_year=opex / opt.chips,
            tco_usd_per_chip=tco / opt.chips, usd_per_effective_pflop_hour=per_hour,
            efficiency=opt.efficiency, chips_per_rack=opt.chips / opt.racks,
            it_kw_per_chip=opt.it_kw / opt.chips, reasons=reasons,
            dominated_by="/".join(beaten.key) if beaten is not None else None, from_period=start,
            scenario_filter=own))
    return sorted(options, key=lambda o: (STATUSES.index(o.status), o.usd_per_effective_pflop_hour, o.key))


def site_option_costs(catalog: Catalog, scenario_id: str,
                      chosen: Iterable[tuple[str, str, str, str]] = ()) -> list[SiteOptions]:
    """Every option at each of the scenario's sites (sorted), priced and with its status; `chosen`: the
    (site, form, cooling, scale-up switch) a plan uses, marked `chosen`."""
    scenario = catalog.scenarios[scenario_id]
    periods = periods_of(scenario)
    views, wide = period_views(catalog, scenario_id, periods)
    v = _Views(scenario_id, views, [p.start for p in periods], wide, scenario.periods is not None)
    picked = set(chosen)
    return [SiteOptions(site_id, _site_options(v, site_id, picked),
                        dict(sorted(catalog.sites[site_id].cooling_fixed_usd.items())))
            for site_id in sorted(scenario.sites)]


def options_to_dict(scenario_id: str, sites: list[SiteOptions], every: bool = False) -> dict[str, Any]:
    """The JSON form: format, scenario and, per site, its one-off costs and options (`every`: also those
    the scenario's own forms or chips lists rule out)."""
    return {
        "format": OPTIONS_FORMAT,
        "scenario": scenario_id,
        "sites": {
            s.site: {"one_off_usd": s.one_off_usd,
                     "options": [o.to_dict() for o in s.options if every or not o.scenario_filter]}
            for s in sites
        },
    }
