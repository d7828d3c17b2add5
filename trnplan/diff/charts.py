"""The Mermaid charts a pull-request comment carries (GitHub draws them): the capex change by category and,
for two plans with periods, the installed IT MW per period."""

from __future__ import annotations

import math
import re
from collections import defaultdict

from trnplan.diff.model import PlanDiff

CHART_MAX_CATEGORIES = 16
_CHART_UNITS = ((1e9, "$B"), (1e6, "$M"), (1e3, "$K"), (1.0, "$"))


def _chart_label(category: str) -> str:
    """A category as a Mermaid axis label: no quotes, brackets or backticks that could end it (or the
    code block), at most 24 characters."""
    return re.sub(r"[^A-Za-z0-9 _./+-]", "", category)[:24].strip() or "?"


def _axis_end(top: float) -> str:
    """The axis end just above `top`, at two significant figures: 512 -> 520, 5.4 -> 5.5."""
    step = 10 ** (math.floor(math.log10(top)) - 1)
    return f"{(math.floor(top / step) + 1) * step:.4g}"


def capex_changes(d: PlanDiff) -> list[tuple[str, float]]:
    """(category, capex change in USD) per BOM category whose capex changed, summed in cents, sorted by
    category."""
    change: dict[str, int] = defaultdict(int)
    for b in d.bom:
        change[b.category] += round(b.delta_usd * 100)
    return [(c, change[c] / 100) for c in sorted(change) if change[c]]


def capex_chart(d: PlanDiff) -> str:
    """A Mermaid bar chart of the capex change by category, as a fenced block; '' when no category's capex
    changed. A bar is the size of the change and its label carries the sign (`chips +512`): Mermaid's
    bars grow from the axis, so bars below zero (or a second series for them) would not read right."""
    changes = capex_changes(d)[:CHART_MAX_CATEGORIES]
    if not changes:
        return ""
    top = max(abs(v) for _, v in changes)
    div, unit = next((div, unit) for div, unit in _CHART_UNITS if top >= div or div == 1.0)

    sizes = [f"{abs(v) / div:.3g}" for _, v in changes]
    labels = ", ".join(f'"{_chart_label(c)} {"+" if v > 0 else "-"}{size}"'
                       for (c, v), size in zip(changes, sizes, strict=True))
    return "\n".join([
        "```mermaid",
        '%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#1f77b4"}}}}%%',
        "xychart-beta horizontal",
        f'    title "Capex change by category, {unit} (the sign in the label)"',
        f"    x-axis [{labels}]",
        f'    y-axis "{unit}" 0 --> {_axis_end(top / div)}',
        f"    bar [{', '.join(sizes)}]",
        "```",
    ])


def mw_chart(d: PlanDiff) -> str:
    """A Mermaid line chart of the installed IT MW per period, base and head, as a fenced block; '' for a
    diff without two phased sides. Each period's MW is its plan's `periods[].totals.it_power_kw`; a period
    one side lacks reads 0 there."""
    p = d.periods
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
