"""A plan diff as a pull-request comment: marker, TCO headline and summary first, then collapsible details,
trimmed to fit GitHub's comment limit without ever cutting the headline, the summary or the last line."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from trnplan.diff.model import DEPLOYMENT_FIELDS, MONEY_METRICS, MetricDelta, PlanDiff, metric_label
from trnplan.diff.periods import mw_chart, period_section, period_summary_lines
from trnplan.numbers import money_short, plain, signed

MARKER = "<!-- trnplan-diff -->"
GITHUB_COMMENT_MAX_CHARS = 65000  # GitHub refuses comments over 65,536 characters
TRIMMED_NOTE = (
    "*Note: details trimmed to fit {max_chars:,} characters; run `trnplan diff --format json` "
    "for the full diff.*"
)
TRIM_ORDER = ("bom", "periods", "deployments", "choices", "attribution")
"""Detail tables in the order they give up rows: the largest, least decisive first."""


def plural(n: int, noun: str) -> str:
    """`1 line`, `3 lines`."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def format_metric(metric: str, value: float) -> str:
    """A summary value in its unit, for tables: $1,234,567 (cents under $1,000), 79.2 kW, 1,024 chips."""
    if metric in MONEY_METRICS:
        v = abs(value)
        text = f"${v:,.0f}" if v >= 1000 or float(v).is_integer() else f"${v:,.2f}"
        return ("-" if value < 0 else "") + text
    if metric in ("usd_per_pflop_hour", "usd_per_effective_pflop_hour"):
        if value == 0:
            return "$0"
        return ("-" if value < 0 else "") + f"${abs(value):,.4f}"
    if metric in ("it_power_kw", "facility_power_kw"):
        return f"{plain(value, 1)} kW"
    if metric in ("fp8_pflops", "effective_fp8_pflops"):
        return plain(value, 1)
    return plain(value, 3)


def format_delta(metric: str, delta: float) -> str:
    """A change in the metric's unit with its sign: +$1,243,933, -42 kW, 0."""
    if delta == 0:
        return format_metric(metric, 0)
    return signed(format_metric(metric, abs(delta)), delta)


def format_pct(m: MetricDelta) -> str:
    """`+35.0%`; `new` when the metric was 0 in base and is not in head; '' when it is 0 in both."""
    if m.pct is None:
        return "new" if m.new else ""
    return f"{m.pct:+.1f}%"


def headline(d: PlanDiff) -> str:
    """`**TCO** $2.77B → $3.74B (+$970M, +35.0%)`."""
    m = d.metric("tco_usd")
    change = signed(money_short(abs(m.delta)), m.delta) if m.delta else "no change"
    pct = f", {m.pct:+.1f}%" if m.pct is not None and m.delta else ""
    return f"**TCO** {money_short(m.old)} → {money_short(m.new)} ({change}{pct})"


def plan_line(d: PlanDiff) -> str:
    """`Plan: N to add, N to change, N to remove.`"""
    c = d.counts()
    return f"Plan: {c['add']} to add, {c['change']} to change, {c['remove']} to remove."


# --- tables -----------------------------------------------------------------------------------------


def _cell(value: object) -> str:
    if value is None:
        return "—"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _field_value(name: str, value: float | None) -> str:
    if value is None:
        return "—"
    if name == "capex_usd":
        return format_metric("capex_usd", value)
    if name == "it_power_kw":
        return plain(value, 1)
    return plain(value, 3)


def _arrow(name: str, old: float | None, new: float | None) -> str:
    if old is None or new is None or old == new:
        return _field_value(name, new if new is not None else old)
    return f"{_field_value(name, old)} → {_field_value(name, new)}"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _summary_table(d: PlanDiff) -> list[str]:
    rows = ["| Metric | Base | Head | Change | % |", "|---|--:|--:|--:|--:|"]
    for m in d.summary:
        old, new = format_metric(m.metric, m.old), format_metric(m.metric, m.new)
        rows.append(_row(metric_label(m.metric), old, new, format_delta(m.metric, m.delta), format_pct(m)))
    return rows


@dataclass(frozen=True)
class _Section:
    """A collapsible detail table: its summary line, an intro, the table head and its rows."""

    summary: str
    intro: list[str]
    table_head: list[str]
    rows: list[str]

    def text(self, keep: int) -> str:
        """The `<details>` block with the first `keep` rows, saying how many were trimmed."""
        shown = self.rows[:keep]
        body = [f"<details><summary>{self.summary}</summary>", ""]
        if shown or not self.rows:
            body += self.intro
        if shown:
            body += [*self.table_head, *shown, ""]
        if len(self.rows) > keep:
            more = len(self.rows) - keep
            body += [
                f"*… {more} {'more ' if keep else ''}row{'s' if more != 1 else ''} trimmed; "
                "see `trnplan diff --format json` for all*",
                "",
            ]
        body.append("</details>")
        return "\n".join(body)


