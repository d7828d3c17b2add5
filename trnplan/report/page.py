"""The report page: one self-contained HTML file (styles and every drawing inline, a Content-Security-Policy
that lets it load nothing), made of the plan's headline figures, a floor plan per site, capex and TCO by
category, the phased timeline, a sweep's summary and the BOM. The same plan (and rows) give the same bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from html import escape
from typing import Any

from trnplan.bom import build_bom
from trnplan.catalog.ranges import end_text
from trnplan.diff.attribution import tco_parts_cents
from trnplan.diff.model import OPEX_CATEGORIES
from trnplan.numbers import money_short, plain, quantity_text, usd_text
from trnplan.plan.model import Plan
from trnplan.plan.tables import alternative_rows, stopped_text
from trnplan.report import charts
from trnplan.report.floorplan import caption, colours, floor_plan, legend
from trnplan.report.sweep import sweep_summary
from trnplan.report.timeline import TimelineRow, timeline_rows
from trnplan.sweep.rows import Row
from trnplan.sweep.summary import SOLVED

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #222; background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 16px 20px 48px; }
h1 { font-size: 24px; margin: 8px 0 2px; word-break: break-word; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
figure > h3 { margin-top: 0; }
.caption { margin: 0 0 6px; color: #444; font-size: 13px; }
.sub { color: #555; margin: 0 0 12px; word-break: break-word; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; }
.card { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: 8px 10px; }
.card .v { font-size: 19px; font-weight: 600; }
.card .k { color: #666; font-size: 12px; }
figure { margin: 8px 0 16px; background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: 10px;
  overflow-x: auto; }
svg.floorplan, svg.chart { display: block; width: 100%; max-width: 760px; height: auto; }
svg.chart { min-width: 520px; }  /* a narrow window scrolls a chart sideways rather than shrink its text */
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 6px 0 0; padding: 0; list-style: none;
  font-size: 12px; }
.legend i { display: inline-block; width: 11px; height: 11px; margin-right: 5px; vertical-align: -1px;
  border-radius: 2px; }
.legend i.free { border: 1px solid #bbb; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; font-size: 13px; min-width: 60%; }
th, td { border-bottom: 1px solid #eee; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; white-space: nowrap; }
td.id { white-space: nowrap; }
td.wide { min-width: 16em; }
td.n, th.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; border-top: 2px solid #ccc; }
ul.plain { margin: 4px 0; padding-left: 20px; }
.note { color: #666; font-size: 12px; }
"""


def _card(label: str, value: str) -> str:
    return f'<div class="card"><div class="v">{escape(value)}</div><div class="k">{escape(label)}</div></div>'


def _mw(kw: float) -> str:
    return f"{plain(kw / 1000, 2)} MW"


def _headline(plan: Plan) -> str:
    t = plan.totals
    network = t.network_racks or 0
    cards = [
        ("TCO", money_short(t.tco_usd)),
        ("capex", money_short(t.capex_usd)),
        ("opex per year", money_short(t.opex_usd_per_year)),
        ("chips", f"{t.chips:,}"),
        (f"racks: {t.racks:,} compute + {network:,} network", f"{t.racks + network:,}"),
        ("FP8 PFLOPs", plain(t.fp8_pflops, 1)),
        ("IT power", _mw(t.it_power_kw)),
        ("facility power", _mw(t.facility_power_kw)),
        ("$ per PFLOP-hour", f"${t.usd_per_pflop_hour:,.4f}"),
        ("$ per chip-hour", f"${t.usd_per_chip_hour:,.4f}"),
    ]
    if t.effective_fp8_pflops is not None:
        cards.insert(6, ("effective FP8 PFLOPs", plain(t.effective_fp8_pflops, 1)))
    if t.usd_per_effective_pflop_hour is not None:
        cards.append(("$ per effective PFLOP-hour", f"${t.usd_per_effective_pflop_hour:,.4f}"))
    return '<div class="cards">' + "".join(_card(k, v) for k, v in cards) + "</div>"


