"""A plan diff as tables: the verdict, summary, choices, deployments, BOM lines, TCO attribution and
provenance (both digests and solvers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from trnplan.numbers import fmt
from trnplan.render.tables import num_col, spaced, table

if TYPE_CHECKING:
    from trnplan.diff import PlanDiff

SIGN_STYLE = {"+": "green", "-": "red", "~": "yellow"}
ATTRIBUTION_NOTE = ("capex categories carry their share of capex x (CRF + maintenance) x horizon; "
                    "energy and colocation over the horizon")


def _metric(value: Any, unit: str, signed: bool = False) -> str:
    """A summary metric in its unit: USD as dollars ($/year as $ .../y), kW, PFLOPs, counts."""
    if value is None:
        return "-"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    if unit.startswith("USD"):
        rest = unit[3:]
        text = fmt(value, "usd", signed)
        return text + {"/year": "/y", "": ""}.get(rest, rest)
    kind = {"kW": "kw", "PFLOPs": "pflops", "MW": "mw", "TB": "tb"}.get(unit, "num")
    return fmt(value, kind, signed)


def _field(name: str, value: Any) -> str:
    """A deployment field of a diff: money as dollars, the rest as numbers."""
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt(value, "usd" if name.endswith("_usd") else "kw" if name.endswith("_kw") else "num")
    return str(value)


def render_diff(d: PlanDiff) -> RenderableType:
    """Summary first, then choices, deployments (+ added, - removed, ~ changed), BOM, attribution and
    provenance (both digests and solvers)."""
    parts: list[RenderableType] = [_verdict(d), _summary(d)]
    if d.choices:
        parts.append(_choices(d))
    if d.deployments:
        parts.append(_deployments(d))
    if d.bom:
        parts.append(_bom(d))
    if d.attribution:
        parts.append(_attribution(d))
    parts.append(_provenance(d))
    return Group(*spaced(parts))


def _verdict(d: PlanDiff) -> Text:
    head = Text()
    head.append(f"{d.base_label} -> {d.head_label}: ", style="bold")
    head.append("plans differ" if d.different else "no differences",
                style="bold yellow" if d.different else "bold green")
    for note in d.notes:
        head.append(f"\nnote: {note}")
    return head


def _summary(d: PlanDiff) -> Table:
    from trnplan.diff import metric_label

    summary = table("Summary")
    summary.add_column("metric")
    for h in ("base", "head", "change", "%"):
        num_col(summary, h)
    for m in d.summary:
        pct = fmt(m.pct / 100, "pct", signed=True) if m.pct is not None else "-"
        delta = _metric(m.delta, m.unit, signed=True)
        summary.add_row(metric_label(m.metric), _metric(m.old, m.unit), _metric(m.new, m.unit), delta,
                        pct, style=None if m.delta else "dim")
    return summary


def _choices(d: PlanDiff) -> Table:
    c = table("Choices")
    c.add_column("site")
    c.add_column("choice")
    c.add_column("base")
    c.add_column("head")
    for ch in d.choices:
        c.add_row(ch.site, ch.field, "-" if ch.old is None else ch.old, "-" if ch.new is None else ch.new)
    return c


def _deployments(d: PlanDiff) -> Table:
    t = table("Deployments")
    t.add_column("", no_wrap=True, min_width=1)
    t.add_column("site")
    t.add_column("form/cooling/scale-up")
    t.add_column("base -> head")
    for dep in d.deployments:
        changes = []
        for name, (old, new) in dep.fields.items():
            if dep.sign == "+":
                changes.append(f"{name} {_field(name, new)}")
            elif dep.sign == "-":
                changes.append(f"{name} {_field(name, old)}")
            else:
                changes.append(f"{name} {_field(name, old)} -> {_field(name, new)}")
        sign = Text(dep.sign, style=SIGN_STYLE.get(dep.sign, ""))
        t.add_row(sign, dep.site, dep.key, ", ".join(changes))
    t.caption = "+ added, - removed, ~ changed"
    return t


def _bom(d: PlanDiff) -> Table:
    b = table("BOM lines")
    b.add_column("", no_wrap=True, min_width=1)
    b.add_column("site")
    b.add_column("category")
    b.add_column("item")
    for h in ("qty base", "qty head", "base", "head", "change"):
        num_col(b, h)
    for line in d.bom:
        b.add_row(
            Text(line.sign, style=SIGN_STYLE.get(line.sign, "")), line.site, line.category, line.item,
            fmt(line.old_qty), fmt(line.new_qty), fmt(line.old_usd, "usd"), fmt(line.new_usd, "usd"),
            fmt(line.delta_usd, "usd", signed=True),
        )
    return b


def _attribution(d: PlanDiff) -> Table:
    a = table("TCO change by category")
    a.add_column("category")
    for h in ("base", "head", "change"):
        num_col(a, h)
    for cat in d.attribution:
        a.add_row(cat.category, fmt(cat.old_usd, "usd"), fmt(cat.new_usd, "usd"),
                  fmt(cat.delta_usd, "usd", signed=True), style=None if cat.delta_usd else "dim")
    a.caption = ATTRIBUTION_NOTE
    return a


def _provenance(d: PlanDiff) -> Table:
    prov = table("Provenance")
    prov.add_column("", style="bold")
    prov.add_column("plan")
    prov.add_column("inputs digest", overflow="fold")
    prov.add_column("solver")
    prov.add_row("base", d.base_label, d.base_digest or "-", d.base_solver or "-")
    prov.add_row("head", d.head_label, d.head_digest or "-", d.head_solver or "-")
    return prov
