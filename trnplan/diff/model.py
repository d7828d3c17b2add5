"""The diff of two plans as a value: summary metrics, per-site choices, deployments, BOM lines, the TCO
delta attributed to categories and, when either plan states periods, each period (a plan without periods is
one period, and a diff of two of them states none).

`compare` builds it (`diff_plans`), `attribution` splits each plan's TCO by category, `json_form` and
`markdown` print it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from trnplan.costs.rates import OPEX_FIGURES

SUMMARY_METRICS: tuple[tuple[str, str, str], ...] = (
    ("tco_usd", "USD", "TCO"),
    ("capex_usd", "USD", "Capex"),
    ("opex_usd_per_year", "USD/year", "Opex per year"),
    ("it_power_kw", "kW", "IT power"),
    ("facility_power_kw", "kW", "Facility power"),
    ("chips", "chips", "Chips"),
    ("fp8_pflops", "PFLOPs", "FP8 PFLOPs"),
    ("racks", "racks", "Compute racks"),
    ("usd_per_pflop_hour", "USD/PFLOP-hour", "$ per PFLOP-hour"),
)
"""(metric, unit, label) of each summary figure, in the order every rendering shows them."""
OPTIONAL_METRICS: tuple[tuple[str, str, str], ...] = (
    ("effective_fp8_pflops", "PFLOPs", "Effective FP8 PFLOPs"),
    ("usd_per_effective_pflop_hour", "USD/PFLOP-hour", "$ per effective PFLOP-hour"),
)
"""Summary figures a plan states only under a workload: in a diff after the others, and only when either
plan states them (a diff of plans without workloads reads as it did before they existed)."""

MONEY_METRICS = frozenset(
    m for m, unit, _ in SUMMARY_METRICS if unit.startswith("USD") and m != "usd_per_pflop_hour"
)
METRIC_ALIASES = {
    "tco": "tco_usd",
    "capex": "capex_usd",
    "opex": "opex_usd_per_year",
    "power": "it_power_kw",
    "it_power": "it_power_kw",
    "facility_power": "facility_power_kw",
    "pflops": "fp8_pflops",
}
CHOICE_FIELDS = ("form", "cooling", "scale_up_switch", "scale_out_switch")
DEPLOYMENT_FIELDS = ("units", "racks", "chips", "it_power_kw", "capex_usd")
DEPLOYMENT_LABELS = {"units": "units", "racks": "racks", "chips": "chips", "it_power_kw": "IT power",
                     "capex_usd": "capex"}
"""How a deployment's compared figures read in a diff (the Markdown's column heads say the same)."""
OPEX_CATEGORIES = tuple(name.removesuffix("_usd_per_year") for name in OPEX_FIGURES)
"""The TCO attribution's opex categories (energy, colocation): the cost model's, by their short names."""

_LABELS = {metric: label for metric, _, label in SUMMARY_METRICS + OPTIONAL_METRICS}


def metric_label(name: str) -> str:
    """A summary metric's label for people (`tco_usd` -> `TCO`); the name itself when it has none."""
    return _LABELS.get(name, name)


def metric_names() -> list[str]:
    """The summary metrics, in order."""
    return [m for m, _, _ in SUMMARY_METRICS]


@dataclass(frozen=True)
class MetricDelta:
    """A summary figure in both plans; delta = new - old; pct = 100 x delta / old (None when old is 0)."""

    metric: str
    unit: str
    old: float
    new: float
    delta: float
    pct: float | None


@dataclass(frozen=True)
class ChoiceChange:
    """A per-site choice that differs; old (new) is None when the site is new (gone) in head."""

    site: str
    field: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class DeploymentChange:
    """`+` added, `-` removed, `~` changed; key is `form/cooling/scale_up_switch`; fields map to (old, new),
    all of them for `+`/`-` (the absent side None), only the changed ones for `~`."""

    sign: str
    site: str
    key: str
    fields: dict[str, tuple[float | None, float | None]]


@dataclass(frozen=True)
class BomDelta:
    """A BOM line (site, category, item) whose quantity or cost differs; the absent side is None."""

    sign: str
    site: str
    category: str
    item: str
    old_qty: float | None
    new_qty: float | None
    old_usd: float | None
    new_usd: float | None
    delta_usd: float


@dataclass(frozen=True)
class CategoryDelta:
    """TCO attributed to a category in each plan (BOM categories, then energy and colocation)."""

    category: str
    old_usd: float
    new_usd: float
    delta_usd: float