def _subtitle(plan: Plan) -> str:
    parts = []
    if plan.objective is not None:
        o = plan.objective
        value = money_short(o.value) if o.unit == "USD" else f"{plain(o.value, 4)} {o.unit}"
        parts.append(f"objective {o.kind}: {value}")
    if plan.solver is not None:
        parts.append(f"{plan.solver.name} {plan.solver.version}: {plan.solver.proof}")
    if plan.workload is not None:
        parts.append(f"workload {plan.workload.id}")
    parts.append(f"inputs {plan.inputs_digest[:19]}")
    return " · ".join(parts)


def _floor_plans(plan: Plan) -> str:
    palette = colours(plan.sites)
    out = []
    for site_id, site in sorted(plan.sites.items()):
        swatches = "".join(f'<li><i style="background:{s.colour};opacity:{s.opacity:g}"></i>'
                           f"{escape(s.label)}: {s.racks:,} racks</li>" for s in legend(site, palette))
        swatches += '<li><i class="free"></i>free position</li>'
        out.append(f'<figure><h3>{escape(site_id)}</h3><p class="caption">{escape(caption(site))}</p>'
                   f"{floor_plan(site_id, site, palette)}"
                   f'<ul class="legend">{swatches}</ul></figure>')
    if not out:
        return '<p class="note">The plan deploys nothing.</p>'
    return "".join(out)


def _by_category(plan: Plan) -> dict[str, dict[str, float]]:
    by_site: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for line in plan.bom:
        by_site[line.site][line.category] += line.extended_usd
    return {s: dict(parts) for s, parts in by_site.items()}


def _money(plan: Plan) -> str:
    out = []
    if plan.bom:
        chart = charts.category_chart("Capex by category (stacked by site)", _by_category(plan), "capex")
        out.append(f"<figure>{chart}</figure>")
    parts = tco_parts_cents(plan)
    if parts is not None and any(parts.values()):
        tco = {"all sites": {k: v / 100 for k, v in parts.items()}}
        chart = charts.category_chart("TCO by category over the horizon", tco, "tco", OPEX_CATEGORIES)
        how = ("Capex-driven TCO (each purchase x (CRF + maintenance) x the years of the window left when it "
               "is bought) split by each category's purchases, plus energy and colocation over the periods"
               if plan.periods is not None else
               "Capex-driven TCO (capex x (CRF + maintenance) x horizon) split by each category's capex, "
               "plus energy and colocation over the horizon")
        out.append(f'<figure>{chart}<p class="note">{how} (grey).</p></figure>')
    elif parts is None:
        out.append('<p class="note">The plan lacks the figures to split its TCO by category.</p>')
    return "".join(out)


def _table(head: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], total: Sequence[str] = ()) -> str:
    """An HTML table; `head` is (title, class) per column: n numbers, id names kept on one line, wide
    text given room (a narrow page scrolls the table rather than squeeze it); cells are escaped here."""
    cls = [f' class="{kind}"' if kind else "" for _, kind in head]

    def cells(tag: str, values: Sequence[str]) -> str:
        return "".join(f"<{tag}{c}>{escape(v)}</{tag}>" for v, c in zip(values, cls, strict=True))

    lines = [f"<tr>{cells('th', [t for t, _ in head])}</tr>"]
    lines += [f"<tr>{cells('td', row)}</tr>" for row in rows]
    if total:
        lines.append(f'<tr class="total">{cells("td", total)}</tr>')
    return f'<div class="scroll"><table>{"".join(lines)}</table></div>'


def _bom(plan: Plan) -> str:
    """The BOM as a table; a phased plan's is its purchase schedule, each line dated by its period."""
    bom = build_bom(plan)
    lead = [("period", "id")] if bom.phased else []
    rows = [(*([ln.period or ""] if bom.phased else []), ln.site, ln.category, ln.item,
             quantity_text(ln.quantity), usd_text(ln.unit_usd), usd_text(ln.extended_usd),
             f"{bom.share(ln):.1%}") for ln in bom.lines]
    head = [*lead, ("site", "id"), ("category", "id"), ("item", "wide"), ("quantity", "n"), ("unit", "n"),
            ("extended", "n"), ("share", "n")]
    total = ("total", *[""] * (len(head) - 3), usd_text(bom.total_usd), "100%" if rows else "")
    return _table(head, rows, total)


