"""A plan across futures against itself (part of `self_check`, run on every plan read): each future's periods
hold on their own (units grow by what is bought, each period adds up, one scale-out switch type per site,
each period lasts to the next start, TCO is the sum over its periods), each future buys in the shared
periods what the top level buys, and the top-level `totals` and `futures` figures are the futures' mean
(`expected_tco_usd`; `risk_tco_usd` their CVaR). Prices differ between futures, so only purchases (not
their money) are compared with the top level's; `check_plan` re-prices each future in its own specs."""

from __future__ import annotations

import math

from trnplan.costs import usd_per_hour, window_tco_usd
from trnplan.errors import KeyPath
from trnplan.numbers import risk_of
from trnplan.plan.mismatch import Mismatch, relation, usd_text
from trnplan.plan.model import FutureRun, FuturesPart, Plan, PlanPeriod
from trnplan.plan.money import exact_years
from trnplan.plan.sums import Installed, growth_problems, period_sums

MEAN_TOTALS = ("chips", "units", "racks", "network_racks", "fp8_pflops", "it_power_kw", "facility_power_kw",
               "capex_usd")
"""Top-level totals that are the mean of the futures' last period's (counts rounded to whole numbers)."""


def _bought(periods: list[PlanPeriod], upto: int) -> list[tuple[dict[tuple[str, str], int], dict[str, str]]]:
    """Per period up to `upto`: units installed by (site, option) and each site's scale-out switch."""
    return [
        (
            {(site, d.key): d.units for site, s in p.sites.items() for d in s.deployments},
            {site: s.scale_out.switch for site, s in p.sites.items() if s.deployments},
        )
        for p in periods[:upto]
    ]


def _run_problems(plan: Plan, k: int, run: FutureRun) -> list[Mismatch]:
    """Future k's periods on their own: growth, sums, one switch type per site, lengths and TCO."""
    at: KeyPath = ("futures", "runs", k)
    assert plan.economics is not None and plan.periods is not None
    problems: list[Mismatch] = []
    before: Installed = {}
    switch_of: dict[str, str] = {}
    for i, p in enumerate(run.periods):
        grew, before = growth_problems(i, p, before, at)
        problems += grew + period_sums(i, p, at)
        for site, s in sorted(p.sites.items()):
            first = switch_of.setdefault(site, s.scale_out.switch)
            if s.scale_out.switch != first:
                problems.append(Mismatch(
                    (*at, "periods", i, "sites", site, "scale_out", "switch"),
                    f"futures.runs.{k}.periods.{i}: {site} uses scale-out switch {s.scale_out.switch}, not "
                    f"{first} as before (one type per site over the window)"))
    installed = 0
    for i, p in enumerate(run.periods):
        installed += round(p.totals.capex_bought_usd * 100)
        if round(p.totals.capex_usd * 100) != installed:
            problems.append(relation(
                (*at, "periods", i, "totals", "capex_usd"), usd_text(p.totals.capex_usd),
                "is not the sum of capex_bought_usd up to and in this period", usd_text(installed / 100),
                [(*at, "periods", j, "totals", "capex_bought_usd") for j in range(i + 1)]))
    years = exact_years([p.start for p in run.periods], plan.economics.horizon_years)
    pairs = list(zip(run.periods, years, strict=True))
    for i, (p, y) in enumerate(pairs):
        if not math.isclose(p.years, y, abs_tol=1e-6):
            problems.append(relation(
                (*at, "periods", i, "years"), str(p.years),
                "is not the time from its start to the next period's (or the window's end)", f"{y:.6f}",
                [(*at, "periods", i, "start")]))
    tco = window_tco_usd(plan.economics, [(y, p.totals.capex_usd, p.totals.opex_usd_per_year)
                                          for p, y in pairs])
    if abs(run.tco_usd - tco) > 1.0 + 1e-9 * abs(tco):
        problems.append(relation(
            (*at, "tco_usd"), usd_text(run.tco_usd),
            "is not the sum over its periods of years x (installed capex x crf + opex per year)",
            usd_text(tco), [(*at, "periods", i, "totals", "capex_usd") for i in range(len(run.periods))]))
    return problems


def _shared_problems(plan: Plan, k: int, run: FutureRun) -> list[Mismatch]:
    """Future k buys in the shared periods what the top level buys, and runs over the scenario's periods."""
    assert plan.periods is not None
    at: KeyPath = ("futures", "runs", k, "periods")
    shared = len(plan.periods)
    if [p.start for p in run.periods[:shared]] != [p.start for p in plan.periods]:
        return [Mismatch(at, f"futures.runs.{k}: its periods do not start with the shared ones "
                             f"({', '.join(p.start for p in plan.periods)})")]
    problems = []
    for i, (mine, top) in enumerate(zip(_bought(run.periods, shared), _bought(plan.periods, shared),
                                        strict=True)):
        if mine != top:
            problems.append(Mismatch(
                (*at, i, "sites"),
                f"futures.runs.{k}.periods.{i}: installs {_said(mine)}, not the shared purchases "
                f"(periods.{i}: {_said(top)})"))
    return problems