def _choices_section(d: PlanDiff) -> _Section | None:
    if not d.choices:
        return None
    sites = len({ch.site for ch in d.choices})
    return _Section(
        f"Choices: {plural(len(d.choices), 'change')} at {plural(sites, 'site')}",
        [],
        ["| Site | Choice | Base | Head |", "|---|---|---|---|"],
        [f"| {_cell(c.site)} | {c.field} | {_cell(c.old)} | {_cell(c.new)} |" for c in d.choices],
    )


def _deployments_section(d: PlanDiff) -> _Section | None:
    if not d.deployments:
        return None
    rows = []
    for c in d.deployments:
        cells = [_arrow(f, *c.fields[f]) if f in c.fields else "" for f in DEPLOYMENT_FIELDS]
        rows.append(f"| `{c.sign}` | {_cell(c.site)} | {_cell(c.key)} | " + " | ".join(cells) + " |")
    n = d.counts()
    return _Section(
        f"Deployments: {n['add']} to add, {n['change']} to change, {n['remove']} to remove",
        ["`+` added, `-` removed, `~` changed (base → head)", ""],
        [
            "| | Site | Deployment | Units | Racks | Chips | IT kW | Capex |",
            "|---|---|---|--:|--:|--:|--:|--:|",
        ],
        rows,
    )


def _bom_section(d: PlanDiff) -> _Section | None:
    if not d.bom:
        return None
    rows = [
        _row(
            f"`{b.sign}`",
            _cell(b.site),
            _cell(b.category),
            _cell(b.item),
            _arrow("quantity", b.old_qty, b.new_qty),
            _arrow("capex_usd", b.old_usd, b.new_usd),
            format_delta("capex_usd", b.delta_usd),
        )
        for b in d.bom
    ]
    return _Section(
        f"BOM: {plural(len(d.bom), 'line')} changed",
        [],
        ["| | Site | Category | Item | Quantity | USD | Change |", "|---|---|---|---|--:|--:|--:|"],
        rows,
    )


def _attribution_section(d: PlanDiff) -> _Section | None:
    if not d.attribution:
        return None
    rows = [
        _row(
            _cell(a.category),
            format_metric("tco_usd", a.old_usd),
            format_metric("tco_usd", a.new_usd),
            format_delta("tco_usd", a.delta_usd),
        )
        for a in d.attribution
    ]
    m = d.metric("tco_usd")
    rows.append(
        f"| **total** | **{format_metric('tco_usd', m.old)}** | **{format_metric('tco_usd', m.new)}** "
        f"| **{format_delta('tco_usd', m.delta)}** |"
    )
    return _Section(
        "TCO change by category",
        [
            "Capex-driven TCO (capex x (CRF + maintenance) x horizon) split by each category's capex, "
            "plus energy and colocation over the horizon; the changes sum to the TCO change.",
            "",
        ],
        ["| Category | Base TCO | Head TCO | Change |", "|---|--:|--:|--:|"],
        rows,
    )


def _sections(d: PlanDiff, notes: list[str]) -> dict[str, _Section]:
    """The detail tables that have rows, in the order the comment shows them."""
    candidates = {
        "choices": _choices_section(d),
        "periods": _Section(*section) if (section := period_section(d)) else None,
        "deployments": _deployments_section(d),
        "bom": _bom_section(d),
        "attribution": _attribution_section(d),
        "notes": _Section("Notes", notes, [], []) if notes else None,
    }
    return {name: s for name, s in candidates.items() if s is not None}


def _short_digest(digest: str) -> str:
    if not digest:
        return "—"
    algo, _, hexpart = digest.partition(":")
    return f"`{algo}:{hexpart[:12]}`" if hexpart else f"`{digest[:19]}`"


def _provenance(d: PlanDiff) -> list[str]:
    return [
        "| | Plan | Inputs digest | Solver |",
        "|---|---|---|---|",
        _row("Base", f"`{_cell(d.base_label)}`", _short_digest(d.base_digest), _cell(d.base_solver or None)),
        _row("Head", f"`{_cell(d.head_label)}`", _short_digest(d.head_digest), _cell(d.head_solver or None)),
    ]


# --- the capex chart (Mermaid, which GitHub draws) --------------------------------------------------

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


# --- the comment, trimmed to fit --------------------------------------------------------------------


@dataclass
class _Layout:
    """The comment's parts and how many rows of each detail table it shows (`keep`), as trimming goes."""

    head: str
    tail: str
    sections: dict[str, _Section]
    keep: dict[str, int]
    note: str = ""
    chart: str = ""

    def text(self) -> str:
        parts = [self.head, *([self.note] if self.note else [])]
        parts += [s.text(self.keep[name]) for name, s in self.sections.items()]
        parts += [self.chart] if self.chart else []  # below the details, which GitHub shows folded
        parts.append(self.tail)
        return "\n\n".join(parts) + "\n"


