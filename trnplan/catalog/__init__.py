"""Spec entities (frozen, strictly validated) and the figures derived from them.

Field names carry their units (`tdp_w`, `it_power_mw`, `_usd`). Each number has a plausible
range; a value outside it is an error that names the likely unit slip.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from trnplan.catalog.base import (
    EXTENSION as EXTENSION,
)
from trnplan.catalog.base import (
    HOURS_PER_YEAR as HOURS_PER_YEAR,
)
from trnplan.catalog.base import (  # re-exported: the base types every spec module uses
    ID_PATTERN as ID_PATTERN,
)
from trnplan.catalog.base import (
    MONTH_PATTERN as MONTH_PATTERN,
)
from trnplan.catalog.base import (
    PCIE_LANE_GBPS as PCIE_LANE_GBPS,
)
from trnplan.catalog.base import (
    PROVENANCE as PROVENANCE,
)
from trnplan.catalog.base import (
    RACK_UNITS_PER_RACK as RACK_UNITS_PER_RACK,
)
from trnplan.catalog.base import (
    Id as Id,
)
from trnplan.catalog.base import (
    Month as Month,
)
from trnplan.catalog.base import (
    Plausible as Plausible,
)
from trnplan.catalog.base import (
    Spec as Spec,
)
from trnplan.catalog.base import (
    Text as Text,
)
from trnplan.catalog.base import (
    Usd as Usd,
)
from trnplan.catalog.base import (
    _slips as _slips,
)
from trnplan.catalog.provenance import Provenance as Provenance
from trnplan.catalog.scenario import DEMAND_KEYS as DEMAND_KEYS  # re-exported
from trnplan.catalog.scenario import Budget as Budget
from trnplan.catalog.scenario import Demand as Demand
from trnplan.catalog.scenario import DemandCap as DemandCap
from trnplan.catalog.scenario import Fabric as Fabric
from trnplan.catalog.scenario import Scenario as Scenario
from trnplan.catalog.scenario import ScenarioSpec as ScenarioSpec
from trnplan.catalog.schedules import last_value, scheduled, value_at
from trnplan.catalog.workloads import EfficiencyRule as EfficiencyRule  # re-exported
from trnplan.catalog.workloads import Job as Job
from trnplan.catalog.workloads import Share as Share
from trnplan.catalog.workloads import Workload as Workload
from trnplan.errors import KINDS as KINDS  # re-exported: the spec collections
from trnplan.errors import Problem


class Stepped:
    """A catalog entity some of whose spec figures may be step schedules (`STEPPED`): each read as a number
    (a schedule's last entry; `at` reads them at a month), the schedules as written kept in `schedules`
    (field -> month -> value). A price (`PRICES`) read before its schedule's first entry is that entry (a
    price exists before it changes); any other figure is 0 there (the hall is not open)."""

    STEPPED: ClassVar[tuple[str, ...]] = ()
    WHOLE: ClassVar[tuple[str, ...]] = ()
    PRICES: ClassVar[tuple[str, ...]] = ()
    schedules: dict[str, dict[str, float]]

    @classmethod
    def from_spec(cls, spec: Spec) -> Any:
        values = dict(spec.__dict__)
        schedules = {}
        for name in cls.STEPPED:
            value = values.get(name)
            if isinstance(value, dict):
                schedules[name] = dict(sorted(value.items()))
                values[name] = last_value(value)
        for name in cls.WHOLE:
            if name in schedules:
                values[name] = int(values[name])
        return cls.model_construct(**values, schedules=schedules)  # type: ignore[attr-defined]

    def at(self, month: str | None) -> Any:
        """This entity's figures in effect at `month` (its schedules' last entries when None)."""
        if not self.schedules or month is None:
            return self
        update: dict[str, float | int] = {
            name: value_at(s, month, s[min(s)] if name in self.PRICES else 0.0)
            for name, s in self.schedules.items()
        }
        for name in self.WHOLE:
            if name in update:
                update[name] = int(update[name])
        return self.model_copy(update=update)  # type: ignore[attr-defined]


UsdPrice = Annotated[float, Plausible(0, 1e7, "USD")]
SwitchUsd = Annotated[float, Plausible(0, 5e6, "USD")]
LifeYears = Annotated[
    float, Plausible(1, 100, "years", _slips({12: "months typed into a years field"})), EXTENSION
]
if TYPE_CHECKING:
    UsdPriceOrSchedule = float | dict[str, float]
    SwitchUsdOrSchedule = float | dict[str, float]
else:
    UsdPriceOrSchedule = scheduled(UsdPrice)
    SwitchUsdOrSchedule = scheduled(SwitchUsd)


class Hbm(Spec):
    generation: Text
    stacks: Annotated[int, Plausible(1, 32, "stacks")]
    stack_gb: Annotated[float, Plausible(1, 512, "GB", _slips({1 / 1024: "MB typed into a GB field"}))]
    pin_gbps: Annotated[float, Plausible(0.5, 50, "Gb/s", _slips({1e-3: "Mb/s typed into a Gb/s field"}))]
    bus_bits: Annotated[int, Plausible(64, 4096, "bits")]


class ChipScaleUp(Spec):
    """Scale-up link of a chip: `pcie_gen` implies the lane rate, else give `lane_gbps`."""

    protocol: Text | None = None
    pcie_gen: Annotated[int, Plausible(3, 7, "(PCIe generation)")] | None = None
    lanes: Annotated[int, Plausible(1, 4096, "lanes")]
    lane_gbps: Annotated[float, Plausible(1, 2000, "Gb/s per lane")] | None = None

    @model_validator(mode="after")
    def _one_rate(self) -> ChipScaleUp:
        if (self.pcie_gen is None) == (self.lane_gbps is None):
            raise ValueError("give exactly one of pcie_gen (PCIe lane rate) or lane_gbps")
        return self

    @property
    def lane_rate_gbps(self) -> float:
        return self.lane_gbps if self.lane_gbps is not None else PCIE_LANE_GBPS[self.pcie_gen or 6]


class ChipSpec(Provenance):
    """A chip as a spec file writes it: `unit_usd` a number or a step schedule `{YYYY-MM: USD}` (a chip is
    priced in the period it is bought)."""

    name: Text
    vendor: Text
    tdp_w: Annotated[float, Plausible(50, 5000, "W", _slips({1000: "kW typed into a W field"}))]
    dense_tflops: dict[
        Id, Annotated[float, Plausible(1, 1e6, "TFLOPS", _slips({1000: "PFLOPS typed into a TFLOPS field"}))]
    ]
    hbm: Hbm
    scale_up: ChipScaleUp
    scale_out_gbps: Annotated[
        float, Plausible(1, 20000, "Gb/s", _slips({1000: "Tb/s typed into a Gb/s field"}))
    ]
    unit_usd: UsdPriceOrSchedule
    available_from: Month | None = None
    mtbf_hours: Annotated[float, Plausible(100, 1e8, "hours")] | None = None  # job-interrupting failures
    # Years the chip serves: annuitised over its own life, so a life past the window leaves a residual
    # value (a credit per year); None: the scenario's horizon (the first version's model).
    life_years: LifeYears | None = None

    @model_validator(mode="after")
    def _has_fp8(self) -> ChipSpec:
        if "fp8" not in self.dense_tflops:
            raise ValueError("dense_tflops needs an fp8 entry (FP8 PFLOPs are what plans count)")
        return self

    @property
    def fp8_tflops(self) -> float:
        return self.dense_tflops["fp8"]

    @property
    def hbm_capacity_gb(self) -> float:
        """stacks x stack_gb."""
        return self.hbm.stacks * self.hbm.stack_gb

    @property
    def hbm_bandwidth_tbps(self) -> float:
        """stacks x bus_bits x pin_gbps / 8 / 1000."""
        return self.hbm.stacks * self.hbm.bus_bits * self.hbm.pin_gbps / 8 / 1000

    @property
    def scale_up_tbps(self) -> float:
        """One direction: lanes x lane rate / 8 / 1000."""
        return self.scale_up.lanes * self.scale_up.lane_rate_gbps / 8 / 1000


class Chip(Stepped, ChipSpec):
    """A chip of the catalog: `unit_usd` read as a number (`Stepped`)."""

    STEPPED: ClassVar[tuple[str, ...]] = ("unit_usd",)
    PRICES: ClassVar[tuple[str, ...]] = ("unit_usd",)
    unit_usd: float
    schedules: dict[str, dict[str, float]] = {}


class Names(Spec):
    brand: Text | None = None
    codename: Text | None = None
    topology: Text | None = None


class BomItem(Spec):
    item: Text
    qty: Annotated[float, Plausible(0, 10000, "per rack")]
    unit_usd: Usd
    category: Id = "rack"


class ScaleUpOption(Spec):
    switch: Id
    per_rack: Annotated[int, Plausible(0, 256, "switches per rack")]


class Form(Provenance):
    chip: Id
    names: Names = Names()
    topology: Literal["switched", "torus"]
    chips_per_rack: Annotated[int, Plausible(1, 4096, "chips")]
    racks_per_unit: Annotated[int, Plausible(1, 64, "racks")]
    domain_chips: Annotated[int, Plausible(1, 100000, "chips")]
    cooling: list[Id] = Field(min_length=1)
    rack_overhead_kw: Annotated[float, Plausible(0, 500, "kW", _slips({1e-3: "W typed into a kW field"}))]
    rack_bom: list[BomItem] = []
    scale_up: list[ScaleUpOption] = []
    endpoint_optics_per_chip: Annotated[float, Plausible(0, 16, "optics per chip")] = 1.0
    rack_units: Annotated[int, Plausible(1, 60, "U")] | None = None
    # Rack-to-leaf links: "copper" (DAC/AEC) links replace the rack-side optic and the leaf's down-port
    # optic of each of the form's endpoint_optics_per_chip port-equivalents, at their own price and power.
    endpoint_links: Literal["optics", "copper"] = "optics"
    copper_usd: Annotated[float, Plausible(0, 20000, "USD per link")] = 0.0
    copper_w: Annotated[float, Plausible(0, 100, "W per link")] = 0.0
    # Scale-up for the performance model (`trnplan.perf`): switch levels a switched domain's traffic
    # crosses (two: a hop more and the switch latency again), a torus's dimensions (default: as cubic as
    # the domain allows, `trnplan.perf.machine.torus_dims`).
    scale_up_levels: Annotated[int, Plausible(1, 4, "levels")] = 1
    torus_dims: list[Annotated[int, Plausible(1, 1024, "chips")]] | None = None

    @model_validator(mode="after")
    def _shape(self) -> Form:
        unit_chips = self.chips_per_rack * self.racks_per_unit
        problems = []
        if unit_chips % self.domain_chips:
            problems.append(
                f"domain_chips {self.domain_chips} must divide the unit "
                f"({self.chips_per_rack} chips x {self.racks_per_unit} racks = {unit_chips})"
            )
        optics = self.endpoint_optics_per_chip * self.chips_per_rack
        if abs(optics - round(optics)) > 1e-9:
            problems.append(
                f"endpoint_optics_per_chip x chips_per_rack = {optics:g} must be a whole number of optics"
            )
        if self.topology == "switched" and not self.scale_up:
            problems.append("a switched form needs at least one scale_up switch option")
        if self.torus_dims is not None and math.prod(self.torus_dims) != self.domain_chips:
            problems.append(f"torus_dims {self.torus_dims} must multiply to domain_chips {self.domain_chips}")
        seen = [o.switch for o in self.scale_up]
        if len(seen) != len(set(seen)):
            problems.append("scale_up lists a switch twice")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def unit_chips(self) -> int:
        return self.chips_per_rack * self.racks_per_unit

    @property
    def rack_kit_usd(self) -> float:
        return sum(item.qty * item.unit_usd for item in self.rack_bom)

    @property
    def optics_per_rack(self) -> int:
        return round(self.endpoint_optics_per_chip * self.chips_per_rack)


class SwitchSpec(Provenance):
    """A switch as a spec file writes it: `unit_usd` a number or a step schedule `{YYYY-MM: USD}`."""

    name: Text | None = None
    vendor: Text | None = None
    role: Literal["scale_up", "scale_out"]
    protocol: Text
    lanes: Annotated[int, Plausible(1, 8192, "lanes")] | None = None
    ports: Annotated[int, Plausible(1, 4096, "ports")] | None = None
    bandwidth_gbps: (
        Annotated[float, Plausible(100, 1e6, "Gb/s", _slips({1000: "Tb/s typed into a Gb/s field"}))] | None
    ) = None
    port_gbps: Annotated[float, Plausible(1, 3200, "Gb/s")] | None = None
    rack_units: Annotated[int, Plausible(1, 42, "U")] | None = None
    power_w: Annotated[float, Plausible(0, 20000, "W", _slips({1000: "kW typed into a W field"}))]
    unit_usd: SwitchUsdOrSchedule
    optic_usd: Annotated[float, Plausible(0, 50000, "USD")] = 0.0
    optic_w: Annotated[float, Plausible(0, 100, "W")] = 0.0
    available_from: Month
    latency_ns: Annotated[float, Plausible(1, 100_000, "ns")] | None = None  # port to port
    # Years the switch (and its optics) serve; None: the scenario's horizon. As a chip's life_years.
    life_years: LifeYears | None = None

    @model_validator(mode="after")
    def _scale_out_shape(self) -> SwitchSpec:
        if self.role == "scale_out" and isinstance(self.unit_usd, dict):
            raise ValueError(
                "a scale-out switch's unit_usd is one number, not a schedule: its fabric is sized from what "
                "each period installs, so it is never bought ahead of a price change (chips and scale-up "
                "switches may follow schedules)"
            )
        if self.role == "scale_out":
            missing = [f for f in ("bandwidth_gbps", "port_gbps", "rack_units") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"a scale_out switch needs {', '.join(missing)}")
            radix = self.radix
            if radix < 2 or radix % 2 or abs(radix - self.bandwidth_gbps / self.port_gbps) > 1e-9:  # type: ignore[operator]
                raise ValueError(
                    f"bandwidth_gbps / port_gbps = {self.bandwidth_gbps:g} / {self.port_gbps:g} "
                    "must be an even whole number of ports (the radix)"
                )
        return self

    @property
    def radix(self) -> int:
        """Ports of `port_gbps` the switch offers: bandwidth_gbps / port_gbps."""
        if self.bandwidth_gbps is None or self.port_gbps is None:
            return 0
        return round(self.bandwidth_gbps / self.port_gbps)


class Switch(Stepped, SwitchSpec):
    """A switch of the catalog: `unit_usd` read as a number (`Stepped`)."""

    STEPPED: ClassVar[tuple[str, ...]] = ("unit_usd",)
    PRICES: ClassVar[tuple[str, ...]] = ("unit_usd",)
    unit_usd: float
    schedules: dict[str, dict[str, float]] = {}


class PowerChain(Provenance):
    """What a redundancy level of the power chain (generators, UPS, transformers, switchgear) leaves usable
    of a hall's power and what it costs to build per MW of IT it serves (paid at an owned site)."""

    name: Text | None = None
    usable_share: Annotated[float, Plausible(0.05, 1.0, "(share of it_power_mw usable)")]
    usd_per_mw: Annotated[
        float, Plausible(0, 1e8, "USD/MW", _slips({1e-3: "USD/kW typed into a USD/MW field"}))
    ]