@dataclass(frozen=True)
class InputChange:
    """A change in what the plans were computed from: `name` is `specs` (the spec directories, in layering
    order) or `--set PATH` (an override); `old` or `new` is None where that side has none."""

    name: str
    old: str | None
    new: str | None


PERIOD_METRICS: tuple[tuple[str, str, str], ...] = (
    ("chips", "chips", "installed chips"),
    ("it_power_kw", "kW", "IT power"),
    ("capex_bought_usd", "USD", "capex bought"),
)
"""(metric, unit, label) of each period's figures in a diff: installed chips and IT power, capex bought."""

Kind = Literal["phased", "gained", "lost"]


@dataclass(frozen=True)
class PeriodFigure:
    """A period's figure in base and head; None on a side without the period; delta = new - old."""

    metric: str
    unit: str
    old: float | None
    new: float | None
    delta: float


@dataclass(frozen=True)
class OptionChange:
    """One option at a site in a period whose installed or bought units differ (0 where absent)."""

    site: str
    key: str  # form/cooling/scale_up_switch
    old_units: int
    new_units: int
    old_bought: int
    new_bought: int

    @property
    def sign(self) -> str:
        return "+" if not self.old_units else "-" if not self.new_units else "~"


@dataclass(frozen=True)
class FabricChange:
    """A site's scale-out switch or tier count in a period that differs; None where the site has none."""

    site: str
    field: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class PeriodDelta:
    """One period of the diff: its figures and, when both plans have it, what changed in it."""

    start: str
    in_base: bool
    in_head: bool
    figures: list[PeriodFigure]
    options: list[OptionChange] = field(default_factory=list)
    fabric: list[FabricChange] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.options or self.fabric or any(f.delta for f in self.figures)) or (
            self.in_base != self.in_head
        )


@dataclass(frozen=True)
class PeriodsDiff:
    """The periods of a diff: `phased` when both plans are phased, `gained` when only head is (the scenario
    gained periods), `lost` when only base is."""

    kind: Kind
    base_starts: list[str]
    head_starts: list[str]
    periods: list[PeriodDelta]

    @property
    def different(self) -> bool:
        return self.kind != "phased" or any(p.changed for p in self.periods)

    def notes(self) -> list[str]:
        """What a reader must know: a side without periods, or periods that moved."""
        if self.kind == "gained":
            return [f"the scenario gained periods: base is a single-period plan, head plans "
                    f"{_span(self.head_starts)}; the summary compares window totals (installed figures: "
                    "head's last period)"]
        if self.kind == "lost":
            return [f"the scenario lost its periods: base plans {_span(self.base_starts)}, head is a "
                    "single-period plan; the summary compares window totals (installed figures: base's "
                    "last period)"]
        out = []
        if self.base_starts and self.head_starts and self.base_starts != self.head_starts:
            out.append(f"the periods changed: base plans {_span(self.base_starts)}, "
                       f"head {_span(self.head_starts)}")
        if self.base_starts and self.head_starts and self.different:
            out.append("choices and deployments compare the last period's installed base; BOM lines, each "
                       "line's purchases over the window; each period lists what changed in it, a change "
                       "once, where it starts (what installed units carry on is not listed again)")
        return out


def _span(starts: list[str]) -> str:
    return f"{len(starts)} period{'s' if len(starts) != 1 else ''} ({', '.join(starts)})"


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between a base and a head plan; `different` is False iff nothing does.

    A change of inputs digest or solver with an identical plan is *not* a difference: it is reported in
    `notes` (and in the Markdown), but `different` stays False, so `--exit-code` fails only on real change.
    """

    base_label: str
    head_label: str
    base_digest: str
    head_digest: str
    base_solver: str
    head_solver: str
    different: bool
    summary: list[MetricDelta]
    choices: list[ChoiceChange]
    deployments: list[DeploymentChange]
    bom: list[BomDelta]
    attribution: list[CategoryDelta]
    scenario: str = ""
    notes: list[str] = field(default_factory=list)
    inputs: list[InputChange] = field(default_factory=list)
    periods: PeriodsDiff | None = None  # when either plan is phased

    def counts(self) -> dict[str, int]:
        """Deployments to add, change and remove (the `Plan: ...` line)."""
        return {
            "add": sum(1 for d in self.deployments if d.sign == "+"),
            "change": sum(1 for d in self.deployments if d.sign == "~"),
            "remove": sum(1 for d in self.deployments if d.sign == "-"),
        }

    def metric(self, name: str) -> MetricDelta:
        """The summary figure `name` (KeyError when it is not one)."""
        for m in self.summary:
            if m.metric == name:
                return m
        raise KeyError(name)
