"""Money of the cost model, each formula once: the capital recovery factor, what a USD of capex costs a
year and over the window left, energy, colocation and maintenance per year, the TCO over a window of one or
many periods, the per-hour figures, and the scenario's objective of a plan.

A scenario without periods is one period of its whole horizon (L = W = horizon_years), so the same formulas
give its TCO: horizon x (capex x CRF + opex)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Protocol

from trnplan.catalog import HOURS_PER_YEAR, Scenario, Site
from trnplan.costs.figures import Totals


class MoneyTerms(Protocol):
    """The money terms a TCO needs: a scenario's, or a plan's `economics` (which states them)."""

    @property
    def horizon_years(self) -> float: ...
    @property
    def cost_of_capital(self) -> float: ...
    @property
    def maintenance_rate(self) -> float: ...


TINY_RATE = 1e-12
"""Below this cost of capital the CRF is its series 1/n + r(n+1)/(2n), whose error (~r^2 n) no float holds."""
SMALL_RATE = 1e-3
"""Below this (and from TINY_RATE) (1+r)^n - 1 would lose digits to cancellation: it is expm1(n log1p(r))."""


def crf(rate: float, years: float) -> float:
    """Capital recovery factor r(1+r)^n / ((1+r)^n - 1), stable as r -> 0 (its limit, 1/n, at r = 0): at
    a rate under TINY_RATE (1e-17, 5e-324, where 1 + r is 1) its series 1/n + r(n+1)/(2n); under
    SMALL_RATE r / (1 - (1+r)^-n) with expm1 and log1p; else the formula as written."""
    if abs(rate) < TINY_RATE:
        return (1.0 + rate * (years + 1) / 2) / years
    if abs(rate) < SMALL_RATE:
        return rate / -math.expm1(-years * math.log1p(rate))
    growth: float = (1 + rate) ** years
    return rate * growth / (growth - 1)


def window_crf(terms: MoneyTerms) -> float:
    """The CRF of the window: over `horizon_years` at `cost_of_capital`."""
    return crf(terms.cost_of_capital, terms.horizon_years)


def capex_usd_per_year(terms: MoneyTerms) -> float:
    """What a USD of installed capex costs a year: CRF + maintenance_rate."""
    return window_crf(terms) + terms.maintenance_rate


def tco_per_capex_usd(terms: MoneyTerms, years_left: float | None = None) -> float:
    """TCO per USD of capex bought with `years_left` of the window to run (the whole horizon by default):
    its annuity for the rest of the window, years_left x (CRF + maintenance_rate)."""
    years = terms.horizon_years if years_left is None else years_left
    return years * capex_usd_per_year(terms)


def maintenance_usd_per_year(terms: MoneyTerms, capex_usd: float) -> float:
    """Maintenance per year: capex x maintenance_rate."""
    return capex_usd * terms.maintenance_rate


OPEX_FIGURES: dict[str, bool] = {
    "energy_usd_per_year": True,
    "colocation_usd_per_year": True,
    "residual_usd_per_year": False,
}
"""Every opex category besides maintenance, by the name of its USD per year in a plan's totals and site
sections, in the order opex adds them; each with whether a plan states it at 0 (a category added later is
left out at 0, so the plans of specs without it keep their bytes). Only this module computes them."""


def life_usd_per_year(terms: MoneyTerms, life_years: float | None) -> float:
    """What a USD of capex with its own life costs a year beyond the window's CRF: crf(r, life) - CRF.
    Negative for a life past the window (a hall of 15 years in a 5-year plan: the value it keeps past the
    window, a credit each year); positive for a shorter one (replaced in kind); 0 without a life of its own
    (annuitised over the horizon, the first version's model). So each such USD is charged, per year of the
    window it serves, crf(r, life) + maintenance_rate: a 15-year hall in a 5-year window pays 5 years of
    its 15-year annuity."""
    if life_years is None:
        return 0.0
    return crf(terms.cost_of_capital, life_years) - window_crf(terms)


def residual_usd_per_year(terms: MoneyTerms, capex_by_life: Iterable[tuple[float | None, float]]) -> float:
    """The residual category per year of capex with lives of its own, from (life_years, USD) pairs:
    sum of USD x life_usd_per_year(life) (negative: a credit for what outlives the window)."""
    return sum(usd * life_usd_per_year(terms, life) for life, usd in capex_by_life)


def opex_words() -> str:
    """The opex categories besides maintenance, in words: "energy + colocation"."""
    return " + ".join(name.removesuffix("_usd_per_year") for name in OPEX_FIGURES)


def stated_opex(amounts: Mapping[str, float]) -> dict[str, float]:
    """The opex categories a plan states of `amounts` (name -> USD per year): all but an optional one at 0."""
    return {name: amount for name, amount in amounts.items() if amount or OPEX_FIGURES[name]}


def opex_usd_per_year(terms: MoneyTerms, amounts: Iterable[float], capex_usd: float) -> float:
    """Opex per year on an installed base: its opex categories' amounts (energy + colocation, in the order
    of OPEX_FIGURES) + maintenance."""
    return sum(amounts) + maintenance_usd_per_year(terms, capex_usd)


def window_tco_usd(terms: MoneyTerms, periods: Iterable[tuple[float, float, float]]) -> float:
    """TCO over the window from each period's (years L_p, installed capex C_p, opex per year):
    sum over p of L_p (C_p x CRF + opex_p). Charging each purchase its annuity for the window left is the
    same sum (design.md, "Phased plans"); with one period of the horizon, horizon x (capex x CRF + opex)."""
    factor = window_crf(terms)
    return sum(years * (capex * factor + opex) for years, capex, opex in periods)


def usd_per_hour(tco_usd: float, amounts: Iterable[tuple[float, float]]) -> float:
    """TCO per unit-hour from each period's (years, amount installed): tco / sum of amount x 8760 x years;
    0 when nothing is installed."""
    hours = sum(amount * (HOURS_PER_YEAR * years) for years, amount in amounts)
    return tco_usd / hours if hours else 0.0


def energy_usd_per_kw_year(site: Site, pue: float, scenario: Scenario) -> float:
    """Energy per IT kW-year: utilization x PUE x 8760 x $/kWh."""
    return scenario.utilization * pue * HOURS_PER_YEAR * site.electricity_usd_per_kwh


AIR = "air"
"""The cooling type a leased hall's base rent covers; kW of any other type pays its liquid premium too."""


