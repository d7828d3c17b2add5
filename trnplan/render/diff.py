"""A plan diff as tables: the verdict, summary, choices, deployments, BOM lines, TCO attribution and
provenance (both digests and solvers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text

from trnplan.errors import visible
from trnplan.numbers import fmt
from trnplan.render.tables import Col, Grid, spaced

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
    """Summary first, then what input changed, choices, deployments (+ added, - removed, ~ changed), BOM,
    attribution and provenance (both digests and solvers). Two identical plans are one line."""
    if not d.different and not d.notes and not d.inputs:
        return _verdict(d)
    parts: list[RenderableType] = [_verdict(d), _summary(d)]
    if d.periods is not None:
        parts += _periods(d)
    if d.inputs:
        parts.append(_inputs(d))
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
    head.append(f"{visible(d.base_label)} -> {visible(d.head_label)}: ", style="bold")
    head.append("plans differ" if d.different else "no changes",
                style="bold yellow" if d.different else "bold green")
    for note in d.notes:
        head.append(f"\nnote: {visible(note)}")
    return head


def _summary(d: PlanDiff) -> Grid:
    from trnplan.diff import metric_label

    summary = Grid("Summary", [Col("metric")] + [Col(h, right=True) for h in ("base", "head", "change", "%")],
                   stack=[(0,), (1, 2), (3, 4)])
    for m in d.summary:
        pct = fmt(m.pct / 100, "pct", signed=True) if m.pct is not None else "-"
        delta = _metric(m.delta, m.unit, signed=True)
        summary.add_row(metric_label(m.metric), _metric(m.old, m.unit), _metric(m.new, m.unit), delta,
                        pct, style="" if m.delta else "dim")
    return summary


def _periods(d: PlanDiff) -> list[RenderableType]:
    """Per period, installed chips and IT power and capex bought, base -> head; then what each period
    changed, option by option (units installed and bought) and fabric by fabric."""
    from trnplan.diff import PERIOD_METRICS, figure_text, option_text

    assert d.periods is not None
    labels = [label for _, _, label in PERIOD_METRICS]
    t = Grid("Periods", [Col("period")] + [Col(f"{label}\nbase -> head", right=True) for label in labels],
             stack=[(0,), (1,), (2,), (3,)], caption="- : the plan has no such period")
    for period in d.periods.periods:
        cells = []
        for f in period.figures:
            old, new = figure_text(f, f.old), figure_text(f, f.new)
            cells.append(new if old == new else f"{old} -> {new}".replace("—", "-"))
        t.add_row(period.start, *cells, style="" if period.changed else "dim")
    out: list[RenderableType] = [t]
    c = Grid("What changed in each period", [Col("period"), Col(""), Col("site"), Col("option"),
                                               Col("base -> head", wrap=True, min_width=20)],
             keys=4, stack=[(0, 1), (2, 3), (4,)], caption="+ added, - removed, ~ changed")
    for period in d.periods.periods:
        for o in period.options:
            c.add_row(period.start, Text(o.sign, style=SIGN_STYLE.get(o.sign, "")), o.site, o.key,
                      option_text(o).replace("→", "->"))
        for fab in period.fabric:
            c.add_row(period.start, Text("~", style=SIGN_STYLE["~"]), fab.site, f"scale-out {fab.field}",
                      f"{fab.old or '-'} -> {fab.new or '-'}")
    if c.rows:
        out.append(c)
    return out


def _inputs(d: PlanDiff) -> Grid:
    t = Grid("Inputs", [Col("input"), Col("base", wrap=True), Col("head", wrap=True)], stack=[(0,), (1, 2)],
             caption="what the plans were computed from: spec directories and --set overrides")
    for change in d.inputs:
        t.add_row(change.name, "-" if change.old is None else change.old,
                  "-" if change.new is None else change.new)
    return t


def _choices(d: PlanDiff) -> Grid:
    c = Grid("Choices", [Col("site"), Col("choice"), Col("base", wrap=True), Col("head", wrap=True)], keys=2,
             stack=[(0, 1), (2, 3)])
    for ch in d.choices:
        c.add_row(ch.site, ch.field, "-" if ch.old is None else ch.old, "-" if ch.new is None else ch.new)
    return c


def _deployments(d: PlanDiff) -> Grid:
    from trnplan.diff.model import DEPLOYMENT_LABELS

    t = Grid("Deployments", [Col(""), Col("site"), Col("form/cooling/scale-up"),
                             Col("base -> head", wrap=True, min_width=30)],
             keys=3, stack=[(0,), (1, 2), (3,)], caption="+ added, - removed, ~ changed")
    for dep in d.deployments:
        changes = []
        for name, (old, new) in dep.fields.items():
            label = DEPLOYMENT_LABELS.get(name, name)
            if dep.sign == "+":
                changes.append(f"{label} {_field(name, new)}")
            elif dep.sign == "-":
                changes.append(f"{label} {_field(name, old)}")
            else:
                changes.append(f"{label} {_field(name, old)} -> {_field(name, new)}")
        sign = Text(dep.sign, style=SIGN_STYLE.get(dep.sign, ""))
        t.add_row(sign, dep.site, dep.key, ", ".join(changes))
    return t


def _bom(d: PlanDiff) -> Grid:
    b = Grid("BOM lines", [Col(""), Col("site"), Col("category"), Col("item", wrap=True, min_width=24)]
             + [Col(h, right=True) for h in ("qty base", "qty head", "base", "head", "change")],
             keys=4, stack=[(0,), (1, 2), (3,), (4, 5), (6, 7), (8,)])
    for line in d.bom:
        b.add_row(
            Text(line.sign, style=SIGN_STYLE.get(line.sign, "")), line.site, line.category, line.item,
            fmt(line.old_qty), fmt(line.new_qty), fmt(line.old_usd, "usd"), fmt(line.new_usd, "usd"),
            fmt(line.delta_usd, "usd", signed=True),
        )
    return b


def _attribution(d: PlanDiff) -> Grid:
    a = Grid("TCO change by category",
             [Col("category")] + [Col(h, right=True) for h in ("base", "head", "change")],
             caption=ATTRIBUTION_NOTE, stack=[(0,), (1, 2), (3,)])
    for cat in d.attribution:
        a.add_row(cat.category, fmt(cat.old_usd, "usd"), fmt(cat.new_usd, "usd"),
                  fmt(cat.delta_usd, "usd", signed=True), style="" if cat.delta_usd else "dim")
    return a


DIGEST_HEX = 16
"""Hex digits of an inputs digest a terminal shows (enough to tell two apart; JSON has all 64)."""


def _digest(digest: str) -> str:
    algo, _, hexpart = digest.partition(":")
    return f"{algo}:{hexpart[:DIGEST_HEX]}" if hexpart else (digest or "-")


def _provenance(d: PlanDiff) -> Grid:
    prov = Grid("Provenance", [Col("", style="bold"), Col("plan", wrap=True), Col("inputs digest"),
                               Col("solver", wrap=True)], stack=[(0,), (1, 2, 3)])
    prov.add_row("base", d.base_label, _digest(d.base_digest), d.base_solver or "-")
    prov.add_row("head", d.head_label, _digest(d.head_digest), d.head_solver or "-")
    return prov
