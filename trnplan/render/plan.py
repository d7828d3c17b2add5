"""A plan as tables: headline, what it deploys where (`sites`: each period's, then the installed base), power
and cost, what binds, alternatives. A plan without periods is one period: the same tables, without the
timeline."""

from __future__ import annotations

from collections import defaultdict

from rich.console import Group, RenderableType
from rich.text import Text

from trnplan.numbers import fmt
from trnplan.plan.model import Alternative, Objective, Plan
from trnplan.plan.tables import SMALL_SHARE, SmallChoice, alternative_rows, small_choices, stopped_text
from trnplan.render.sites import site_tables
from trnplan.render.tables import Col, Grid, spaced

OPEX_PARTS = (
    ("energy_usd_per_year", "energy per year"),
    ("colocation_usd_per_year", "colocation per year"),
    ("residual_usd_per_year", "residual past the window a year"),
    ("maintenance_usd_per_year", "maintenance per year"),
)


def solver_line(plan: Plan) -> str:
    """'HiGHS 1.16.0, proven optimal'; 'HiGHS 1.16.0, proven within 0.01% (gap 0.0042%)' for a plan
    asked for a gap; 'HiGHS 1.16.0, feasible, gap 2.1%' (or 'gap unknown') for one a limit stopped."""
    s = plan.solver
    if s is None:
        return "?, ?, gap unknown"
    return f"{s.name} {s.version}".strip() + ", " + s.proof


def render_plan(plan: Plan) -> RenderableType:
    """A plan as tables: headline, deployments, scale-out fabric, power and cost, binding, alternatives."""
    parts: list[RenderableType] = [_headline(plan), *site_tables(plan), _costs(plan)]
    if plan.workload is not None:
        parts.append(_workload(plan))
    if plan.binding:
        b = Grid("What binds", [Col("constraint at or near its limit", wrap=True)])
        for line in plan.binding:
            b.add_row(line)
        parts.append(b)
    if plan.alternatives:
        parts.append(_alternatives(plan))
    small = small_choices(plan)
    if small:
        parts.append(_small_choices(plan, small))
    return Group(*spaced(parts))


def _horizon_years(plan: Plan) -> float | None:
    return plan.economics.horizon_years if plan.economics is not None else None


def _headline(plan: Plan) -> Grid:
    t = plan.totals
    proven = plan.solver is not None and (plan.solver.status == "optimal" or plan.solver.within_target)
    rows = [
        ("objective", _objective_text(plan.objective)),
        ("chips", f"{fmt(t.chips, 'int')} in {fmt(t.units, 'int')} units, "
                  f"{fmt(t.domains, 'int')} scale-up domains"),
        ("FP8", f"{fmt(t.fp8_pflops, 'pflops')}LOPs dense"),
        ("HBM", fmt(t.hbm_tb, "tb")),
        ("racks", f"{fmt(t.racks, 'int')} compute + {fmt(t.network_racks, 'int')} network"),
        ("IT power", fmt(t.it_power_kw, "mw")),
        ("facility power", fmt(t.facility_power_kw, "mw")),
        ("capex", fmt(t.capex_usd, "usd")),
        ("opex per year", fmt(t.opex_usd_per_year, "usd")),
        (_tco_label(_horizon_years(plan)), fmt(t.tco_usd, "usd")),
        ("per PFLOP-hour", fmt(t.usd_per_pflop_hour, "usd")),
        ("per chip-hour", fmt(t.usd_per_chip_hour, "usd")),
        ("solver", solver_line(plan)),
    ]
    if t.effective_fp8_pflops is not None and plan.workload is not None:
        share = t.effective_fp8_pflops / t.fp8_pflops if t.fp8_pflops else 0.0
        rows[3:3] = [("effective FP8", f"{fmt(t.effective_fp8_pflops, 'pflops')}LOPs delivered "
                                       f"({fmt(share, 'pct')} of peak, workload {plan.workload.id})")]
        rows.insert(-2, ("per effective PF-hour", fmt(t.usd_per_effective_pflop_hour, "usd")))
    if plan.periods:
        rows.insert(1, ("periods", _periods_text(plan)))
    title = f"Plan for {plan.scenario}"
    if plan.futures is not None:
        title += f", expected over {plan.futures.n} futures"
    headline = Grid(title, [Col("", style="bold"), Col("", wrap=True)],
                    show_header=False, caption=_installed_caption(plan))
    for key, value in rows:
        style = "bold yellow" if key == "solver" and not proven else None
        headline.add_row(key, Text(value, style=style or ""))
    return headline


