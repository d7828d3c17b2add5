"""The diff of two plans as a value: summary metrics, per-site choices, deployments, BOM lines and the TCO
delta attributed to categories.

Money is compared in integer cents, so deltas negate exactly when the plans swap and the TCO attribution
sums to the TCO delta to the cent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from trnplan.diff.periods import PeriodsDiff, diff_periods, phased_capex_weights, phased_opex_cents
from trnplan.numbers import canon_float, cents
from trnplan.plan.model import DeploymentRow, Inputs, Plan, SolverInfo

HOURS_PER_YEAR = 8760

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
OPEX_CATEGORIES = ("energy", "colocation")

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


def _clean(value: float) -> float:
    """Float noise and -0.0 rounded away, whole numbers as ints."""
    return canon_float(float(value))


def _delta(old: float, new: float, money: bool) -> float:
    if money:
        return (cents(new) - cents(old)) / 100
    return _clean(new - old)


def _pct(old: float, delta: float) -> float | None:
    return round(delta / old * 100, 6) if old else None


def solver_text(solver: SolverInfo | None) -> str:
    """`HiGHS 1.16.0 (optimal, gap 0)`; '' for a plan without a solver."""
    if solver is None:
        return ""
    name = f"{solver.name} {solver.version}".strip()
    gap = "gap ?" if solver.mip_gap is None else f"gap {solver.mip_gap:g}"
    return f"{name} ({solver.status}, {gap})"


def _summary(base: Plan, head: Plan) -> list[MetricDelta]:
    out = []
    for metric, unit, _ in SUMMARY_METRICS:
        old, new = base.totals.figure(metric), head.totals.figure(metric)
        delta = _delta(old, new, metric in MONEY_METRICS)
        out.append(MetricDelta(metric, unit, old, new, delta, _pct(old, delta)))
    for metric, unit, _ in OPTIONAL_METRICS:
        if getattr(base.totals, metric) is None and getattr(head.totals, metric) is None:
            continue
        old, new = base.totals.figure(metric), head.totals.figure(metric)
        delta = _delta(old, new, False)
        out.append(MetricDelta(metric, unit, old, new, delta, _pct(old, delta)))
    return out


def _joined(values: Iterable[str]) -> str:
    return " + ".join(sorted(set(values)))


def site_choices(plan: Plan) -> dict[str, dict[str, str]]:
    """Per site, what it chose: forms, coolings and scale-up switches in use (joined with ` + `) and the
    scale-out switch."""
    return {
        site: {
            "form": _joined(d.form for d in s.deployments),
            "cooling": _joined(d.cooling for d in s.deployments),
            "scale_up_switch": _joined(d.scale_up_switch for d in s.deployments),
            "scale_out_switch": s.scale_out.switch,
        }
        for site, s in plan.sites.items()
    }


def _choices(base: Plan, head: Plan) -> list[ChoiceChange]:
    old, new = site_choices(base), site_choices(head)
    out = []
    for site in sorted(set(old) | set(new)):
        for f in CHOICE_FIELDS:
            a = old[site][f] if site in old else None
            b = new[site][f] if site in new else None
            if a != b:
                out.append(ChoiceChange(site, f, a, b))
    return out


def _figures(d: DeploymentRow) -> dict[str, float]:
    """A deployment's compared figures, capex in cents (so summing rows is exact)."""
    return {
        "units": d.units,
        "racks": d.racks,
        "chips": d.chips,
        "it_power_kw": d.it_power_kw,
        "capex_usd": cents(d.capex_usd),
    }


def _deployment_rows(plan: Plan) -> dict[tuple[str, str], dict[str, float]]:
    """(site, form/cooling/scale_up_switch) -> the deployment's figures; rows that share a key are summed."""
    acc: dict[tuple[str, str], dict[str, float]] = {}
    for site, s in plan.sites.items():
        for d in s.deployments:
            row = acc.setdefault((site, d.key), dict.fromkeys(DEPLOYMENT_FIELDS, 0.0))
            for f, value in _figures(d).items():
                row[f] += value
    return {
        key: {f: row[f] / 100 if f == "capex_usd" else _clean(row[f]) for f in DEPLOYMENT_FIELDS}
        for key, row in acc.items()
    }


def _deployments(base: Plan, head: Plan) -> list[DeploymentChange]:
    old, new = _deployment_rows(base), _deployment_rows(head)
    out = []
    for key in sorted(set(old) | set(new)):
        site, name = key
        if key not in old:
            out.append(DeploymentChange("+", site, name, {f: (None, new[key][f]) for f in DEPLOYMENT_FIELDS}))
        elif key not in new:
            out.append(DeploymentChange("-", site, name, {f: (old[key][f], None) for f in DEPLOYMENT_FIELDS}))
        else:
            changed: dict[str, tuple[float | None, float | None]] = {
                f: (old[key][f], new[key][f]) for f in DEPLOYMENT_FIELDS if old[key][f] != new[key][f]
            }
            if changed:
                out.append(DeploymentChange("~", site, name, changed))
    return out