class Cooling(Provenance):
    name: Text | None = None
    max_rack_kw: Annotated[float, Plausible(1, 1000, "kW", _slips({1e-3: "W typed into a kW field"}))]
    pue: Annotated[float, Plausible(1.0, 3.0, "(PUE)")]
    capex_usd_per_kw: Annotated[
        float, Plausible(0, 100000, "USD/kW", _slips({1e-3: "USD/MW typed into a USD/kW field"}))
    ]
    # The cooling plant (chillers or dry coolers, CRAH, facility water) per IT kW: paid only at an owned
    # site; a colocation site's rent pays for it. capex_usd_per_kw is the fit-out every site pays.
    plant_usd_per_kw: Annotated[
        float, Plausible(0, 100000, "USD/kW", _slips({1e-3: "USD/MW typed into a USD/kW field"}))
    ] = 0.0


PowerMw = Annotated[float, Plausible(0.01, 10000, "MW", _slips({1e-3: "kW typed into a MW field"}))]
GridMw = Annotated[float, Plausible(0.01, 20000, "MW", _slips({1e-3: "kW typed into a MW field"}))]
Positions = Annotated[int, Plausible(1, 1000000, "rack positions")]
UsdPerKwh = Annotated[
    float,
    Plausible(
        0.001,
        2,
        "USD/kWh",
        _slips({0.001: "USD/MWh typed into a USD/kWh field", 0.01: "cents typed into a USD field"}),
    ),
]
UsdPerKwMonth = Annotated[float, Plausible(0, 5000, "USD/kW-month")]
if TYPE_CHECKING:  # what the checker sees; at run time each is `scheduled(...)`: a number or a schedule
    PowerMwOrSchedule = float | dict[str, float]
    GridMwOrSchedule = float | dict[str, float]
    PositionsOrSchedule = int | dict[str, int]
    UsdPerKwhOrSchedule = float | dict[str, float]
    UsdPerKwMonthOrSchedule = float | dict[str, float]