def _periods_text(plan: Plan) -> str:
    """'4 from 2026-01: 0.5 + 0.5 + 0.5 + 3.5 years'."""
    periods = plan.periods or []
    if plan.futures is not None and plan.futures.runs:  # the window is each future's; the top level shared
        whole = plan.futures.runs[0].periods
        years = " + ".join(f"{p.years:g}" for p in whole)
        return f"{len(whole)} from {whole[0].start}: {years} years; shared up to {plan.futures.decide}"
    years = " + ".join(f"{p.years:g}" for p in periods)
    return f"{len(periods)} from {periods[0].start}: {years} years"


def _installed_caption(plan: Plan) -> str | None:
    """A phased plan's headline states the last period's installed base beside the window's money; a plan
    across futures the mean of each future's."""
    if not plan.periods:
        return None
    if plan.futures is not None:
        return (f"each figure the mean over the futures of each future's own (counts rounded); periods, "
                f"purchases, deployments and the BOM: the shared purchases, up to {plan.futures.decide}")
    return (f"chips to facility power, opex: the last period's ({plan.periods[-1].start}); capex: all "
            "bought in the window; TCO and per-hour figures: over the window")


def _tco_label(years: float | None) -> str:
    if not years:
        return "TCO"
    return f"TCO over {years:g} year{'' if years == 1 else 's'}"


def _objective_text(objective: Objective | None) -> str:
    """'min_tco = $3,858,592,407', or the value and its unit for the other objectives."""
    if objective is None:
        return "None = -"
    if objective.unit == "USD":
        return f"{objective.kind} = {fmt(objective.value, 'usd')}"
    return f"{objective.kind} = {fmt(objective.value)} {objective.unit}".rstrip()


def _workload(plan: Plan) -> Grid:
    """What the workload delivers on each form the scenario allows, the chosen forms marked: why this form."""
    assert plan.workload is not None
    w = plan.workload
    chosen = {k for s in plan.sites.values() for d in s.deployments
              for k in (d.form, f"{d.form}/{d.scale_up_switch}")}
    by_option = any("/" in k for k in w.efficiency)
    t = Grid(f"Workload {w.id}: {w.name}", [Col("form / scale-up" if by_option else "form"),
                                            Col("share of peak delivered", right=True),
                                            Col("")])
    for form, share in sorted(w.efficiency.items(), key=lambda kv: (-kv[1], kv[0])):
        t.add_row(form, fmt(share, "pct"), "chosen" if form in chosen else "")
    t.caption = "effective PFLOPs = chips x dense FP8 x share; delivered, not peak, PFLOPs are planned"
    return t


def _costs(plan: Plan) -> Grid:
    """Capex by BOM category, then the yearly costs, then TCO."""
    t = Grid("Power and cost", [Col(""), Col("amount", right=True), Col("share", right=True)])
    totals = plan.totals
    capex = totals.capex_usd
    by_category: dict[str, float] = defaultdict(float)
    for line in plan.bom:
        by_category[line.category] += line.extended_usd
    if plan.futures is not None:  # the BOM is the shared purchases; the totals are expected figures
        capex = sum(by_category.values())
    for category, usd in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0])):
        t.add_row(f"capex: {category}", fmt(usd, "usd"), fmt(usd / capex, "pct") if capex else "-")
    if plan.futures is not None:
        t.add_row(f"capex by {plan.futures.decide}", fmt(capex, "usd"), "", style="bold")
        t.add_row("capex, expected", fmt(totals.capex_usd, "usd"), "", style="bold", end_section=True)
    else:
        t.add_row("capex", fmt(capex, "usd"), "", style="bold", end_section=True)
    opex = totals.opex_usd_per_year
    for key, label in OPEX_PARTS:
        value = getattr(totals, key)
        if value is not None:
            t.add_row(label, fmt(value, "usd"), fmt(value / opex, "pct") if opex else "-")
    t.add_row("opex per year", fmt(opex, "usd"), "", style="bold", end_section=True)
    t.add_row("IT power", fmt(totals.it_power_kw, "mw"), "")
    t.add_row("facility power (x PUE)", fmt(totals.facility_power_kw, "mw"), "", end_section=True)
    t.add_row(_tco_label(_horizon_years(plan)), fmt(totals.tco_usd, "usd"), "", style="bold")
    if plan.futures is not None:
        t.caption = "opex, power and TCO: expected over the futures"
    return t


RATIO_HEADER = "PF per $M"
"""The max_perf_per_tco objective in the alternatives table: FP8 PFLOPs per million USD of TCO."""