def _bom_rows(plan: Plan) -> dict[tuple[str, str, str], tuple[float, int]]:
    """(site, category, item) -> (quantity, cents); lines that share a key are summed."""
    qty: dict[tuple[str, str, str], float] = defaultdict(float)
    usd: dict[tuple[str, str, str], int] = defaultdict(int)
    for line in plan.bom:
        key = (line.site, line.category, line.item)
        qty[key] += line.quantity
        usd[key] += cents(line.extended_usd)
    return {k: (_clean(qty[k]), usd[k]) for k in qty}


def _bom(base: Plan, head: Plan) -> list[BomDelta]:
    old, new = _bom_rows(base), _bom_rows(head)
    out = []
    for key in sorted(set(old) | set(new)):
        site, category, item = key
        if key not in old:
            q, c = new[key]
            out.append(BomDelta("+", site, category, item, None, q, None, c / 100, c / 100))
        elif key not in new:
            q, c = old[key]
            out.append(BomDelta("-", site, category, item, q, None, c / 100, None, -c / 100))
        elif old[key] != new[key]:
            (q0, c0), (q1, c1) = old[key], new[key]
            out.append(BomDelta("~", site, category, item, q0, q1, c0 / 100, c1 / 100, (c1 - c0) / 100))
    return out


# --- where the TCO went -----------------------------------------------------------------------------


def _horizon_years(plan: Plan) -> float | None:
    """The plan's horizon: economics.horizon_years, else recovered from $/chip-hour (older plans):
    years = TCO / (chips x usd_per_chip_hour x 8760), rounded."""
    if plan.economics is not None:
        return plan.economics.horizon_years
    t = plan.totals
    if t.tco_usd and t.chips and t.usd_per_chip_hour:
        years = round(t.tco_usd / (t.chips * t.usd_per_chip_hour * HOURS_PER_YEAR))
        return years if years >= 1 else None
    return None


def _split(total: int, weights: dict[str, int]) -> dict[str, int]:
    """Split integer `total` over keys in proportion to non-negative integer weights, exactly (largest
    remainder; ties by key), so the parts sum to `total`."""
    keys = sorted(weights)
    wsum = sum(weights[k] for k in keys)
    if wsum <= 0:
        keys = keys or ["capex"]
        share = {k: Fraction(total, len(keys)) for k in keys}
    else:
        share = {k: Fraction(total * weights[k], wsum) for k in keys}
    floor = {k: math.floor(share[k]) for k in keys}
    left = total - sum(floor.values())
    for k in sorted(keys, key=lambda k: (-(share[k] - floor[k]), k))[:left]:
        floor[k] += 1
    return floor


def tco_parts_cents(plan: Plan) -> dict[str, int] | None:
    """The plan's TCO in cents by category, summing exactly to cents(totals.tco_usd); None when the plan
    lacks the figures (totals.energy_usd_per_year, colocation_usd_per_year, a horizon).

    TCO = capex-driven part + horizon_years x (energy + colocation) per year; the capex-driven part
    (capex x (CRF + maintenance_rate) x horizon) is the remainder, split over BOM categories in proportion
    to their capex.
    """
    tco = cents(plan.totals.tco_usd)
    capex_by_category = _capex_cents(plan)
    if tco == 0 and not plan.bom:
        return {c: 0 for c in OPEX_CATEGORIES}
    energy, colocation = plan.totals.energy_usd_per_year, plan.totals.colocation_usd_per_year
    years = _horizon_years(plan)
    if energy is None or colocation is None or years is None:
        return None
    opex = phased_opex_cents(plan) if plan.periods is not None else None
    opex = opex or {"energy": round(years * cents(energy)), "colocation": round(years * cents(colocation))}
    capex_part = tco - opex["energy"] - opex["colocation"]
    return {**_split(capex_part, dict(capex_by_category)), **opex}


def _capex_cents(plan: Plan) -> dict[str, int]:
    if plan.periods is not None:
        return phased_capex_weights(plan)
    out: dict[str, int] = defaultdict(int)
    for line in plan.bom:
        out[line.category] += cents(line.extended_usd)
    return out


