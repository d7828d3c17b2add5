"""A plan diff as a pull-request comment: marker, TCO headline and summary first, then collapsible details,
trimmed to fit GitHub's comment limit without ever cutting the headline, the summary or the last line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from trnplan.diff.charts import capex_chart, mw_chart
from trnplan.diff.model import (
    DEPLOYMENT_FIELDS,
    MONEY_METRICS,
    MetricDelta,
    OptionChange,
    PeriodFigure,
    PlanDiff,
    metric_label,
)
from trnplan.numbers import money_short, plain, signed
from trnplan.safetext import md_code, md_text

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


def figure_text(f: PeriodFigure, value: float | None) -> str:
    """A period figure for people: chips as a count, IT power in MW, money in dollars; `—` when absent."""
    if value is None:
        return "—"
    if f.unit == "USD":
        return ("-" if value < 0 else "") + f"${abs(value):,.0f}"
    if f.unit == "kW":
        return f"{plain(value / 1000, 1)} MW"
    return plain(value, 0)


def _figure_delta(f: PeriodFigure) -> str:
    if not f.delta:
        return "0"
    return ("+" if f.delta > 0 else "-") + figure_text(f, abs(f.delta)).lstrip("-")


def option_text(o: OptionChange) -> str:
    """`units 8 → 15, bought 8 → 15`."""
    parts = [f"units {o.old_units} → {o.new_units}" if o.old_units != o.new_units else f"units {o.new_units}"]
    if o.old_bought != o.new_bought:
        parts.append(f"bought {o.old_bought} → {o.new_bought}")
    return ", ".join(parts)


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
    """Text from a plan in a table cell or a line (`safetext.md_text`: a CR, `</details>` or `@team` in
    it stays text); `—` for none."""
    return "—" if value is None else md_text(value)


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


def _period_rows(d: PlanDiff) -> list[str]:
    """The per-period summary under the summary table: each period's installed chips, IT power and capex
    bought, base → head; [] for a diff of plans without periods."""
    if d.periods is None:
        return []
    rows = ["", "| Period | Installed chips | IT power | Capex bought |", "|---|--:|--:|--:|"]
    for period in d.periods.periods:
        cells = []
        for f in period.figures:
            old, new = figure_text(f, f.old), figure_text(f, f.new)
            delta = f" ({_figure_delta(f)})" if f.old is not None and f.new is not None else ""
            cells.append(new if old == new else f"{old} → {new}{delta}")
        rows.append(f"| {_cell(period.start)} | " + " | ".join(cells) + " |")
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
        [f"| {_cell(c.site)} | {_cell(c.field)} | {_cell(c.old)} | {_cell(c.new)} |" for c in d.choices],
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


def _periods_section(d: PlanDiff) -> _Section | None:
    """What changed in each period; None when no period of two plans with periods changed an option or a
    fabric."""
    if d.periods is None:
        return None
    rows = []
    for period in d.periods.periods:
        for o in period.options:
            rows.append(f"| {_cell(period.start)} | `{o.sign}` | {_cell(o.site)} | {_cell(o.key)} "
                        f"| {option_text(o)} |")
        for f in period.fabric:
            rows.append(f"| {_cell(period.start)} | `~` | {_cell(f.site)} | scale-out {_cell(f.field)} "
                        f"| {_cell(f.old)} → {_cell(f.new)} |")
    if not rows:
        return None
    changed = sum(1 for period in d.periods.periods if period.options or period.fabric)
    return _Section(
        f"Periods: {changed} of {len(d.periods.periods)} changed",
        ["Installed units per site and option in each period, and what that period bought (base → head)", ""],
        ["| Period | | Site | Option | Change |", "|---|---|---|---|---|"],
        rows,
    )


def _sections(d: PlanDiff, notes: list[str]) -> dict[str, _Section]:
    """The detail tables that have rows, in the order the comment shows them."""
    candidates = {
        "choices": _choices_section(d),
        "periods": _periods_section(d),
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
    return md_code(f"{algo}:{hexpart[:12]}" if hexpart else digest[:19], in_table=True)


def _provenance(d: PlanDiff) -> list[str]:
    return [
        "| | Plan | Inputs digest | Solver |",
        "|---|---|---|---|",
        _row("Base", md_code(d.base_label, in_table=True), _short_digest(d.base_digest),
             _cell(d.base_solver or None)),
        _row("Head", md_code(d.head_label, in_table=True), _short_digest(d.head_digest),
             _cell(d.head_solver or None)),
    ]


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
    return f"{md_code(d.scenario or '?')}: no changes."


def input_lines(d: PlanDiff) -> list[str]:
    """What the plans were computed from, where it differs: `` - `--set PATH`: `old` → `new` ``."""
    if not d.inputs:
        return []
    lines = ["**Inputs changed:**", ""]
    for change in d.inputs[:MAX_INPUT_LINES]:
        old = md_code(change.old) if change.old is not None else "—"
        new = md_code(change.new) if change.new is not None else "—"
        lines.append(f"- {md_code(change.name)}: {old} → {new}")
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
    title = f"{heading} Plan diff: {md_code(d.scenario or '?')}"
    top = [MARKER] if marker else []
    notes = [f"- {_cell(n)}" for n in d.notes]
    extra = breach_lines(breaches or []) + ([""] if breaches and d.inputs else []) + input_lines(d)
    if not d.different:
        return _no_change(d, top, title, notes, extra)
    sections = _sections(d, notes)
    lead = [headline(d), "", *([*extra, ""] if extra else [])]
    layout = _Layout(
        head="\n".join([*top, title, "", *lead, *_summary_table(d), *_period_rows(d)]),
        tail="\n".join([*_provenance(d), "", plan_line(d)]),
        sections=sections,
        keep={name: len(s.rows) for name, s in sections.items()},
        chart="\n\n".join(c for c in (capex_chart(d), mw_chart(d)) if c),
    )
    return _fit(layout, max_chars)
