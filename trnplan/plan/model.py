"""The Plan value and its typed parts, as written to and read from `plans/SCENARIO.yaml`.

One definition serves both ways: the plan builder constructs these, and reading a plan file validates
it once into the same types (unknown keys, wrong types and non-finite numbers are refused), so every
consumer reads attributes. The canonical file form is `Plan.to_dict()`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from trnplan.costs.figures import MONTH, Amount, Count, Id, Part
from trnplan.costs.figures import BomLine as BomLine  # re-exported: a plan's parts
from trnplan.costs.figures import Totals as Totals
from trnplan.numbers import ECONOMICS_DIGITS, canon, fmt

PLAN_FORMAT = "trnplan-plan/1"
PHASED_FORMAT = "trnplan-plan/2"
"""A scenario with periods writes `trnplan-plan/2` (its `periods`); any other keeps `trnplan-plan/1`."""

OPTIMAL_GAP = 1e-6
"""Largest `mip_gap` a plan marked `optimal` may state (the solver reports 0 for a proven optimum)."""

SolveStatusText = Literal["optimal", "feasible", "infeasible", "unbounded", "no_solution", "error"]


class SolverInfo(Part):
    """Which solver proved the plan, and how far: `status` optimal means proven (gap 0); feasible, that
    the plan is proven within `mip_gap` (None: unknown) of the optimum, whose proven bound (in the
    objective's unit) is `bound`. `gap_target` is the relative gap asked for (absent: 0, optimal)."""

    name: str
    version: str
    status: str
    mip_gap: Amount | None
    dinkelbach_iterations: Count | None = None
    gap_target: Annotated[float, Field(gt=0, le=0.1)] | None = None
    bound: float | None = None

    @property
    def within_target(self) -> bool:
        """Proven within the gap asked for (a plan that stopped at it, not at a limit)."""
        return self.gap_target is not None and self.mip_gap is not None and self.mip_gap <= self.gap_target

    @property
    def proof(self) -> str:
        """How far the plan is proven, in words: 'proven optimal', 'proven within 0.01% (gap 0.0042%)',
        'feasible, gap 2.1%', 'feasible, gap unknown' (the terminal and Markdown say the same)."""
        if self.status == "optimal":
            return "proven optimal"
        gap = "gap unknown" if self.mip_gap is None else f"gap {fmt(self.mip_gap, 'pct')}"
        if self.within_target and self.gap_target is not None:
            return f"proven within {fmt(self.gap_target, 'pct')} ({gap})"
        return f"{self.status}, {gap}"

    @field_validator("status")
    @classmethod
    def _found_a_plan(cls, status: str) -> str:
        if status not in ("optimal", "feasible"):  # a plan exists only when the solver found one
            raise ValueError(f"a plan's solver status is optimal or feasible, not {status!r}")
        return status

    @field_validator("mip_gap")
    @classmethod
    def _proven_means_no_gap(cls, gap: float | None, info: ValidationInfo) -> float | None:
        if info.data.get("status") == "optimal" and (gap is None or gap > OPTIMAL_GAP):
            raise ValueError(f"a plan marked optimal has gap 0, not {gap}")
        return gap


class Objective(Part):
    kind: Literal["min_tco", "max_perf", "max_perf_per_tco"]
    value: float
    unit: str


class ScaleOut(Part):
    """One site's scale-out fabric."""

    switch: Id
    tiers: Count = 0
    ports: Count = 0
    switches: Count = 0
    optics: Count = 0
    network_racks: Count = 0
    it_power_kw: Amount = 0.0
    capex_usd: Amount = 0.0


class DeploymentRow(Part):
    """n units of a form with a cooling and a scale-up switch at a site, with their figures."""

    form: Id
    cooling: Id
    scale_up_switch: Id
    units: Annotated[int, Field(ge=1)]
    racks: Count = 0
    chips: Count = 0
    domains: Count = 0
    fp8_pflops: Amount = 0.0
    it_power_kw: Amount = 0.0
    capex_usd: Amount = 0.0
    efficiency: Annotated[float, Field(gt=0, le=1)] | None = None  # the workload's share of peak here
    effective_fp8_pflops: Amount | None = None
    # With a workload that has a job: where the efficiency came from (`model`, or `rule N` that matched)
    # and, from the model, the MFU and goodput it is made of.
    efficiency_source: str | None = None
    mfu: Annotated[float, Field(gt=0, le=1)] | None = None
    goodput: Annotated[float, Field(gt=0, le=1)] | None = None

    @property
    def key(self) -> str:
        """`form/cooling/scale_up_switch`."""
        return f"{self.form}/{self.cooling}/{self.scale_up_switch}"


class Utilization(Part):
    """Share of each site limit the plan uses."""

    it_power: Amount
    rack_positions: Amount
    grid_power: Amount | None = None


class SiteSection(Part):
    cooling_used: list[Id]
    scale_out: ScaleOut
    deployments: list[DeploymentRow]
    racks: Count = 0
    it_power_kw: Amount = 0.0
    facility_power_kw: Amount = 0.0
    capex_usd: Amount = 0.0
    opex_usd_per_year: float = 0.0
    energy_usd_per_year: Amount = 0.0
    colocation_usd_per_year: Amount = 0.0
    residual_usd_per_year: float | None = None  # capex with lives of its own; negative: a credit
    utilization: Utilization | None = None


StoppedText = Literal["time limit", "node limit", "iteration limit", "interrupted"]


class Alternative(Part):
    """The best plan without one choice of the optimum; without the figures when none meets the scenario.
    `stopped`: what ended its search before the alternatives' gap was proven (absent: it was proven, or
    no plan meets the scenario without the choice), and `mip_gap` the relative gap it was proven within
    then (absent: unknown)."""

    without: str
    choice: str
    status: SolveStatusText
    tco_usd: Amount | None = None
    fp8_pflops: Amount | None = None
    effective_fp8_pflops: Amount | None = None
    objective: float | None = None
    delta_pct: float | None = None
    stopped: StoppedText | None = None
    mip_gap: Annotated[float, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _stopped_means_a_plan(self) -> Alternative:
        if self.stopped is not None and (self.status != "feasible" or self.tco_usd is None):
            raise ValueError("an alternative stopped at a limit is a feasible plan with its figures, not "
                             f"{self.status!r}" + (" without a TCO" if self.tco_usd is None else ""))
        if self.mip_gap is not None and self.stopped is None:
            raise ValueError("mip_gap is given only for an alternative stopped at a limit (`stopped`)")
        return self

    @property
    def feasible(self) -> bool:
        return self.tco_usd is not None


class Economics(Part):
    """The scenario's money terms, so a plan alone can attribute its TCO:
    TCO = capex x tco_per_capex_usd + horizon_years x (energy + colocation) per year."""

    horizon_years: Annotated[float, Field(ge=1, le=100)]
    cost_of_capital: Annotated[float, Field(ge=0, le=1)]
    crf: Amount
    maintenance_rate: Annotated[float, Field(ge=0, le=1)]
    utilization: Annotated[float, Field(gt=0, le=1)]
    tco_per_capex_usd: Amount


class Inputs(Part):
    """What a plan was computed from besides the specs' content (which `inputs_digest` covers): the spec
    directories in layering order (paths relative to where trnplan ran, `@catalog` for the bundled catalog)
    and the `--set` overrides, as typed, with the values they replaced (so a diff can say `0.05 -> 0.10`).
    The default specs (no `--specs`, or the folder the default rule picks) are recorded as no directories,
    as a plan of them with no overrides leaves the part out, so `diff` never shows a change of specs
    between two plans of the same default."""

    specs: list[str] = []
    overrides: list[str] = []
    replaced: dict[str, str] | None = None  # `--set` PATH -> the value the specs had there, as YAML text

    @classmethod
    def of(cls, sources: Any) -> Inputs | None:
        """The part for a catalog's `Sources` (`specs`, `overrides`, `default`, `replaced`); None for the
        defaults."""
        if sources is None or (sources.default and not sources.overrides):
            return None
        specs = [] if sources.default else list(sources.specs)
        replaced = dict(getattr(sources, "replaced", ())) or None
        return cls(specs=specs, overrides=list(sources.overrides), replaced=replaced)


class WorkloadPart(Part):
    """The scenario's workload: the share of dense FP8 peak each form the scenario allows delivers under it
    (by form for rules; by `form/scale-up switch` when the workload has a job, whose efficiency the
    performance model computes per option), so the plan says which efficiency decided the form."""

    id: Id
    name: str
    efficiency: dict[str, Annotated[float, Field(gt=0, le=1)]]


class PeriodDeployment(Part):
    """What is installed of one option at a site in a period, and how much of it was bought then."""

    form: Id
    cooling: Id
    scale_up_switch: Id
    units: Annotated[int, Field(ge=1)]
    bought: Count
    racks: Count = 0
    chips: Count = 0
    it_power_kw: Amount = 0.0
    capex_usd: Amount = 0.0

    @property
    def key(self) -> str:
        return f"{self.form}/{self.cooling}/{self.scale_up_switch}"


class PeriodSite(Part):
    """A site in a period: its installed deployments and fabric, power and positions used."""

    deployments: list[PeriodDeployment]
    scale_out: ScaleOut
    cooling_used: list[Id]
    racks: Count = 0
    positions: Count = 0  # compute racks + network racks
    it_power_kw: Amount = 0.0
    facility_power_kw: Amount = 0.0
    utilization: Utilization | None = None


class PeriodTotals(Part):
    """A period's installed figures over all sites, what was bought in it, and its opex per year."""

    chips: Count
    units: Count
    racks: Count
    network_racks: Count
    fp8_pflops: Amount
    it_power_kw: Amount
    facility_power_kw: Amount
    capex_bought_usd: Amount
    capex_usd: Amount  # installed: bought up to and in this period
    opex_usd_per_year: float
    effective_fp8_pflops: Amount | None = None


class PlanPeriod(Part):
    """One period of a phased plan: from `start` for `years` (to the next start, or the window's end)."""

    start: Annotated[str, StringConstraints(pattern=MONTH)]
    years: Annotated[float, Field(gt=0, le=100)]
    sites: dict[Id, PeriodSite]
    totals: PeriodTotals


class FutureRun(Part):
    """One future of a plan across futures: the inputs it drew (`--set` PATH -> value), its TCO with the
    shared purchases and its own recourse, and its periods over the whole window."""

    set: dict[str, float | Annotated[str, StringConstraints(pattern=MONTH)]]  # a month field's draw: YYYY-MM
    tco_usd: Amount
    periods: list[PlanPeriod]


class FuturesPart(Part):
    """A plan across futures (`optimize --futures N`): purchases up to `decide` shared by every future,
    the later ones each future's own. `expected_tco_usd` is the mean of the runs' TCOs; with a `risk`
    (`cvar:A`) `risk_tco_usd` is their CVaR, the objective. `vss_usd`: the value of the stochastic
    solution (the plan made for the average future, priced in every future, minus this one; absent when
    that plan cannot go on in some future); `evpi_usd`: the expected value of perfect information (this
    one minus the mean of each future's own optimum); with a risk both are in its measure."""

    n: Annotated[int, Field(ge=1)]
    seed: int
    decide: Annotated[str, StringConstraints(pattern=MONTH)]
    risk: str | None = None
    expected_tco_usd: Amount
    risk_tco_usd: Amount | None = None
    vss_usd: float | None = None
    evpi_usd: float
    runs: list[FutureRun]


class Plan(Part):
    """A solved scenario, as written to `plans/SCENARIO.yaml`."""

    format: str = PLAN_FORMAT
    scenario: str
    inputs_digest: str
    solver: SolverInfo | None
    objective: Objective | None
    totals: Totals
    sites: dict[Id, SiteSection]
    bom: list[BomLine]
    binding: list[str] = []
    alternatives: list[Alternative] = []
    economics: Economics | None = None
    inputs: Inputs | None = None
    workload: WorkloadPart | None = None  # absent when the scenario names no workload
    periods: list[PlanPeriod] | None = None  # a phased plan (format trnplan-plan/2); absent otherwise
    futures: FuturesPart | None = None  # a plan across futures: `periods` then hold the shared purchases

    @property
    def phased(self) -> bool:
        return self.periods is not None

    @property
    def bom_capex_usd(self) -> float:
        """What the BOM lines sum to: the plan's capex, or across futures (whose totals are the expected
        figures) the shared purchases' installed capex."""
        if self.futures is not None and self.periods:
            return self.periods[-1].totals.capex_usd
        return self.totals.capex_usd

    @model_validator(mode="after")
    def _format_says_phased(self) -> Plan:
        if (self.format == PHASED_FORMAT) != (self.periods is not None):
            raise ValueError(f"a plan has periods exactly when its format is {PHASED_FORMAT}")
        if self.format not in (PLAN_FORMAT, PHASED_FORMAT):
            raise ValueError(f"unknown plan format {self.format!r}")
        return self

    @classmethod
    def empty(cls, scenario: str) -> Plan:
        """A plan with nothing in it: the base of a scenario that is new, or the head of one that is gone."""
        workload_only = ("effective_fp8_pflops", "usd_per_effective_pflop_hour")  # absent, not 0
        zero = dict.fromkeys((k for k in Totals.model_fields if k not in workload_only), 0)
        return cls(
            scenario=scenario,
            inputs_digest="",
            solver=None,
            objective=None,
            totals=Totals.model_validate(zero),
            sites={},
            bom=[],
        )

    @property
    def status(self) -> str:
        return self.solver.status if self.solver else ""

    def to_dict(self) -> dict[str, Any]:
        """The canonical file form: sorted keys, canonical numbers, economics at full precision (so
        capex x tco_per_capex_usd reproduces the TCO to the cent); absent optional figures left out."""
        data = self.model_dump(exclude_none=True, exclude={"economics"})
        if self.solver is not None:
            data["solver"]["mip_gap"] = self.solver.mip_gap  # null when a stopped search could not bound it
        out: dict[str, Any] = canon(data)
        out["economics"] = canon(self.economics.model_dump() if self.economics else {}, ECONOMICS_DIGITS)
        return dict(sorted(out.items()))