def _steady(base: Plan, head: Plan, old: dict[str, int], new: dict[str, int]) -> None:
    """Categories whose capex is the same in both plans, under the same money terms, keep the same TCO
    share: the largest-remainder split may put a cent more on one side, which would show as `+$0.01`.
    Both sides then get the lesser of the two, and what that takes or gives goes, on each side, to the
    category that changed most (so each side still sums to its TCO, and swapping the plans mirrors it)."""
    if base.economics is None or head.economics is None:
        return
    if base.economics.tco_per_capex_usd != head.economics.tco_per_capex_usd:
        return
    old_capex, new_capex = _capex_cents(base), _capex_cents(head)
    steady = [c for c in old if c in new and c not in OPEX_CATEGORIES and old_capex[c] == new_capex[c]]
    if not any(old[c] != new[c] for c in steady):
        return
    changed = [c for c in old if c in new and c not in steady]  # energy and colocation at least
    target = max(changed, key=lambda c: (abs(new[c] - old[c]), c))
    for c in steady:
        common = min(old[c], new[c])
        old[target] += old[c] - common
        new[target] += new[c] - common
        old[c] = new[c] = common


def _attribution(base: Plan, head: Plan) -> list[CategoryDelta] | None:
    old, new = tco_parts_cents(base), tco_parts_cents(head)
    if old is None or new is None:
        return None
    _steady(base, head, old, new)
    capex_cats = sorted((set(old) | set(new)) - set(OPEX_CATEGORIES))
    return [
        CategoryDelta(c, old.get(c, 0) / 100, new.get(c, 0) / 100, (new.get(c, 0) - old.get(c, 0)) / 100)
        for c in [*capex_cats, *OPEX_CATEGORIES]
    ]


# --- the diff ---------------------------------------------------------------------------------------


def _is_empty(plan: Plan) -> bool:
    """The stand-in for a plan that does not exist (`Plan.empty`): nothing was computed, from nothing."""
    return plan.solver is None and not plan.sites


def _input_values(inputs: Inputs | None) -> dict[str, str]:
    """`specs` and each `--set PATH` of a plan's inputs, with their values; the defaults for none."""
    if inputs is None:
        return {"specs": "default"}
    values = {"specs": ", ".join(inputs.specs) or "default"}
    for override in inputs.overrides:
        path, _, value = override.partition("=")
        values[f"--set {path.strip()}"] = value.strip()
    return values


def _inputs(base: Plan, head: Plan) -> list[InputChange]:
    """What the two plans were computed from, where it differs (nothing when a side does not exist)."""
    if _is_empty(base) or _is_empty(head):
        return []
    old, new = _input_values(base.inputs), _input_values(head.inputs)
    names = ["specs"] + sorted((set(old) | set(new)) - {"specs"})
    return [InputChange(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n)]


def _both_and_differ(a: object, b: object) -> bool:
    """Both sides state something (non-empty), and not the same thing."""
    return bool(a) and bool(b) and a != b


def _notes(base: Plan, head: Plan, different: bool, attributed: bool) -> list[str]:
    """What a reader should know beyond the tables: a scenario mismatch, provenance that changed while the
    plan did not, a solver change, and a missing attribution."""
    notes = []
    if base.scenario != head.scenario and base.sites and head.sites:
        notes.append(f"comparing different scenarios: '{base.scenario}' and '{head.scenario}'")
    if _both_and_differ(base.inputs_digest, head.inputs_digest) and not different:
        notes.append("the inputs digest changed but the plan did not")
    base_solver, head_solver = solver_text(base.solver), solver_text(head.solver)
    if _both_and_differ(base_solver, head_solver):
        notes.append(f"solved by {base_solver} in base and {head_solver} in head")
    if _both_and_differ(base.binding, head.binding) and not different:
        notes.append("what holds the plan back (binding constraints) changed, the plan did not")
    if not attributed:
        notes.append(
            "TCO attribution needs totals.energy_usd_per_year, totals.colocation_usd_per_year and "
            "economics.horizon_years in both plans; re-plan to get it"
        )
    return notes


def diff_plans(base: Plan, head: Plan, base_label: str = "base", head_label: str = "head") -> PlanDiff:
    """Compare two plans: summary metrics, per-site choices, deployments (keyed by site and
    form/cooling/scale_up_switch), BOM lines (keyed by site, category, item) and the TCO delta by category."""
    summary = _summary(base, head)
    choices = _choices(base, head)
    deployments = _deployments(base, head)
    bom = _bom(base, head)
    attribution = _attribution(base, head)
    periods = diff_periods(base, head)
    changed = any(m.delta != 0 for m in summary) or (periods is not None and periods.different)
    different = bool(choices or deployments or bom or changed)
    return PlanDiff(
        base_label=base_label,
        head_label=head_label,
        base_digest=base.inputs_digest,
        head_digest=head.inputs_digest,
        base_solver=solver_text(base.solver),
        head_solver=solver_text(head.solver),
        different=different,
        summary=summary,
        choices=choices,
        deployments=deployments,
        bom=bom,
        attribution=attribution or [],
        scenario=head.scenario if head.sites or not base.sites else base.scenario,
        notes=_notes(base, head, different, attribution is not None) + (periods.notes() if periods else []),
        inputs=_inputs(base, head),
        periods=periods,
    )
