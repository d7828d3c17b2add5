"""Scenarios: demand, budgets, the fabric's cooling, and the periods of a phased plan (the periods' rules
live in `trnplan.catalog.periods`)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, PrivateAttr, Tag, model_validator

from trnplan.catalog.base import EXTENSION, Id, Month, Plausible, Spec, Text, _slips
from trnplan.catalog.months import month_index, window_end
from trnplan.catalog.provenance import Provenance

DemandChips = Annotated[int, Plausible(1, 100_000_000, "chips")]
DemandPflops = Annotated[
    float, Plausible(0.001, 1e9, "PFLOPS", _slips({1e-3: "TFLOPS typed into a PFLOPS field"}))
]
DemandTb = Annotated[float, Plausible(0.001, 1e9, "TB", _slips({1e-3: "GB typed into a TB field"}))]
DEMAND_KEYS = ("chips", "fp8_pflops", "hbm_tb")


class DemandCap(Spec):
    """The most a plan may hold (an extension of `demand`): a ratio objective, or a cheap chip, cannot then
    buy far more than the need. Any of chips, fp8_pflops, hbm_tb; all given must hold."""

    chips: DemandChips | None = None
    fp8_pflops: DemandPflops | None = None
    hbm_tb: DemandTb | None = None


class Demand(Spec):
    chips: DemandChips | None = None
    fp8_pflops: DemandPflops | None = None
    hbm_tb: DemandTb | None = None
    effective_fp8_pflops: DemandPflops | None = None  # delivered under the scenario's workload
    at_most: DemandCap | None = None

    @property
    def empty(self) -> bool:
        """No lower bound is given (`at_most` caps a plan; it demands nothing)."""
        return (
            self.chips is None
            and self.fp8_pflops is None
            and self.hbm_tb is None
            and self.effective_fp8_pflops is None
        )

    def cap(self, key: str) -> float | None:
        """The `at_most` cap on chips, fp8_pflops or hbm_tb; None when there is none."""
        return None if self.at_most is None else getattr(self.at_most, key)

    @model_validator(mode="after")
    def _cap_above_need(self) -> Demand:
        for key in DEMAND_KEYS:
            need, cap = getattr(self, key), self.cap(key)
            if need is not None and cap is not None and cap < need:
                raise ValueError(f"at_most.{key} {cap:g} is below the demand's {key} {need:g}")
        return self


RAMP_KEYS = ("chips", "fp8_pflops", "hbm_tb", "effective_fp8_pflops")


class DemandRamp(Spec):
    """Demand that ramps from one figure to another over the periods from `from` to `to` (both period
    starts), `step: linear`: at a period starting t months after `from`, of the m from `from` to `to`,
    the demand is a + (b - a) x t / m, computed exactly and rounded up: to a whole chip, to 0.001 PFLOPS or
    TB. Periods after `to` keep b; periods before `from` have no demand. Each figure is [a, b]."""

    start: Month = Field(alias="from")
    to: Month
    step: Literal["linear"] = "linear"
    chips: Annotated[list[DemandChips], Field(min_length=2, max_length=2)] | None = None
    fp8_pflops: Annotated[list[DemandPflops], Field(min_length=2, max_length=2)] | None = None
    hbm_tb: Annotated[list[DemandTb], Field(min_length=2, max_length=2)] | None = None
    effective_fp8_pflops: Annotated[list[DemandPflops], Field(min_length=2, max_length=2)] | None = None

    @model_validator(mode="after")
    def _ramps(self) -> DemandRamp:
        if self.to <= self.start:
            raise ValueError(f"to {self.to} must come after from {self.start}")
        if all(getattr(self, key) is None for key in RAMP_KEYS):
            raise ValueError(f"a ramp needs a figure to ramp: any of {', '.join(RAMP_KEYS)}, as [from, to]")
        return self

    def at(self, month: str) -> Demand | None:
        """The demand of a period starting in `month`; None before `from`."""
        if month < self.start:
            return None
        span = month_index(self.to) - month_index(self.start)
        t = Fraction(min(month_index(month), month_index(self.to)) - month_index(self.start), span)
        figures: dict[str, Any] = {}
        for key in RAMP_KEYS:
            ends = getattr(self, key)
            if ends is None:
                continue
            a, b = (Fraction(str(end)) for end in ends)
            exact = a + (b - a) * t
            figures[key] = math.ceil(exact) if key == "chips" else math.ceil(exact * 1000) / 1000
        return Demand(**figures)

    def by_month(self, periods: list[str]) -> dict[str, Demand]:
        """The ramp as demand by month: an entry at each period start from `from` to `to`."""
        return {p: d for p in periods if p <= self.to and (d := self.at(p)) is not None}

    def ends(self) -> list[Demand]:
        """The demand at `from` and at `to` (what whole-scenario checks read)."""
        return [d for d in (self.at(self.start), self.at(self.to)) if d is not None]


def _demand_tag(value: Any) -> str:
    """A mapping whose keys start with a digit is demand by month; one with `from` a ramp; anything else
    is one demand."""
    if isinstance(value, dict) and value and all(str(k)[:1].isdigit() for k in value):
        return "@by_month"
    if isinstance(value, dict) and ("from" in value or "to" in value or "step" in value):
        return "@ramp"
    return "@demand"


DemandSpec = Annotated[
    Union[  # noqa: UP007 - tagged arms
        Annotated[Demand, Tag("@demand")],
        Annotated[dict[Month, Demand], Field(min_length=1), Tag("@by_month")],
        Annotated[DemandRamp, Tag("@ramp")],
    ],
    Discriminator(_demand_tag),
]


class Budget(Spec):
    capex_usd: Annotated[float, Plausible(1, 1e13, "USD")] | None = None
    tco_usd: Annotated[float, Plausible(1, 1e13, "USD")] | None = None


class Fabric(Spec):
    cooling: Id = "air"
    # Down:up ports of the first tier (1: non-blocking); tiers above it are non-blocking among themselves.
    oversubscription: Annotated[float, Plausible(1, 64, "(ratio)")] = 1.0
    rack_usd: Annotated[float, Plausible(0, 1e6, "USD per network rack")] = 0.0  # rack, PDUs, trays


def period_problem(spec: ScenarioSpec) -> str | None:
    """What is wrong with a scenario's periods and demand by month, in words (None when nothing is)."""
    by_month = spec.demand if isinstance(spec.demand, dict) else None
    if spec.periods is None:
        if spec.decide is not None:
            return "decide needs periods (it names the last period whose purchases every future shares)"
        if by_month is not None:
            return "demand by month needs periods (the start month of each period); or give one demand"
        if isinstance(spec.demand, DemandRamp):
            return "demand as a ramp needs periods (the start month of each period); or give one demand"
        return None
    if spec.as_of is not None:
        return "as_of is not allowed with periods: each period's start is its as_of"
    for before, after in zip(spec.periods, spec.periods[1:], strict=False):
        if after <= before:
            return f"periods must increase: {before} is followed by {after}"
    end = window_end(spec.periods[0], spec.horizon_years)
    if spec.periods[-1] >= end:
        return (
            f"periods end after the window: {spec.periods[-1]} starts after it ends ({end}: horizon_years "
            f"{spec.horizon_years} from {spec.periods[0]})"
        )
    if spec.decide is not None and spec.decide not in spec.periods:
        return f"decide {spec.decide} is not a period start (periods: {', '.join(spec.periods)})"
    for month in sorted(by_month or {}):
        if month not in spec.periods:
            return f"demand month {month} is not a period start (periods: {', '.join(spec.periods)})"
    if isinstance(spec.demand, DemandRamp):
        for name, month in (("from", spec.demand.start), ("to", spec.demand.to)):
            if month not in spec.periods:
                starts = ", ".join(spec.periods)
                return f"demand ramp {name} {month} is not a period start (periods: {starts})"
    return None