else:
    PowerMwOrSchedule = scheduled(PowerMw)
    GridMwOrSchedule = scheduled(GridMw)
    PositionsOrSchedule = scheduled(Positions)
    UsdPerKwhOrSchedule = scheduled(UsdPerKwh)
    UsdPerKwMonthOrSchedule = scheduled(UsdPerKwMonth)
SCHEDULED = (
    "it_power_mw",
    "grid_power_mw",
    "rack_positions",
    "electricity_usd_per_kwh",
    "colocation_usd_per_kw_month",
    "liquid_premium_usd_per_kw_month",
)
"""Site fields that take a number or a step schedule (`trnplan.catalog.schedules`)."""


class SiteSpec(Provenance):
    """A site as a spec file writes it: the SCHEDULED fields take a number or `{YYYY-MM: value}`."""

    name: Text | None = None
    location: Text | None = None
    it_power_mw: PowerMwOrSchedule
    grid_power_mw: GridMwOrSchedule | None = None
    rack_positions: PositionsOrSchedule
    cooling: list[Id] = Field(min_length=1)
    cooling_fixed_usd: dict[Id, Usd] = {}
    max_rack_kw: (
        Annotated[float, Plausible(1, 1000, "kW", _slips({1e-3: "W typed into a kW field"}))] | None
    ) = None
    electricity_usd_per_kwh: UsdPerKwhOrSchedule
    # Rent per IT kW-month of a leased hall (it prices the hall's redundancy in); an owned hall pays none
    # and need not state it (`validate` warns when it does: the figure is not read).
    colocation_usd_per_kw_month: UsdPerKwMonthOrSchedule | None = None
    # "leased" (the default; "colocation" is read as its old name): rent on IT kW. "owned": no rent; the
    # hall's build (build_usd_per_mw per MW of IT used), its power chain and its cooling plant are capex,
    # annuitised over facility_life_years and maintained like the rest.
    ownership: Literal["leased", "owned", "colocation"] = "leased"
    build_usd_per_mw: Annotated[
        float, Plausible(0, 1e9, "USD/MW", _slips({1e-3: "USD/kW typed into a USD/MW field"}))
    ] = 0.0
    # The build's own life: its annuity over these years is charged for the years of the window (a
    # 15-year hall is not written off in a 5-year plan); None: the scenario's horizon.
    facility_life_years: LifeYears | None = None
    # A power_chains id (its usable share of it_power_mw, its cost per MW at an owned site); None: the
    # whole it_power_mw is usable and the chain is in the build (or the rent).
    redundancy: Annotated[Id, EXTENSION] | None = None
    # Heat each cooling type can remove, MW of IT (compute and network); a type left out is bounded only
    # by the site's power.
    cooling_capacity_mw: Annotated[dict[Id, PowerMw], EXTENSION] = {}
    # Rent on each kW cooled by a type other than air, above the air rent (leased halls).
    liquid_premium_usd_per_kw_month: Annotated[UsdPerKwMonthOrSchedule, EXTENSION] = 0.0

    @field_validator("ownership")
    @classmethod
    def _leased(cls, ownership: str) -> str:
        return "leased" if ownership == "colocation" else ownership  # the old name of a leased hall

    @property
    def owned_with_rent(self) -> bool:
        """An owned site that states a rent (which it does not pay: `validate` warns)."""
        return self.ownership == "owned" and self.colocation_usd_per_kw_month is not None

    @model_validator(mode="after")
    def _rent_or_owned(self) -> SiteSpec:
        if self.ownership != "owned" and self.colocation_usd_per_kw_month is None:
            raise ValueError(
                "a leased site needs colocation_usd_per_kw_month (or ownership: owned, which pays no rent)"
            )
        return self


