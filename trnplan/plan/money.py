"""A plan's money against itself, for one period or many: its money terms (`economics`) agree with each
other, its TCO and per-hour figures with its periods (one of the whole horizon in a `trnplan-plan/1`
plan), and its objective and alternatives' deltas with its totals. The formulas are the cost model's
(`trnplan.costs`); here they are applied to the figures the plan states."""

from __future__ import annotations

import math

from trnplan.catalog import HOURS_PER_YEAR
from trnplan.catalog.periods import month_index
from trnplan.costs import (
    OPEX_FIGURES,
    crf,
    objective_unit,
    objective_value,
    opex_words,
    usd_per_hour,
    window_tco_usd,
)
from trnplan.errors import KeyPath
from trnplan.plan.mismatch import Mismatch, relation, sum_mismatch, usd_text
from trnplan.plan.model import Economics, Plan

Span = tuple[float, KeyPath, float, float, float, float]
"""One period as the plan states it: (years, key path of its totals, installed capex, opex per year,
installed FP8 PFLOPs, chips)."""


def exact_years(starts: list[str], horizon_years: float) -> list[float]:
    """Each period's length in years from the period starts and the window (the file rounds `years`)."""
    months = [month_index(m) for m in starts]
    ends = months[1:] + [months[0] + round(12 * horizon_years)]
    return [(b - a) / 12 for a, b in zip(months, ends, strict=True)]


def _terms_problems(economics: Economics) -> list[Mismatch]:
    """The CRF is that of cost_of_capital over horizon_years, and tco_per_capex_usd is horizon_years x
    (crf + maintenance_rate)."""
    problems = []
    expected_crf = crf(economics.cost_of_capital, economics.horizon_years)
    if not math.isclose(economics.crf, expected_crf, rel_tol=1e-9):
        problems.append(
            relation(
                ("economics", "crf"),
                repr(economics.crf),
                "is not the capital recovery factor of cost_of_capital over horizon_years",
                repr(expected_crf),
                [("economics", "cost_of_capital"), ("economics", "horizon_years")],
            )
        )
    per_capex = economics.horizon_years * (economics.crf + economics.maintenance_rate)
    if not math.isclose(economics.tco_per_capex_usd, per_capex, rel_tol=1e-9):
        problems.append(
            relation(
                ("economics", "tco_per_capex_usd"),
                repr(economics.tco_per_capex_usd),
                "is not horizon_years x (crf + maintenance_rate)",
                repr(per_capex),
                [("economics", k) for k in ("horizon_years", "crf", "maintenance_rate")],
            )
        )
    return problems


def _single_tco_problems(plan: Plan, economics: Economics) -> list[Mismatch]:
    """One period of the horizon: TCO = capex x tco_per_capex_usd + horizon x its opex categories per year
    (energy + colocation)."""
    t = plan.totals
    if any(getattr(t, name) is None for name, always in OPEX_FIGURES.items() if always):
        return []
    expected = t.capex_usd * economics.tco_per_capex_usd + economics.horizon_years * sum(
        t.figure(name) for name in OPEX_FIGURES
    )
    if abs(t.tco_usd - expected) <= 1.0 + 1e-9 * abs(t.tco_usd):
        return []
    return [
        relation(
            ("totals", "tco_usd"),
            usd_text(t.tco_usd),
            f"is not capex_usd x tco_per_capex_usd + horizon_years x ({opex_words()} per year)",
            usd_text(expected),
            [
                ("totals", "capex_usd"),
                ("economics", "tco_per_capex_usd"),
                ("economics", "horizon_years"),
                *(("totals", name) for name in OPEX_FIGURES),
            ],
        )
    ]