class ScenarioSpec(Provenance):
    """A scenario as a spec file writes it; with `periods`, `demand` maps a period's start month to the
    demand from then on."""

    description: Text | None = None
    sites: list[Id] = Field(min_length=1)
    chips: list[Id] | None = None
    forms: list[Id] | None = None
    demand: DemandSpec = Demand()
    min_domain_chips: Annotated[int, Plausible(1, 1_000_000, "chips")] = 1
    as_of: Month | None = None
    periods: list[Month] | None = Field(default=None, min_length=1, max_length=120)
    # A plan across futures (`optimize --futures`) shares the purchases of the periods up to this one
    # (a period start; None: the first period) in every future.
    decide: Annotated[Month | None, EXTENSION] = None
    supply: dict[Id, Annotated[int, Plausible(0, 100_000_000, "units")]] = {}
    objective: Literal["min_tco", "max_perf_per_tco", "max_perf"] = "min_tco"
    budget: Budget = Budget()
    horizon_years: Annotated[int, Plausible(1, 30, "years")]
    cost_of_capital: Annotated[
        float, Plausible(0, 1, "(fraction)", ((0.01, "a percentage; write 0.10 for 10%"),))
    ]
    utilization: Annotated[
        float, Plausible(0.01, 1, "(fraction)", ((0.01, "a percentage; write 0.8 for 80%"),))
    ]
    maintenance_rate: Annotated[
        float, Plausible(0, 1, "(fraction)", ((0.01, "a percentage; write 0.03 for 3%"),))
    ]
    fabric: Fabric = Fabric()
    workload: Id | None = None  # a `workloads` id: what share of peak each form delivers; None: all of it
    # the relative gap the plan is proven within (0: proven optimal; 0.0001 for 0.01%); `--gap` overrides it
    gap: Annotated[
        float, Plausible(0, 0.1, "(fraction)", ((0.01, "a percentage; write 0.0001 for 0.01%"),)), EXTENSION
    ] = 0.0

    def demands(self) -> list[Demand]:
        """Every demand the scenario gives (one, one per month, or a ramp's two ends)."""
        if isinstance(self.demand, DemandRamp):
            return self.demand.ends()
        return list(self.demand.values()) if isinstance(self.demand, dict) else [self.demand]

    @model_validator(mode="after")
    def _objective_inputs(self) -> ScenarioSpec:
        demands = self.demands()
        if any(d.effective_fp8_pflops is not None for d in demands) and self.workload is None:
            raise ValueError("demand effective_fp8_pflops needs a workload (what share of peak is delivered)")
        if self.objective == "min_tco" and all(d.empty for d in demands):
            raise ValueError("objective min_tco needs a demand (chips, fp8_pflops or hbm_tb)")
        if self.objective == "max_perf" and self.budget.capex_usd is None and self.budget.tco_usd is None:
            raise ValueError("objective max_perf needs a budget (capex_usd or tco_usd)")
        if len(set(self.sites)) != len(self.sites):
            raise ValueError("sites lists a site twice")
        return self

    @model_validator(mode="after")
    def _periods(self) -> ScenarioSpec:
        problem = period_problem(self)
        if problem:
            raise ValueError(problem)
        return self


class Scenario(ScenarioSpec):
    """A scenario of the catalog: `demand` is one `Demand` (with periods, the last period's; the phased model
    reads `demand_by_month`, month -> demand as written)."""

    demand: Demand = Demand()
    demand_by_month: dict[str, Demand] = {}
    _ramped: bool = PrivateAttr(default=False)  # demand written as a ramp (`DemandRamp`), expanded here

    @classmethod
    def from_spec(cls, spec: ScenarioSpec) -> Scenario:
        values = dict(spec.__dict__)
        by_month: dict[str, Demand] = {}
        if isinstance(spec.demand, DemandRamp):
            by_month = spec.demand.by_month(list(spec.periods or ()))
        elif isinstance(spec.demand, dict):
            by_month = dict(sorted(spec.demand.items()))
        if by_month:
            values["demand"] = by_month[max(by_month)]
        scenario = cls.model_construct(**values, demand_by_month=by_month)
        scenario._ramped = isinstance(spec.demand, DemandRamp)
        return scenario

    @property
    def ramped(self) -> bool:
        """The spec writes its demand as a ramp (`--set` cannot name one month's demand then)."""
        return self._ramped

    @property
    def phased(self) -> bool:
        return self.periods is not None