class Site(Stepped, SiteSpec):
    """A site of the catalog: each SCHEDULED figure read as a number (a schedule's last entry; `at` reads
    them at a month), the schedules as written kept in `schedules` (field -> month -> value)."""

    STEPPED: ClassVar[tuple[str, ...]] = SCHEDULED
    WHOLE: ClassVar[tuple[str, ...]] = ("rack_positions",)
    it_power_mw: float
    grid_power_mw: float | None = None
    rack_positions: int
    electricity_usd_per_kwh: float
    colocation_usd_per_kw_month: float | None = None
    liquid_premium_usd_per_kw_month: float = 0.0
    schedules: dict[str, dict[str, float]] = {}

    @property
    def it_power_kw(self) -> float:
        return self.it_power_mw * 1000

    @property
    def owned(self) -> bool:
        return self.ownership == "owned"

    @property
    def rent_usd_per_kw_month(self) -> float:
        """Rent per IT kW-month: a leased hall's colocation rate, 0 at an owned one."""
        return 0.0 if self.owned else self.colocation_usd_per_kw_month or 0.0


MODELS: dict[str, type[Provenance]] = {
    "chips": ChipSpec,
    "forms": Form,
    "switches": SwitchSpec,
    "cooling": Cooling,
    "sites": SiteSpec,
    "scenarios": ScenarioSpec,
    "workloads": Workload,
    "power_chains": PowerChain,
}