def delta_text(pct: float) -> str:
    """An alternative's change in the objective, to 0.1% (each is proven within 0.01%: finer digits
    would show the solver's tolerance, not the alternative): '+1.9%', '+0.0%' for a change under 0.05%."""
    return f"{pct:+.1f}%"


def _alternatives(plan: Plan) -> Grid:
    """The alternatives, ranked; for max_perf_per_tco with the ratio they are ranked by (beside TCO, FP8)."""
    ratio = plan.objective is not None and plan.objective.kind == "max_perf_per_tco"
    effective = plan.workload is not None
    figures = ["TCO", "FP8"] + (["effective"] if effective else []) + ([RATIO_HEADER] if ratio else [])
    figures.append("vs plan")
    t = Grid(
        "Alternatives: the best plan without each choice made",
        [Col("#", right=True), Col("without", wrap=True), Col("choice", wrap=True)]
        + [Col(h, right=True) for h in figures],
        keys=2,
        stack=[(0,), (1,), tuple(range(3, 3 + len(figures)))],
        detail=2,  # a line per site, whole beside the figures or else under them: never folded in a column
        caption="vs plan: change in the scenario's objective; every option priced: "
        f"`trnplan options {plan.scenario}`"
        + (f"; {RATIO_HEADER}: FP8 PFLOPs per million USD of TCO, the ratio optimised" if ratio else ""),
    )
    merged = False
    unproven: list[str] = []
    for i, (withouts, alt) in enumerate(alternative_rows(plan), 1):
        merged = merged or len(withouts) > 1
        if alt.feasible and alt.stopped:
            unproven.append(f"#{i} {stopped_text(alt)}")
        # a line per site, and one per further option of a site (indented under its first)
        choice = alt.choice.replace("; ", "\n").replace(" + ", " +\n  ")
        t.add_row(str(i), "\n".join(withouts), choice, *_alternative_figures(alt, effective, ratio))
    if merged:
        t.caption = f"{t.caption}; several without: the same plan is the best without each of them"
    if unproven:
        t.caption = f"{t.caption}; *: not proven: " + "; ".join(unproven)
    return t


def _alternative_figures(alt: Alternative, effective: bool, ratio: bool) -> list[str]:
    """An alternative's figures: TCO, FP8 (effective, the ratio where shown) and its change, marked `*`
    where a limit stopped its search before its proof; '-' and 'infeasible' where there is no plan."""
    if not alt.feasible:
        return ["-", "-"] + (["-"] if effective else []) + (["-"] if ratio else []) + ["infeasible"]
    cells = [fmt(alt.tco_usd, "usd"), fmt(alt.fp8_pflops, "pflops")]
    if effective:
        cells.append(fmt(alt.effective_fp8_pflops, "pflops"))
    if ratio:
        cells.append(f"{alt.objective:,.3f}" if alt.objective is not None else "-")
    return [*cells, delta_text(alt.delta_pct or 0.0) + ("*" if alt.stopped else "")]


def _small_choices(plan: Plan, small: list[SmallChoice]) -> Grid:
    """Why a choice that holds a few of the plan's chips is made: what the best plan without it costs."""
    t = Grid("Small choices: why the plan makes them",
             [Col("choice"), Col("units", right=True), Col("chips", right=True),
              Col("share", right=True), Col("extra TCO\nwithout it", right=True), Col("vs plan", right=True)],
             caption=f"each holds under {fmt(SMALL_SHARE, 'pct')} of the plan's chips and is made because "
             "the best plan without it is worse by this much (the alternatives); `trnplan options "
             f"{plan.scenario}` prices every option at each site and says what rules each out")
    if any(c.delta_usd is not None and c.delta_usd < 0 for c in small):
        t.caption = (f"{t.caption}; a minus: the best plan without it came out that much cheaper, within the "
                     "gap the plan and its alternatives are proven to")
    unproven = []
    for c in small:
        worse = fmt(c.delta_usd, "usd", signed=True) if c.delta_usd is not None else "-"
        change = fmt(c.delta_pct / 100, "pct", signed=True) if c.delta_pct is not None else "infeasible"
        if c.stopped and c.delta_pct is not None:
            change += "*"
            unproven.append(f"without {c.without}: {c.stopped}")
        t.add_row(c.without, fmt(c.units, "int"), fmt(c.chips, "int"), fmt(c.share, "pct"), worse, change)
    if unproven:
        t.caption = f"{t.caption}; *: not proven: " + "; ".join(unproven)
    return t