def _choices(plan: Plan) -> str:
    rows = []
    for site_id, site in sorted(plan.sites.items()):
        for d in site.deployments:
            row: tuple[str, ...] = (site_id, d.key, site.scale_out.switch, f"{d.units:,}", f"{d.racks:,}",
                   f"{d.chips:,}", plain(d.it_power_kw, 1), usd_text(d.capex_usd))
            if plan.workload is not None:
                row += tuple("—" if v is None else f"{v:.1%}" for v in (d.efficiency, d.mfu, d.goodput))
            rows.append(row)
    head = [("site", "id"), ("form / cooling / scale-up", "id"), ("scale-out", "id"), ("units", "n"),
            ("racks", "n"), ("chips", "n"), ("IT kW", "n"), ("capex", "n")]
    if plan.workload is not None:
        head += [("efficiency", "n"), ("MFU", "n"), ("goodput", "n")]
    return _table(head, rows)


def _alternatives(plan: Plan) -> str:
    out = []
    if plan.binding:
        out.append("<h3>What binds</h3><ul class=\"plain\">"
                   + "".join(f"<li>{escape(b)}</li>" for b in plan.binding) + "</ul>")
    if plan.alternatives:
        rows = [(", ".join(withouts), f"{a.status}, {stopped_text(a)}" if a.stopped else a.status,
                 money_short(a.tco_usd) if a.tco_usd is not None else "—",
                 f"{a.delta_pct:+.3f}%" if a.delta_pct is not None else "—")
                for withouts, a in alternative_rows(plan)]
        out.append("<h3>Next-best plans</h3>" + _table(
            [("without", "wide"), ("status", "id"), ("TCO", "n"), ("change", "n")], rows))
    return "".join(out)


def _timeline(rows: list[TimelineRow]) -> str:
    bought = [(r.start, r.site, ", ".join(f"{k}: {v:,}" for k, v in r.switches_bought.items()) or "—",
               f"{r.rack_positions_used:,}") for r in rows]
    table = _table([("period", "id"), ("site", "id"), ("units bought, by scale-up switch", "wide"),
                    ("positions used", "n")], bought)
    return f"<figure>{charts.timeline_chart(rows)}</figure>{table}"


def _sweep(plan: Plan, rows: list[Row], name: str) -> str:
    kind = plan.objective.kind if plan.objective is not None else None
    summary = sweep_summary(rows, kind)
    status = ", ".join(f"{n:,} {s}" for s, n in summary["status"].items())
    out = [f'<p>{escape(name)}: {summary["finished"]:,} of {summary["runs"]:,} runs finished '
           f"({escape(status)}).</p>"]
    objectives = [r["objective"] for r in rows if r["status"] in SOLVED and r["objective"] is not None]
    if objectives:
        marker = plan.objective.value if plan.objective is not None else None
        label = kind or "objective"
        chart = charts.distribution_chart(objectives, marker, label, kind == "min_tco")
        out.append(f"<figure>{chart}</figure>")
    if summary["choices"]:
        choices, left = _most_made(summary["choices"])
        out.append(f"<figure>{charts.choices_chart(choices)}{_not_shown(left, 'choices')}</figure>")
    if "sensitivity" in summary:
        found = summary["sensitivity"]
        note = found["method"] + (f". {found['warning']}" if found.get("warning") else "")
        chart = charts.sensitivity_chart(found["inputs"][:MAX_BARS]) if found["inputs"] else ""
        rest = _not_shown(len(found["inputs"]) - MAX_BARS, "inputs (the lowest ranked)")
        out.append(f'<figure>{chart}<p class="note">{escape(note)}.</p>{rest}</figure>')
    elif summary["tornado"]["inputs"]:
        exact = "base_tco_usd" in summary
        middle = summary["base_tco_usd"] if exact else (summary["tco_usd"]["median"] if summary["tco_usd"]
                                                        else None)
        line = "the TCO of the base plan" if exact else "the median TCO"
        inputs = summary["tornado"]["inputs"]
        out.append(f"<figure>{charts.tornado_chart(inputs[:MAX_BARS], middle, exact)}"
                   f'<p class="note">{escape(summary["tornado"]["method"])}; the line is {line}.</p>'
                   f"{_not_shown(len(inputs) - MAX_BARS, 'inputs (the narrowest swings)')}</figure>")
    return "".join(out)