def spec_form(entity: Spec) -> dict[str, Any]:
    """An entity's fields as its spec writes them (JSON types): a site's schedules in their fields, a phased
    scenario's demand by month."""
    data = entity.model_dump(mode="json")
    if isinstance(entity, Stepped):
        data.update(data.pop("schedules"))
    if isinstance(entity, Scenario):
        by_month = data.pop("demand_by_month")
        if by_month:
            data["demand"] = by_month
    return data


def catalog_entity(kind: str, value: Any) -> Any:
    """A validated spec model as the catalog holds it: sites and scenarios read from their spec form."""
    for spec, entity in ((SiteSpec, Site), (ChipSpec, Chip), (SwitchSpec, Switch)):
        if isinstance(value, spec) and not isinstance(value, entity):
            return entity.from_spec(value)
    if isinstance(value, ScenarioSpec) and not isinstance(value, Scenario):
        return Scenario.from_spec(value)
    return value


class SpecFile(Spec):
    """One spec file: any of the collections, each keyed by id (used for the JSON Schema)."""

    chips: dict[Id, ChipSpec] = {}
    forms: dict[Id, Form] = {}
    switches: dict[Id, SwitchSpec] = {}
    cooling: dict[Id, Cooling] = {}
    sites: dict[Id, SiteSpec] = {}
    scenarios: dict[Id, ScenarioSpec] = {}
    workloads: dict[Id, Workload] = {}
    power_chains: dict[Id, PowerChain] = {}


