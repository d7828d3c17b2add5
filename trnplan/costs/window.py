"""Evaluate a plan's decisions over its window, for one period or many (design.md, "One model for one or
many periods" and "Phased plans"): each period's installed base through `evaluate` at that period's
figures, what is bought in it, and the window's money.

A scenario without periods is one period of its whole horizon (L = W = horizon_years): what it buys is its
installed BOM, and its totals are exactly the single-period figures. With periods, bought in period p =
installed in p minus installed in p-1, line by line of the BOM (switches, optics and network racks bought
are the fabric's growth; a one-off fit-out falls in the period its cooling first serves kW). A purchase
line's price is the growth of its installed line's price (each to the cent), so the schedule sums to the
installed capex, site by site, exactly. With C_p the capex bought up to p (the installed capex), L_p and
W_p a period's length and what is left of the window:
  TCO = sum_p [ bought_p W_p (CRF + m) + L_p (energy_p + colocation_p + ...) ]
      = sum_p L_p [ C_p CRF + opex_p ],  opex_p = energy_p + colocation_p + ... + m C_p
(`rates.window_tco_usd`; the opex categories are `rates.OPEX_FIGURES`).
$/PFLOP-hour divides by PFLOP-hours over the window: sum_p L_p x installed PFLOPs_p x 8760.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import Period, catalog_at, periods_of, price_schedules, scenario_at, single_view
from trnplan.costs.decisions import Decisions
from trnplan.costs.evaluate import Evaluation, SiteFigures, evaluate
from trnplan.costs.figures import BomLine, Totals
from trnplan.costs.rates import (
    OPEX_FIGURES,
    maintenance_usd_per_year,
    opex_usd_per_year,
    residual_usd_per_year,
    usd_per_hour,
    window_tco_usd,
)
from trnplan.numbers import cents


@dataclass(frozen=True)
class PeriodFigures:
    """One period: its view of the catalog, what is installed (evaluated), what is bought, and its money."""

    period: Period
    catalog: Catalog
    scenario: Scenario
    evaluation: Evaluation
    bought: list[BomLine]
    capex_bought_usd: float
    capex_installed_usd: float
    opex_usd_per_year: float


@dataclass(frozen=True)
class WindowEvaluation:
    """A plan's figures: its periods (one for a scenario without periods), the window's totals, and what is
    bought (a phased plan's purchase schedule; otherwise its BOM). `phased` when the scenario has periods,
    so its plan states them (`trnplan-plan/2`)."""

    periods: list[PeriodFigures]
    totals: Totals
    bom: list[BomLine] = field(default_factory=list)
    phased: bool = False

    @property
    def last(self) -> Evaluation:
        return self.periods[-1].evaluation

    @property
    def sites(self) -> dict[str, SiteFigures]:
        """What is installed at the end of the window, site by site."""
        return self.last.sites

    @property
    def supply_used(self) -> dict[str, int]:
        return self.last.supply_used


LineKey = tuple[str, str, str, float]


def period_view(catalog: Catalog, scenario_id: str, period: Period) -> tuple[Catalog, Scenario]:
    """The catalog and scenario one period sees: a scenario without periods as it is (its schedules read at
    its `as_of`); a period of a phased one at its start, with its demand and its start as `as_of`."""
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is None:
        view = single_view(catalog, scenario_id)
    else:
        view = catalog_at(catalog, scenario_id, period.start, scenario_at(scenario, period))
    return view, view.scenarios[scenario_id]


def _previous(line: BomLine, before: dict[LineKey, BomLine]) -> tuple[BomLine | None, bool]:
    """The line of the period before that `line` grows, and whether its price changed since (a chip or
    switch priced by a schedule): the same line at the same price, else the one line of that site,
    category and item at another price."""
    same = before.get((line.site, line.category, line.item, line.unit_usd))
    if same is not None:
        return same, False
    other = [p for k, p in before.items() if k[:3] == (line.site, line.category, line.item)]
    return (other[0], True) if len(other) == 1 else (None, False)


def _bought(tag: str | None, installed: list[BomLine], before: dict[LineKey, BomLine]) -> list[BomLine]:
    """The lines bought in a period (tagged with its start in a phased plan): each installed line's growth
    over the period before, priced at this period's price: the growth of the installed line's cents while
    its price holds (so a site's purchases sum to its capex), quantity x the new price when it changed."""
    lines = []
    for line in installed:
        prev, repriced = _previous(line, before)
        quantity = round(line.quantity - (prev.quantity if prev else 0.0), 6)
        if quantity <= 0:
            continue
        it_kw = None
        if line.it_kw is not None:
            it_kw = round(line.it_kw - (prev.it_kw or 0.0 if prev else 0.0), 6)
        if repriced:
            extended = cents(quantity * line.unit_usd) / 100
        else:
            extended = (cents(line.extended_usd) - (cents(prev.extended_usd) if prev else 0)) / 100
        lines.append(
            line.model_copy(
                update={"period": tag, "quantity": quantity, "extended_usd": extended, "it_kw": it_kw}
            )
        )
    return lines


def _at_prices_paid(
    scenario: Scenario, ev: Evaluation, bought: list[BomLine], paid: dict[tuple[str, str], tuple[int, float]]
) -> Evaluation:
    """A period's installed base at the prices it was bought at (prices that follow schedules): each
    deployment's capex is what its units cost when bought (`paid`, updated: (site, option) -> USD), a site's
    capex the sum of its purchases so far (`bought`: every line bought up to this period), its fabric the
    rest, and its residual that of those purchases."""
    site_cents: dict[str, int] = {}
    lives: dict[str, list[tuple[float | None, float]]] = {}
    for line in bought:
        site_cents[line.site] = site_cents.get(line.site, 0) + cents(line.extended_usd)
        if line.life_years is not None:
            lives.setdefault(line.site, []).append((line.life_years, line.extended_usd))
    sites: dict[str, SiteFigures] = {}
    for site_id, fig in ev.sites.items():
        deployments = []
        for dep in fig.deployments:
            d = dep.deployment
            key = (site_id, f"{d.form}/{d.cooling}/{d.scale_up_switch}")
            had_units, had_usd = paid.get(key, (0, 0.0))
            new_units = dep.deployment.units - had_units
            usd = round(had_usd + cents(dep.capex_usd / dep.deployment.units * new_units) / 100, 2)
            paid[key] = (dep.deployment.units, usd)
            deployments.append(replace(dep, capex_usd=usd))
        capex = site_cents.get(site_id, 0) / 100
        residual = residual_usd_per_year(scenario, lives.get(site_id, []))
        figures = {**fig.opex_figures, "residual_usd_per_year": residual}
        sites[site_id] = replace(
            fig,
            deployments=deployments,
            capex_usd=capex,
            fabric_capex_usd=max(0.0, round(capex - sum(d.capex_usd for d in deployments), 2)),
            opex_figures=figures,
            opex_usd_per_year=opex_usd_per_year(scenario, figures.values(), capex),
        )
    residual = sum(s.opex_figure("residual_usd_per_year") for s in sites.values())
    totals = ev.totals.model_copy(update={"residual_usd_per_year": residual or None})
    return replace(ev, sites=sites, totals=totals)


def evaluate_decisions(catalog: Catalog, scenario_id: str, decisions: Decisions) -> WindowEvaluation:
    """Every figure of a plan from what each period has installed and each site's scale-out switch (the
    decisions themselves for a scenario without periods)."""
    scenario = catalog.scenarios[scenario_id]
    phased = scenario.periods is not None
    installs = decisions.periods if phased else (decisions,)
    periods: list[PeriodFigures] = []
    before: dict[LineKey, BomLine] = {}
    installed_cents = 0
    so_far: list[BomLine] = []
    paid: dict[tuple[str, str], tuple[int, float]] = {}
    priced = phased and price_schedules(catalog)
    for period, dec in zip(periods_of(scenario), installs, strict=True):
        view, at = period_view(catalog, scenario_id, period)
        ev = evaluate(view, at, dec.deployments, dict(dec.scale_out))
        bought = _bought(period.start if phased else None, ev.bom, before)
        so_far += bought
        if priced:
            ev = _at_prices_paid(at, ev, so_far, paid)
        bought_cents = sum(cents(line.extended_usd) for line in bought)
        installed_cents += bought_cents
        installed = installed_cents / 100
        opex = opex_usd_per_year(scenario, (ev.totals.figure(name) for name in OPEX_FIGURES), installed)
        periods.append(PeriodFigures(period, view, at, ev, bought, bought_cents / 100, installed, opex))
        before = {(line.site, line.category, line.item, line.unit_usd): line for line in ev.bom}
    bom = [line for p in periods for line in p.bought]
    return WindowEvaluation(periods, _window_totals(scenario, periods, phased), bom, phased)


def _window_totals(scenario: Scenario, periods: list[PeriodFigures], phased: bool) -> Totals:
    """The last period's installed figures, with the window's capex (all bought), TCO and per-hour costs;
    a phased plan also states its PFLOP-years."""
    last = periods[-1]
    tco = window_tco_usd(
        scenario, [(p.period.years, p.capex_installed_usd, p.opex_usd_per_year) for p in periods]
    )

    def per_hour(name: str) -> float:
        return usd_per_hour(tco, [(p.period.years, p.evaluation.totals.figure(name)) for p in periods])

    def years_of(name: str) -> float:
        return sum(p.period.years * p.evaluation.totals.figure(name) for p in periods)

    update: dict[str, float | None] = {
        "capex_usd": last.capex_installed_usd,
        "opex_usd_per_year": last.opex_usd_per_year,
        "maintenance_usd_per_year": maintenance_usd_per_year(scenario, last.capex_installed_usd),
        "tco_usd": tco,
        "usd_per_pflop_hour": per_hour("fp8_pflops"),
        "usd_per_chip_hour": per_hour("chips"),
    }
    workload = scenario.workload is not None
    if workload:
        update["usd_per_effective_pflop_hour"] = per_hour("effective_fp8_pflops")
    if phased:
        update["fp8_pflop_years"] = years_of("fp8_pflops")
        if workload:
            update["effective_fp8_pflop_years"] = years_of("effective_fp8_pflops")
    return last.evaluation.totals.model_copy(update=update)