def _said(bought: tuple[dict[tuple[str, str], int], dict[str, str]]) -> str:
    units, switches = bought
    parts = [f"{site} {n:,} x {key}" for (site, key), n in sorted(units.items())]
    parts += [f"{site} scale-out {switch}" for site, switch in sorted(switches.items())]
    return ", ".join(parts) or "nothing"


def _expected(plan: Plan, runs: list[FutureRun]) -> dict[str, float]:
    """The totals the futures' own figures give on average: TCO, the last period's installed base and
    capex, PFLOP-years and the per-hour figures."""
    assert plan.economics is not None
    n = len(runs)
    expected: dict[str, float] = {"tco_usd": sum(r.tco_usd for r in runs) / n}
    for key in MEAN_TOTALS:
        mean = sum(float(getattr(r.periods[-1].totals, key)) for r in runs) / n
        expected[key] = round(mean) if key in ("chips", "units", "racks", "network_racks") else mean
    pflop_years, per_pflop, per_chip = 0.0, 0.0, 0.0
    for r in runs:
        years = exact_years([p.start for p in r.periods], plan.economics.horizon_years)
        pflops = [(y, p.totals.fp8_pflops) for y, p in zip(years, r.periods, strict=True)]
        pflop_years += sum(y * amount for y, amount in pflops) / n
        per_pflop += usd_per_hour(r.tco_usd, pflops) / n
        chips = [(y, float(p.totals.chips)) for y, p in zip(years, r.periods, strict=True)]
        per_chip += usd_per_hour(r.tco_usd, chips) / n
    expected.update(fp8_pflop_years=pflop_years, usd_per_pflop_hour=per_pflop, usd_per_chip_hour=per_chip)
    return expected


def _risk_problems(part: FuturesPart, tcos: list[float]) -> list[Mismatch]:
    """`risk_tco_usd` is stated exactly with a risk, and is the CVaR of the futures' TCOs."""
    level = _risk_level(part.risk)
    if (part.risk_tco_usd is None) != (level is None):
        return [Mismatch(("futures", "risk_tco_usd"),
                         "a plan states risk_tco_usd exactly when it states a risk (cvar:A)")]
    if level is None or part.risk_tco_usd is None:
        return []
    cvar = risk_of(tcos, level)
    if math.isclose(part.risk_tco_usd, cvar, abs_tol=0.011):
        return []
    return [relation(("futures", "risk_tco_usd"), usd_text(part.risk_tco_usd),
                     f"is not the CVaR at {level:g} of the futures' TCOs", usd_text(cvar),
                     [("futures", "runs", k, "tco_usd") for k in range(len(tcos))])]


def _mean_problems(plan: Plan) -> list[Mismatch]:
    """The top-level totals and the futures' figures are the futures' mean (and CVaR)."""
    part = plan.futures
    assert part is not None
    runs = [r for r in part.runs if r.periods]
    if len(runs) != len(part.runs) or not runs:
        return [Mismatch(("futures", "runs"), "every future states its periods")]
    problems = []
    rel = {"usd_per_pflop_hour": 1e-5, "usd_per_chip_hour": 1e-5}
    for key, value in _expected(plan, runs).items():
        stated = plan.totals.figure(key)
        if not math.isclose(stated, value, rel_tol=rel.get(key, 1e-9), abs_tol=0.011):
            problems.append(relation(
                ("totals", key), f"{stated:,.6g}", f"is not the mean over the futures of their {key}",
                f"{value:,.6g}", [("futures", "runs", k) for k in range(len(runs))]))
    if not math.isclose(part.expected_tco_usd, plan.totals.tco_usd, abs_tol=0.011):
        problems.append(relation(("futures", "expected_tco_usd"), usd_text(part.expected_tco_usd),
                                 "is not the plan's expected TCO", usd_text(plan.totals.tco_usd),
                                 [("totals", "tco_usd")]))
    return problems + _risk_problems(part, [r.tco_usd for r in runs])


def _risk_level(risk: str | None) -> float | None:
    """`cvar:A` as A (None for none or text that is not one)."""
    if risk is None or not risk.startswith("cvar:"):
        return None
    try:
        level = float(risk.partition(":")[2])
    except ValueError:
        return None
    return level if 0 < level < 1 else None


def futures_self_problems(plan: Plan) -> list[Mismatch]:
    """A plan across futures against itself (see the module's docstring); [] for any other plan."""
    part = plan.futures
    if part is None:
        return []
    if plan.periods is None or plan.economics is None:
        return [Mismatch(("futures",), "a plan across futures is a phased plan with its economics")]
    problems = []
    if len(part.runs) != part.n:
        problems.append(Mismatch(("futures", "n"), f"futures.n is {part.n}, but the plan has "
                                                   f"{len(part.runs)} runs"))
    if plan.periods[-1].start != part.decide:
        problems.append(relation(("futures", "decide"), part.decide,
                                 "is not the start of the last shared period", plan.periods[-1].start,
                                 [("periods", len(plan.periods) - 1, "start")]))
    for k, run in enumerate(part.runs):
        problems += _run_problems(plan, k, run) + _shared_problems(plan, k, run)
    if problems:
        return problems
    return _mean_problems(plan)