@dataclass(frozen=True)
class Origin:
    """Where an entity was defined: its file and the line/col of every key path inside it."""

    file: str
    line: int
    col: int


@dataclass(frozen=True)
class Sources:
    """Where a catalog came from: its spec directories (relative paths, `@catalog` for the bundled one)
    and its `--set` overrides (with the values they replaced, where the specs had one); `default` when the
    directories were the default ones (`load.default_spec_dirs`)."""

    specs: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    default: bool = True
    replaced: tuple[tuple[str, str], ...] = ()  # each `--set` PATH -> the value the specs had there


@dataclass(frozen=True)
class Catalog:
    """Every validated entity, by kind and id; `origins` locate them in their files, `sources` says which
    directories and overrides made it."""

    chips: dict[str, Chip] = field(default_factory=dict)
    forms: dict[str, Form] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    cooling: dict[str, Cooling] = field(default_factory=dict)
    sites: dict[str, Site] = field(default_factory=dict)
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    workloads: dict[str, Workload] = field(default_factory=dict)
    power_chains: dict[str, PowerChain] = field(default_factory=dict)
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)
    sources: Sources = field(default_factory=Sources)
    warnings: tuple[Problem, ...] = ()  # located figures the specs give that no plan reads

    def of(self, kind: str) -> dict[str, Any]:
        return getattr(self, kind)  # type: ignore[no-any-return]

    def scenario(self, scenario_id: str) -> Scenario:
        return self.scenarios[scenario_id]

    def scale_up_tbps(self, chip_id: str) -> float:
        return self.chips[chip_id].scale_up_tbps

    def usable_share(self, site: Site) -> float:
        """Share of a site's it_power_mw its power chain leaves usable: the chain's usable_share where the
        site states a redundancy, else 1 (a leased hall's it_power_mw is what it may draw)."""
        chain = self.power_chains.get(site.redundancy or "")
        return chain.usable_share if chain is not None else 1.0

    def usable_it_power_mw(self, site: Site) -> float:
        """IT power a site may draw: it_power_mw x its chain's usable share (2N: half)."""
        share = self.usable_share(site)
        return site.it_power_mw if share == 1.0 else site.it_power_mw * share


def month_leq(a: str | None, b: str | None) -> bool:
    """`a` is available by `b` (YYYY-MM strings compare lexically); no `b` means no limit."""
    return a is None or b is None or a <= b


def check_month(value: str) -> bool:
    return re.fullmatch(MONTH_PATTERN.rstrip("$"), value) is not None


# The digest of what a scenario can use (`catalog.digest`) and the figures derived from entities
# (`catalog.derived`) are imported here, their home for callers; this module stays about its entities.
from trnplan.catalog.derived import chip_derived as chip_derived  # noqa: E402
from trnplan.catalog.derived import form_derived as form_derived  # noqa: E402
from trnplan.catalog.derived import rack_it_kw as rack_it_kw  # noqa: E402
from trnplan.catalog.digest import DIGEST_DEFAULTS as DIGEST_DEFAULTS  # noqa: E402
from trnplan.catalog.digest import inputs_digest as inputs_digest  # noqa: E402
