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

from dataclasses import dataclass, field

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import Period, catalog_at, periods_of, scenario_at, single_view
from trnplan.costs.decisions import Decisions
from trnplan.costs.evaluate import Evaluation, SiteFigures, evaluate
from trnplan.costs.figures import BomLine, Totals
from trnplan.costs.rates import (
    OPEX_FIGURES,
    maintenance_usd_per_year,
    opex_usd_per_year,
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


def _bought(tag: str | None, installed: list[BomLine], before: dict[LineKey, BomLine]) -> list[BomLine]:
    """The lines bought in a period (tagged with its start in a phased plan): each installed line's growth
    over the period before, priced."""
    lines = []
    for line in installed:
        prev = before.get((line.site, line.category, line.item, line.unit_usd))
        quantity = round(line.quantity - (prev.quantity if prev else 0.0), 6)
        if quantity <= 0:
            continue
        it_kw = None
        if line.it_kw is not None:
            it_kw = round(line.it_kw - (prev.it_kw or 0.0 if prev else 0.0), 6)
        lines.append(
            line.model_copy(
                update={
                    "period": tag,
                    "quantity": quantity,
                    # the growth of the installed line's cents, so a site's purchases sum to its capex
                    "extended_usd": (cents(line.extended_usd) - (cents(prev.extended_usd) if prev else 0))
                    / 100,
                    "it_kw": it_kw,
                }
            )
        )
    return lines


def evaluate_decisions(catalog: Catalog, scenario_id: str, decisions: Decisions) -> WindowEvaluation:
    """Every figure of a plan from what each period has installed and each site's scale-out switch (the
    decisions themselves for a scenario without periods)."""
    scenario = catalog.scenarios[scenario_id]
    phased = scenario.periods is not None
    installs = decisions.periods if phased else (decisions,)
    periods: list[PeriodFigures] = []
    before: dict[LineKey, BomLine] = {}
    installed_cents = 0
    for period, dec in zip(periods_of(scenario), installs, strict=True):
        view, at = period_view(catalog, scenario_id, period)
        ev = evaluate(view, at, dec.deployments, dict(dec.scale_out))
        bought = _bought(period.start if phased else None, ev.bom, before)
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