def colocation_usd_per_kw_year(site: Site, cooling_id: str = AIR) -> float:
    """Rent per IT kW-year of a cooling type: ($/kW-month + the liquid premium on kW not cooled by air) x 12;
    none at an owned site (its hall's build is capex)."""
    if site.owned:
        return 0.0
    premium = site.liquid_premium_usd_per_kw_month if cooling_id != AIR else 0.0
    return (site.rent_usd_per_kw_month + premium) * 12


def opex_usd_per_kw_year(site: Site, pue: float, scenario: Scenario, cooling_id: str = AIR) -> float:
    """Every opex category charged per IT kW-year of a cooling type: energy + colocation; maintenance is a
    share of capex, and the residual one of capex with a life of its own, not per kW."""
    return energy_usd_per_kw_year(site, pue, scenario) + colocation_usd_per_kw_year(site, cooling_id)


def site_opex_usd_per_year(
    site: Site, scenario: Scenario, kw_pue: Iterable[tuple[float, float, str]], residual: float = 0.0
) -> dict[str, float]:
    """A site's opex categories per year, by OPEX_FIGURES name, from its IT kW, PUE and cooling type by
    cooling: energy = sum of kW x its energy per kW-year; colocation = sum of kW x its rent per kW-year;
    the residual of its capex with lives of their own (`residual_usd_per_year`)."""
    pairs = list(kw_pue)
    energy = sum(kw * energy_usd_per_kw_year(site, pue, scenario) for kw, pue, _ in pairs)
    rent = sum(kw * colocation_usd_per_kw_year(site, q) for kw, _, q in pairs)
    return {"energy_usd_per_year": energy, "colocation_usd_per_year": rent, "residual_usd_per_year": residual}


def perf_of(totals: Totals) -> float:
    """The performance a plan's objective counts: effective FP8 PFLOPs when the scenario names a workload
    (the totals then state them), else peak dense FP8 PFLOPs; a phased plan counts PFLOP-years."""
    if totals.fp8_pflop_years is not None:
        years = totals.effective_fp8_pflop_years
        return float(totals.fp8_pflop_years if years is None else years)
    effective = totals.effective_fp8_pflops
    return float(totals.fp8_pflops if effective is None else effective)


def objective_value(kind: str, totals: Totals) -> float:
    """The scenario's objective of a plan: TCO (USD), FP8 PFLOPs, or FP8 PFLOPs per million USD of TCO
    (effective FP8 PFLOPs under a workload)."""
    if kind == "min_tco":
        return float(totals.tco_usd)
    if kind == "max_perf":
        return perf_of(totals)
    return perf_of(totals) / float(totals.tco_usd) * 1e6


OBJECTIVE_UNITS = {
    "min_tco": "USD",
    "max_perf": "FP8 PFLOPs",
    "max_perf_per_tco": "FP8 PFLOPs per million USD TCO",
}
WORKLOAD_OBJECTIVE_UNITS = {
    "min_tco": "USD",
    "max_perf": "effective FP8 PFLOPs",
    "max_perf_per_tco": "effective FP8 PFLOPs per million USD TCO",
}


def objective_unit(kind: str, totals: Totals) -> str:
    """The unit of a plan's objective: in effective FP8 PFLOPs when its totals state them (a workload);
    PFLOP-years in a phased plan."""
    units = OBJECTIVE_UNITS if totals.effective_fp8_pflops is None else WORKLOAD_OBJECTIVE_UNITS
    unit = units[kind]
    return unit.replace("PFLOPs", "PFLOP-years") if totals.fp8_pflop_years is not None else unit
