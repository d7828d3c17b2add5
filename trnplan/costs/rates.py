"""Money rates of the cost model: the capital recovery factor, TCO per USD of capex, opex per IT kW-year,
and the scenario's objective of a plan."""

from __future__ import annotations

from trnplan.catalog import HOURS_PER_YEAR, Scenario, Site
from trnplan.costs.figures import Totals


def crf(rate: float, years: int) -> float:
    """Capital recovery factor r(1+r)^n / ((1+r)^n - 1); 1/n when r = 0."""
    if rate == 0:
        return 1.0 / years
    growth = (1 + rate) ** years
    return rate * growth / (growth - 1)


def tco_per_capex_usd(scenario: Scenario) -> float:
    """TCO per USD of capex: horizon x (CRF + maintenance_rate)."""
    return scenario.horizon_years * (
        crf(scenario.cost_of_capital, scenario.horizon_years) + scenario.maintenance_rate
    )


def energy_usd_per_kw_year(site: Site, pue: float, scenario: Scenario) -> float:
    """Energy per IT kW-year: utilization x PUE x 8760 x $/kWh."""
    return scenario.utilization * pue * HOURS_PER_YEAR * site.electricity_usd_per_kwh


def colocation_usd_per_kw_year(site: Site) -> float:
    """Colocation per IT kW-year: $/kW-month x 12; none at an owned site (its hall's build is capex)."""
    if site.ownership == "owned":
        return 0.0
    return site.colocation_usd_per_kw_month * 12


def opex_usd_per_kw_year(site: Site, pue: float, scenario: Scenario) -> float:
    """Energy plus colocation per IT kW-year (maintenance is a share of capex, not per kW)."""
    return energy_usd_per_kw_year(site, pue, scenario) + colocation_usd_per_kw_year(site)


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
