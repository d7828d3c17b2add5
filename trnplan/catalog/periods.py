"""The periods of a phased scenario (design.md, "Phased plans"): their rules, their lengths, and the
single-period view of the catalog at a month that the cost model, the options and the limits read.

A period starts at its month and lasts to the next start; the last lasts to the window's end,
`horizon_years` after the first start. `years` is L_p, `remaining_years` W_p = L_p + ... + L_last: what is
left of the window when the period starts, over which a purchase made in it is charged."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.months import month_index as month_index  # re-exported
from trnplan.catalog.months import window_end
from trnplan.catalog.scenario import Demand


@dataclass(frozen=True)
class Period:
    index: int
    start: str
    years: float  # L_p
    remaining_years: float  # W_p

    @property
    def tag(self) -> str:
        return f"p{self.index}"


def periods_of(scenario: Scenario) -> list[Period]:
    """The scenario's periods with their lengths; one period of the whole horizon without `periods`."""
    if scenario.periods is None:
        years = float(scenario.horizon_years)
        return [Period(0, scenario.as_of or "", years, years)]
    starts = list(scenario.periods)
    ends = starts[1:] + [window_end(starts[0], scenario.horizon_years)]
    lengths = [(month_index(b) - month_index(a)) / 12 for a, b in zip(starts, ends, strict=True)]
    return [Period(i, start, lengths[i], sum(lengths[i:])) for i, start in enumerate(starts)]


def demand_in(scenario: Scenario, period: Period) -> Demand:
    """The demand in effect in a period: the latest entry at or before its start (none before the first)."""
    if not scenario.demand_by_month:
        return scenario.demand
    found = Demand()
    for month, demand in sorted(scenario.demand_by_month.items()):
        if month <= period.start:
            found = demand
    return found


def scenario_at(scenario: Scenario, period: Period) -> Scenario:
    """The single-period scenario of one period: its start as `as_of`, its demand."""
    return scenario.model_copy(
        update={
            "as_of": period.start,
            "periods": None,
            "demand": demand_in(scenario, period),
            "demand_by_month": {},
        }
    )


def catalog_at(
    catalog: Catalog, scenario_id: str, month: str | None, scenario: Scenario | None = None
) -> Catalog:
    """The catalog with the scenario's sites, and the chips' and switches' prices, read at `month` (their
    schedules' last entries when None) and, when given, `scenario` in place of the scenario."""
    current = catalog.scenarios[scenario_id]
    sites = dict(catalog.sites)
    for site_id in current.sites:
        if site_id in sites:
            sites[site_id] = sites[site_id].at(month)
    scenarios = catalog.scenarios if scenario is None else {**catalog.scenarios, scenario_id: scenario}
    chips = {k: c.at(month) for k, c in catalog.chips.items()} if price_schedules(catalog) else catalog.chips
    switches = catalog.switches
    if price_schedules(catalog):
        switches = {k: s.at(month) for k, s in catalog.switches.items()}
    return dataclasses.replace(catalog, sites=sites, scenarios=scenarios, chips=chips, switches=switches)


def price_schedules(catalog: Catalog) -> bool:
    """Whether any chip or switch of the catalog is priced by a step schedule."""
    chips = any(c.schedules for c in catalog.chips.values())
    return chips or any(s.schedules for s in catalog.switches.values())


def single_view(catalog: Catalog, scenario_id: str) -> Catalog:
    """A single-period scenario's catalog: site schedules read at its `as_of` (no copy when none is)."""
    scenario = catalog.scenarios[scenario_id]
    if not price_schedules(catalog) and not any(
        catalog.sites[s].schedules for s in scenario.sites if s in catalog.sites
    ):
        return catalog
    return catalog_at(catalog, scenario_id, scenario.as_of)


def shared_view(catalog: Catalog, scenario_id: str, shared: int) -> Catalog:
    """The catalog with the scenario cut to its shared periods (the last one held to the window's end):
    what the plan across futures commits to whatever happens."""
    scenario = catalog.scenarios[scenario_id]
    assert scenario.periods is not None
    starts = scenario.periods[:shared]
    by_month = {m: d for m, d in scenario.demand_by_month.items() if m <= starts[-1]}
    update: dict[str, Any] = {"periods": starts, "demand_by_month": by_month}
    if by_month:
        update["demand"] = by_month[max(by_month)]
    cut = scenario.model_copy(update=update)
    return dataclasses.replace(catalog, scenarios={**catalog.scenarios, scenario_id: cut})
