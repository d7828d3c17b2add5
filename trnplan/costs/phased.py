"""Evaluate a phased plan's decisions (design.md, "Phased plans"): each period's installed base through the
single-period cost model at that period's figures, the purchase schedule, and the window's money.

Bought in period p = installed in p minus installed in p-1, line by line of the BOM (switches, optics and
network racks bought are the fabric's growth; a one-off fit-out falls in the period its cooling first
serves kW). A purchase line's price is the growth of its installed line's price (each to the cent), so the
schedule sums to the installed capex, site by site, exactly. With C_p the
capex bought up to p (the installed capex), L_p and W_p a period's length and what is left of the window:
  TCO = sum_p [ bought_p W_p (CRF + m) + L_p (energy_p + colocation_p) ]
      = sum_p L_p [ C_p CRF + opex_p ],  opex_p = energy_p + colocation_p + m C_p.
$/PFLOP-hour divides by PFLOP-hours over the window: sum_p L_p x installed PFLOPs_p x 8760.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trnplan.catalog import HOURS_PER_YEAR, Catalog, Scenario
from trnplan.catalog.periods import Period, catalog_at, periods_of, scenario_at, single_view
from trnplan.costs.decisions import Decisions
from trnplan.costs.evaluate import Evaluation, SiteFigures, evaluate
from trnplan.costs.figures import BomLine, Totals
from trnplan.costs.rates import crf
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
class PhasedEvaluation:
    """A phased plan's figures: the periods, the window's totals, and the purchase schedule."""

    periods: list[PeriodFigures]
    totals: Totals
    bom: list[BomLine] = field(default_factory=list)

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


def _bought(period: Period, installed: list[BomLine], before: dict[LineKey, BomLine]) -> list[BomLine]:
    """The lines bought in a period: each installed line's growth over the period before, priced."""
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
                    "period": period.start,
                    "quantity": quantity,
                    # the growth of the installed line's cents, so a site's purchases sum to its capex
                    "extended_usd": (cents(line.extended_usd) - (cents(prev.extended_usd) if prev else 0))
                    / 100,
                    "it_kw": it_kw,
                }
            )
        )
    return lines


def evaluate_phased(catalog: Catalog, scenario_id: str, decisions: Decisions) -> PhasedEvaluation:
    """Every figure of a phased plan from each period's installed deployments and scale-out switches."""
    scenario = catalog.scenarios[scenario_id]
    factor = crf(scenario.cost_of_capital, scenario.horizon_years)
    periods: list[PeriodFigures] = []
    before: dict[LineKey, BomLine] = {}
    installed_cents = 0
    for period, dec in zip(periods_of(scenario), decisions.periods, strict=True):
        view = catalog_at(catalog, scenario_id, period.start, scenario_at(scenario, period))
        at = view.scenarios[scenario_id]
        ev = evaluate(view, at, dec.deployments, dict(dec.scale_out))
        bought = _bought(period, ev.bom, before)
        bought_cents = sum(cents(line.extended_usd) for line in bought)
        installed_cents += bought_cents
        installed = installed_cents / 100
        energy_colo = ev.totals.figure("energy_usd_per_year") + ev.totals.figure("colocation_usd_per_year")
        opex = energy_colo + installed * scenario.maintenance_rate
        periods.append(PeriodFigures(period, view, at, ev, bought, bought_cents / 100, installed, opex))
        before = {(line.site, line.category, line.item, line.unit_usd): line for line in ev.bom}
    tco = sum(p.period.years * (p.capex_installed_usd * factor + p.opex_usd_per_year) for p in periods)
    bom = [line for p in periods for line in p.bought]
    return PhasedEvaluation(periods, _window_totals(scenario, periods, tco), bom)


def _window_totals(scenario: Scenario, periods: list[PeriodFigures], tco: float) -> Totals:
    """The last period's installed figures, with the window's capex (all bought), TCO and per-hour costs."""
    last = periods[-1]
    pflop_years = sum(p.period.years * p.evaluation.totals.fp8_pflops for p in periods)
    chip_years = sum(p.period.years * p.evaluation.totals.chips for p in periods)
    energy = last.evaluation.totals.figure("energy_usd_per_year")
    colocation = last.evaluation.totals.figure("colocation_usd_per_year")
    maintenance = last.capex_installed_usd * scenario.maintenance_rate
    update: dict[str, float | None] = {
        "capex_usd": last.capex_installed_usd,
        "opex_usd_per_year": last.opex_usd_per_year,
        "energy_usd_per_year": energy,
        "colocation_usd_per_year": colocation,
        "maintenance_usd_per_year": maintenance,
        "tco_usd": tco,
        "usd_per_pflop_hour": tco / (pflop_years * HOURS_PER_YEAR) if pflop_years else 0.0,
        "usd_per_chip_hour": tco / (chip_years * HOURS_PER_YEAR) if chip_years else 0.0,
        "fp8_pflop_years": pflop_years,
    }
    if scenario.workload is not None:
        effective_years = sum(
            p.period.years * p.evaluation.totals.figure("effective_fp8_pflops") for p in periods
        )
        update["effective_fp8_pflop_years"] = effective_years
        update["usd_per_effective_pflop_hour"] = (
            tco / (effective_years * HOURS_PER_YEAR) if effective_years else 0.0
        )
    return last.evaluation.totals.model_copy(update=update)


def evaluate_decisions(
    catalog: Catalog, scenario_id: str, decisions: Decisions
) -> Evaluation | PhasedEvaluation:
    """The evaluation of a scenario's decisions: phased when they hold periods."""
    if decisions.periods:
        return evaluate_phased(catalog, scenario_id, decisions)
    view = single_view(catalog, scenario_id)
    return evaluate(view, view.scenarios[scenario_id], decisions.deployments, dict(decisions.scale_out))