def _largest(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [lo, hi] with fits(n), given fits(lo) and fits monotone (a binary search)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _trim(layout: _Layout, name: str, max_chars: int) -> bool:
    """Keep as many rows of section `name` as fit; False (and none kept) when even none fit."""
    rows = layout.keep[name]
    layout.keep[name] = 0
    if len(layout.text()) > max_chars:
        return False

    def fits(n: int) -> bool:
        layout.keep[name] = n
        return len(layout.text()) <= max_chars

    layout.keep[name] = _largest(0, rows, fits)
    return True


def _fit(layout: _Layout, max_chars: int) -> str:
    """The whole comment if it fits; else tables trimmed in TRIM_ORDER until it does; else without the
    chart; else only what may never be cut."""
    text = layout.text()
    if len(text) <= max_chars:
        return text
    layout.note = TRIMMED_NOTE.format(max_chars=max_chars)
    for name in TRIM_ORDER:
        if name in layout.sections and _trim(layout, name, max_chars):
            return layout.text()
    layout.chart = ""
    text = layout.text()
    if len(text) <= max_chars:
        return text
    return "\n\n".join([layout.head, layout.note, layout.tail]) + "\n"


MAX_INPUT_LINES = 10


def no_changes_line(d: PlanDiff) -> str:
    """The one line a diff of two identical plans is: `` `s`: no changes. ``"""
    return f"`{_cell(d.scenario or '?')}`: no changes."


def input_lines(d: PlanDiff) -> list[str]:
    """What the plans were computed from, where it differs: `` - `--set PATH`: `old` → `new` ``."""
    if not d.inputs:
        return []
    lines = ["**Inputs changed:**", ""]
    for change in d.inputs[:MAX_INPUT_LINES]:
        old = f"`{_cell(change.old)}`" if change.old is not None else "—"
        new = f"`{_cell(change.new)}`" if change.new is not None else "—"
        lines.append(f"- `{_cell(change.name)}`: {old} → {new}")
    if len(d.inputs) > MAX_INPUT_LINES:
        lines.append(f"- … and {len(d.inputs) - MAX_INPUT_LINES} more; see `trnplan diff --format json`")
    return lines


def breach_lines(breaches: list[str]) -> list[str]:
    """The guardrails a diff breaches, as a list under a bold title; [] when none is."""
    return ["**Guardrails breached:**", "", *[f"- {b}" for b in breaches]] if breaches else []


def _no_change(d: PlanDiff, top: list[str], title: str, notes: list[str], extra: list[str]) -> str:
    """One line for identical plans; provenance and the notes when something besides the plan changed."""
    if not notes and not extra:
        return "\n".join([*top, no_changes_line(d)]) + "\n"
    body = [*top, title, "", "No change in plan."]
    body += ([""] + extra if extra else []) + ([""] + notes if notes else [])
    return "\n".join([*body, "", *_provenance(d), "", plan_line(d)]) + "\n"


def diff_to_markdown(
    d: PlanDiff,
    max_chars: int = GITHUB_COMMENT_MAX_CHARS,
    *,
    marker: bool = True,
    heading: str = "###",
    breaches: list[str] | None = None,
) -> str:
    """A pull-request comment: the marker, a TCO headline, the guardrails breached, what input changed and
    the summary table first, then collapsible details (choices, deployments, BOM lines, TCO by category),
    a Mermaid chart of the capex change by category,
    both plans' digests and solvers, and a last line `Plan: N to add, N to change, N to remove.`

    Over `max_chars`, detail rows are trimmed (BOM lines first, then deployments, choices, attribution),
    then the chart is left out, and the comment says so; the headline, summary and last line are never
    cut. Two identical plans are one line, `` `s`: no changes. ``
    """
    title = f"{heading} Plan diff: `{_cell(d.scenario or '?')}`"
    top = [MARKER] if marker else []
    notes = [f"- {n}" for n in d.notes]
    extra = breach_lines(breaches or []) + ([""] if breaches and d.inputs else []) + input_lines(d)
    if not d.different:
        return _no_change(d, top, title, notes, extra)
    sections = _sections(d, notes)
    lead = [headline(d), "", *([*extra, ""] if extra else [])]
    layout = _Layout(
        head="\n".join([*top, title, "", *lead, *_summary_table(d), *period_summary_lines(d)]),
        tail="\n".join([*_provenance(d), "", plan_line(d)]),
        sections=sections,
        keep={name: len(s.rows) for name, s in sections.items()},
        chart="\n\n".join(c for c in (capex_chart(d), mw_chart(d)) if c),
    )
    return _fit(layout, max_chars)