def _spans(plan: Plan, economics: Economics) -> list[Span]:
    """The plan's periods as money sees them: a phased plan's stated periods at their exact lengths, or
    one period of the whole horizon."""
    t = plan.totals
    if plan.periods is None:
        return [
            (economics.horizon_years, ("totals",), t.capex_usd, t.opex_usd_per_year, t.fp8_pflops, t.chips)
        ]
    years = exact_years([p.start for p in plan.periods], economics.horizon_years)
    return [
        (
            y,
            ("periods", i, "totals"),
            p.totals.capex_usd,
            p.totals.opex_usd_per_year,
            p.totals.fp8_pflops,
            p.totals.chips,
        )
        for i, (p, y) in enumerate(zip(plan.periods, years, strict=True))
    ]


def years_problems(plan: Plan, economics: Economics) -> list[Mismatch]:
    """Each period lasts to the next start; the last to the window's end."""
    periods = plan.periods or []
    years = exact_years([p.start for p in periods], economics.horizon_years)
    final = len(periods) - 1
    return [
        relation(
            ("periods", i, "years"),
            str(p.years),
            "is not the time from its start to the next period's"
            if i < final
            else "is not the time from its start to the end of the window (economics.horizon_years)",
            f"{y:.6f}",
            [
                ("periods", i, "start"),
                ("periods", i + 1, "start") if i < final else ("economics", "horizon_years"),
            ],
        )
        for i, (p, y) in enumerate(zip(periods, years, strict=True))
        if not math.isclose(p.years, y, abs_tol=1e-6)
    ]


def _window_tco_problems(plan: Plan, economics: Economics, spans: list[Span]) -> list[Mismatch]:
    """TCO = sum over the periods of years x (installed capex x CRF + opex per year)."""
    t = plan.totals
    tco = window_tco_usd(economics, [(y, capex, opex) for y, _, capex, opex, _, _ in spans])
    if abs(t.tco_usd - tco) <= 1.0 + 1e-9 * abs(tco):
        return []
    return [
        relation(
            ("totals", "tco_usd"),
            usd_text(t.tco_usd),
            "is not the sum over the periods of years x (installed capex x crf + opex per year)",
            usd_text(tco),
            [(*at, k) for _, at, *_rest in spans for k in ("capex_usd", "opex_usd_per_year")]
            + [("economics", "crf")],
        )
    ]


def _per_hour_problems(plan: Plan, spans: list[Span]) -> list[Mismatch]:
    """The per-hour figures are the TCO over the periods' years x installed amount x 8760 hours."""
    t = plan.totals
    phased = plan.periods is not None
    amounts = {
        "fp8_pflops": [(y, pflops) for y, _, _, _, pflops, _ in spans],
        "chips": [(y, float(chips)) for y, _, _, _, _, chips in spans],
    }
    per_hour = [("usd_per_pflop_hour", "fp8_pflops"), ("usd_per_chip_hour", "chips")]
    if not phased and t.effective_fp8_pflops is not None and t.usd_per_effective_pflop_hour is not None:
        amounts["effective_fp8_pflops"] = [(spans[0][0], t.effective_fp8_pflops)]
        per_hour.append(("usd_per_effective_pflop_hour", "effective_fp8_pflops"))
    problems = []
    for key, per in per_hour:
        expected = usd_per_hour(t.tco_usd, amounts[per])
        if math.isclose(t.figure(key), expected, rel_tol=1e-5, abs_tol=2e-6):
            continue
        if phased:
            claim = f"is not tco_usd / the periods' years x installed {per} x {HOURS_PER_YEAR:,} hours"
            parts: list[KeyPath] = [("totals", "tco_usd")] + [(*at, per) for _, at, *_rest in spans]
        else:
            claim = f"is not tco_usd / ({per} x {HOURS_PER_YEAR:,} hours x horizon_years)"
            parts = [("totals", "tco_usd"), ("totals", per), ("economics", "horizon_years")]
        problems.append(relation(("totals", key), str(getattr(t, key)), claim, f"{expected:.6f}", parts))
    return problems