def _futures(plan: Plan) -> str:
    """A plan across futures: what the uncertainty is worth, and each future's TCO."""
    part = plan.futures
    assert part is not None
    vss = money_short(part.vss_usd) if part.vss_usd is not None else "—"
    risk = f"; {part.risk}: {money_short(part.risk_tco_usd)}" if part.risk_tco_usd is not None else ""
    head = (f"<p>{part.n:,} futures drawn from the specs' ranges (seed {part.seed}); the purchases up to "
            f"{escape(part.decide)} above are made in every future. Expected TCO "
            f"{money_short(part.expected_tco_usd)}{escape(risk)}; value of the stochastic solution {vss} "
            "(the plan made for the average future, priced in every future, costs that much more); expected "
            f"value of perfect information {money_short(part.evpi_usd)} (knowing the future would save "
            "that much).</p>")
    rows = [(str(i), money_short(r.tco_usd), ", ".join(f"{k} {end_text(v)}" for k, v in r.set.items()))
            for i, r in enumerate(part.runs)]
    return head + _table([("future", "n"), ("TCO", "n"), ("inputs drawn", "wide")], rows)


MAX_BARS = 30
"""Most bars a sweep chart draws (choices, tornado inputs): the most made, the widest swings; the page says
how many more there are."""


def _most_made(choices: dict[str, list[dict[str, Any]]]) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """The MAX_BARS (site, choice) pairs made in the most runs, by site, and how many are left out."""
    ranked = sorted(((c["runs"], site, i) for site, made in choices.items() for i, c in enumerate(made)),
                    key=lambda t: (-t[0], t[1], t[2]))
    kept: dict[str, list[dict[str, Any]]] = {}
    for _, site, i in sorted(ranked[:MAX_BARS], key=lambda t: (t[1], t[2])):
        kept.setdefault(site, []).append(choices[site][i])
    return kept, len(ranked) - MAX_BARS


def _not_shown(left: int, what: str) -> str:
    return f'<p class="note">{left:,} more {escape(what)} not shown.</p>' if left > 0 else ""


def render_report(plan: Plan, sweep_rows: list[Row] | None = None, sweep_name: str = "sweep") -> str:
    """The report page of a plan (and of a sweep's rows) as HTML text."""
    title = f"trnplan report: {plan.scenario}"
    sections = [
        f"<h1>{escape(plan.scenario)}</h1><p class=\"sub\">{escape(_subtitle(plan))}</p>",
        _headline(plan),
        "<h2>Floor plans</h2>",
        _floor_plans(plan),
        "<h2>What is deployed</h2>",
        _choices(plan),
        _alternatives(plan),
        "<h2>Where the money goes</h2>",
        _money(plan),
    ]
    if plan.futures is not None:
        sections += ["<h2>Across futures</h2>", _futures(plan)]
    timeline = timeline_rows(plan)
    if timeline:
        sections += ["<h2>Timeline</h2>", _timeline(timeline)]
    if sweep_rows is not None:
        sections += ["<h2>Sweep: how sure is the plan</h2>", _sweep(plan, sweep_rows, sweep_name)]
    sections += ["<h2>Bill of materials</h2>", _bom(plan)]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(sections)
        + "\n</main>\n</body>\n</html>\n"
    )
