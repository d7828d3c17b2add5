"""Phased plans in a diff: period by period, what is installed and bought, and what each period changed.

Two phased plans are compared period by period (the union of their period starts); a single-period plan
against a phased one (a scenario that gained periods, or lost them) is said so, and their window totals
are what the summary compares. Pure functions of the two plans; `trnplan.diff.model` calls `diff_periods`,
the Markdown, JSON and terminal forms read the `PeriodsDiff`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from trnplan.numbers import canon_float, cents, plain
from trnplan.plan.model import PeriodSite, Plan, PlanPeriod

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
                       "line's purchases over the window")
        return out


def _span(starts: list[str]) -> str:
    return f"{len(starts)} period{'s' if len(starts) != 1 else ''} ({', '.join(starts)})"


def _figure(period: PlanPeriod | None, metric: str) -> float | None:
    return None if period is None else float(getattr(period.totals, metric))


def _figures(old: PlanPeriod | None, new: PlanPeriod | None) -> list[PeriodFigure]:
    out = []
    for metric, unit, _ in PERIOD_METRICS:
        a, b = _figure(old, metric), _figure(new, metric)
        if unit == "USD":
            delta = (cents(b or 0.0) - cents(a or 0.0)) / 100
        else:
            delta = canon_float((b or 0.0) - (a or 0.0))
        out.append(PeriodFigure(metric, unit, a, b, delta))
    return out


def _units(s: PeriodSite | None) -> dict[str, tuple[int, int]]:
    """key -> (installed units, bought units) of a site in a period (summed over rows of one key)."""
    out: dict[str, tuple[int, int]] = {}
    for d in s.deployments if s is not None else []:
        units, bought = out.get(d.key, (0, 0))
        out[d.key] = (units + d.units, bought + d.bought)
    return out


def _options(old: PlanPeriod, new: PlanPeriod) -> list[OptionChange]:
    out = []
    for site in sorted(set(old.sites) | set(new.sites)):
        a, b = _units(old.sites.get(site)), _units(new.sites.get(site))
        for key in sorted(set(a) | set(b)):
            (ua, ba), (ub, bb) = a.get(key, (0, 0)), b.get(key, (0, 0))
            if (ua, ba) != (ub, bb):
                out.append(OptionChange(site, key, ua, ub, ba, bb))
    return out


def _fabric_value(s: PeriodSite | None, name: str) -> str | None:
    if s is None:
        return None
    return s.scale_out.switch if name == "switch" else str(s.scale_out.tiers)


def _fabric(old: PlanPeriod, new: PlanPeriod) -> list[FabricChange]:
    out = []
    for site in sorted(set(old.sites) | set(new.sites)):
        for name in ("switch", "tiers"):
            a, b = _fabric_value(old.sites.get(site), name), _fabric_value(new.sites.get(site), name)
            if a != b:
                out.append(FabricChange(site, name, a, b))
    return out


def _absent(plan: Plan) -> bool:
    """The stand-in for a plan that does not exist (`Plan.empty`)."""
    return plan.solver is None and not plan.sites


def diff_periods(base: Plan, head: Plan) -> PeriodsDiff | None:
    """The periods of two plans compared; None when neither is phased."""
    if base.periods is None and head.periods is None:
        return None
    old = {p.start: p for p in base.periods or []}
    new = {p.start: p for p in head.periods or []}
    base_phased = base.periods is not None or _absent(base)  # a new or a gone scenario has no periods
    head_phased = head.periods is not None or _absent(head)
    kind: Kind = "phased" if base_phased and head_phased else "gained" if head_phased else "lost"
    periods = []
    for start in sorted(set(old) | set(new)):
        a, b = old.get(start), new.get(start)
        if a is not None and b is not None:
            periods.append(PeriodDelta(start, True, True, _figures(a, b), _options(a, b), _fabric(a, b)))
        else:
            periods.append(PeriodDelta(start, a is not None, b is not None, _figures(a, b)))
    return PeriodsDiff(kind, sorted(old), sorted(new), periods)


def phased_opex_cents(plan: Plan) -> dict[str, int] | None:
    """A phased plan's energy and colocation over the window, in cents: sum over periods of years x (opex
    per year - maintenance on the installed capex), split between energy and colocation as the last
    period's are (the plan states their split only for it); None without the plan's economics."""
    e, t = plan.economics, plan.totals
    energy_usd, colocation_usd = t.energy_usd_per_year, t.colocation_usd_per_year
    if e is None or plan.periods is None or energy_usd is None or colocation_usd is None:
        return None
    total = round(sum(
        p.years * (cents(p.totals.opex_usd_per_year) - cents(p.totals.capex_usd) * e.maintenance_rate)
        for p in plan.periods
    ))
    energy, colocation = cents(energy_usd), cents(colocation_usd)
    share = round(total * energy / (energy + colocation)) if energy + colocation else 0
    return {"energy": share, "colocation": total - share}


def phased_capex_weights(plan: Plan) -> dict[str, int]:
    """A phased plan's capex per category weighed by the years of the window left when it is bought (each
    purchase is charged for the rest of the window), in cent-microyears: the weights of the categories'
    shares of the capex-driven TCO."""
    left: dict[str, float] = {}
    remaining = 0.0
    for p in reversed(plan.periods or []):
        remaining += p.years
        left[p.start] = remaining
    out: dict[str, int] = {}
    for line in plan.bom:
        weight = round(cents(line.extended_usd) * left.get(line.period or "", 0.0) * 1_000_000)
        out[line.category] = out.get(line.category, 0) + weight
    return out


# --- forms ------------------------------------------------------------------------------------------


def periods_to_dict(p: PeriodsDiff) -> dict[str, Any]:
    """The JSON form of the periods of a diff."""
    return {
        "kind": p.kind,
        "base_starts": p.base_starts,
        "head_starts": p.head_starts,
        "periods": [
            {
                "start": d.start,
                "in_base": d.in_base,
                "in_head": d.in_head,
                "figures": [
                    {"metric": f.metric, "unit": f.unit, "old": f.old, "new": f.new, "delta": f.delta}
                    for f in d.figures
                ],
                "options": [
                    {"sign": o.sign, "site": o.site, "key": o.key,
                     "units": {"old": o.old_units, "new": o.new_units},
                     "bought": {"old": o.old_bought, "new": o.new_bought}}
                    for o in d.options
                ],
                "fabric": [{"site": f.site, "field": f.field, "old": f.old, "new": f.new} for f in d.fabric],
            }
            for d in p.periods
        ],
    }


def figure_text(f: PeriodFigure, value: float | None) -> str:
    """A period figure for people: chips as a count, IT power in MW, money in dollars; `—` when absent."""
    if value is None:
        return "—"
    if f.unit == "USD":
        return ("-" if value < 0 else "") + f"${abs(value):,.0f}"
    if f.unit == "kW":
        return f"{plain(value / 1000, 1)} MW"
    return plain(value, 0)


def _signed(f: PeriodFigure) -> str:
    if not f.delta:
        return "0"
    return ("+" if f.delta > 0 else "-") + figure_text(f, abs(f.delta)).lstrip("-")


def _md(value: object) -> str:
    return "—" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def period_summary_lines(d: Any) -> list[str]:
    """The per-period summary a Markdown diff shows under its summary table: each period's installed
    chips, IT power and capex bought, base → head; [] for a diff of single-period plans."""
    p: PeriodsDiff | None = getattr(d, "periods", None)
    if p is None:
        return []
    rows = ["", "| Period | Installed chips | IT power | Capex bought |", "|---|--:|--:|--:|"]
    for period in p.periods:
        cells = []
        for f in period.figures:
            old, new = figure_text(f, f.old), figure_text(f, f.new)
            delta = f" ({_signed(f)})" if f.old is not None and f.new is not None else ""
            cells.append(new if old == new else f"{old} → {new}{delta}")
        rows.append(f"| {period.start} | " + " | ".join(cells) + " |")
    return rows


def period_option_text(o: OptionChange) -> str:
    """`units 8 → 15, bought 8 → 15`."""
    parts = [f"units {o.old_units} → {o.new_units}" if o.old_units != o.new_units else f"units {o.new_units}"]
    if o.old_bought != o.new_bought:
        parts.append(f"bought {o.old_bought} → {o.new_bought}")
    return ", ".join(parts)


def period_section(d: Any) -> tuple[str, list[str], list[str], list[str]] | None:
    """The collapsible Markdown section of what changed in each period (summary, intro, table head, rows);
    None when no period of two phased plans changed an option or a fabric."""
    p: PeriodsDiff | None = getattr(d, "periods", None)
    if p is None:
        return None
    rows = []
    for period in p.periods:
        for o in period.options:
            rows.append(f"| {period.start} | `{o.sign}` | {_md(o.site)} | {_md(o.key)} "
                        f"| {period_option_text(o)} |")
        for f in period.fabric:
            rows.append(f"| {period.start} | `~` | {_md(f.site)} | scale-out {f.field} "
                        f"| {_md(f.old)} → {_md(f.new)} |")
    if not rows:
        return None
    changed = sum(1 for period in p.periods if period.options or period.fabric)
    return (
        f"Periods: {changed} of {len(p.periods)} changed",
        ["Installed units per site and option in each period, and what that period bought (base → head)", ""],
        ["| Period | | Site | Option | Change |", "|---|---|---|---|---|"],
        rows,
    )


def mw_chart(d: Any) -> str:
    """A Mermaid line chart of the installed IT MW per period, base and head, as a fenced block; '' for a
    diff without two phased sides. Each period's MW is its plan's `periods[].totals.it_power_kw`; a period
    one side lacks reads 0 there."""
    p: PeriodsDiff | None = getattr(d, "periods", None)
    if p is None or p.kind != "phased" or not p.periods:
        return ""
    figures = [next(f for f in period.figures if f.metric == "it_power_kw") for period in p.periods]
    old = [(f.old or 0.0) / 1000 for f in figures]
    new = [(f.new or 0.0) / 1000 for f in figures]
    top = max(old + new)
    if top <= 0:
        return ""
    months = ", ".join(f'"{period.start}"' for period in p.periods)
    return "\n".join([
        "```mermaid",
        '%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#999999, #1f77b4"}}}}%%',
        "xychart-beta",
        '    title "Installed IT MW per period: base (grey), head (blue)"',
        f"    x-axis [{months}]",
        f'    y-axis "MW" 0 --> {top * 1.1:.4g}',
        f"    line [{', '.join(f'{v:.4g}' for v in old)}]",
        f"    line [{', '.join(f'{v:.4g}' for v in new)}]",
        "```",
    ])