def _window_figures_problems(plan: Plan, spans: list[Span]) -> list[Mismatch]:
    """A phased plan's PFLOP-years are the periods' years x installed PFLOPs, and its capex everything
    bought: the last period's installed capex."""
    t = plan.totals
    periods = plan.periods or []
    problems = []
    pflop_years = sum(y * pflops for y, _, _, _, pflops, _ in spans)
    if t.fp8_pflop_years is None or not math.isclose(
        t.fp8_pflop_years, pflop_years, rel_tol=1e-9, abs_tol=1e-3
    ):
        problems.append(
            relation(
                ("totals", "fp8_pflop_years"),
                str(t.fp8_pflop_years),
                "is not the sum over the periods of years x installed fp8_pflops",
                str(pflop_years),
                [(*at, "fp8_pflops") for _, at, *_rest in spans],
            )
        )
    last = periods[-1].totals if periods else None
    if last is not None and round(last.capex_usd * 100) != round(t.capex_usd * 100):
        problems.append(
            relation(
                ("totals", "capex_usd"),
                f"${t.capex_usd:,.2f}",
                "is not the last period's installed capex",
                f"${last.capex_usd:,.2f}",
                [("periods", len(periods) - 1, "totals", "capex_usd")],
            )
        )
    return problems


def economics_problems(plan: Plan) -> list[Mismatch]:
    """The money terms agree with each other; a plan without periods' TCO and per-hour figures follow
    them (a phased plan's: `window_problems`, after its periods)."""
    if plan.economics is None:
        return []
    problems = _terms_problems(plan.economics)
    if plan.periods is None:
        spans = _spans(plan, plan.economics)
        problems += _single_tco_problems(plan, plan.economics) + _per_hour_problems(plan, spans)
    return problems


def window_problems(plan: Plan) -> list[Mismatch]:
    """A phased plan's money over its window: each period's length, the TCO over the periods
    (design.md: sum over p of L_p (C_p x CRF + opex_p)), per-hour figures over PFLOP-hours, PFLOP-years,
    and capex as all bought."""
    if plan.economics is None:
        return [Mismatch(("economics",), "a phased plan states its economics (the window's money terms)")]
    problems = years_problems(plan, plan.economics)
    if problems:
        return problems
    spans = _spans(plan, plan.economics)
    return (
        _window_tco_problems(plan, plan.economics, spans)
        + _per_hour_problems(plan, spans)
        + _window_figures_problems(plan, spans)
    )


def objective_problems(plan: Plan) -> list[Mismatch]:
    """The objective is the plan's own figure of its kind, in its unit; alternatives' deltas follow it."""
    objective = plan.objective
    if objective is None:
        return []
    problems = []
    unit = objective_unit(objective.kind, plan.totals)
    if objective.unit != unit:
        problems.append(
            relation(
                ("objective", "unit"),
                repr(objective.unit),
                f"is not the unit of a {objective.kind} objective",
                repr(unit),
                [("objective", "kind")],
            )
        )
    if objective.kind != "max_perf_per_tco" or plan.totals.tco_usd > 0:
        expected = objective_value(objective.kind, plan.totals)
        if plan.futures is not None and plan.futures.risk_tco_usd is not None:
            expected = plan.futures.risk_tco_usd  # across futures with a risk measure: what was minimised
        perf = "effective_fp8_pflops" if plan.totals.effective_fp8_pflops is not None else "fp8_pflops"
        figures = {"min_tco": ["tco_usd"], "max_perf": [perf]}.get(objective.kind, [perf, "tco_usd"])
        problems += sum_mismatch(
            ("objective", "value"),
            objective.value,
            expected,
            f"is not the {objective.kind} objective of the totals",
            0.011,
            [("totals", f) for f in figures],
        )
    best = objective.value
    for i, alt in enumerate(plan.alternatives):
        if alt.objective is None or alt.delta_pct is None or not best:
            continue
        delta = (alt.objective - best) / best * 100
        if abs(alt.delta_pct - delta) > 2e-4 + 1e-6 * abs(delta):
            problems.append(
                relation(
                    ("alternatives", i, "delta_pct"),
                    str(alt.delta_pct),
                    "is not the change from the plan's objective to the alternative's, in percent",
                    f"{delta:.4f}",
                    [("alternatives", i, "objective"), ("objective", "value")],
                )
            )
    return problems
