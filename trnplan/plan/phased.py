"""Phased plans (`trnplan-plan/2`): building their periods from the cost model's phased evaluation, and
checking them, against themselves (every read) and against the specs (`check_plan`, PuLP-free)."""

from __future__ import annotations

import math
from typing import Any

from trnplan.catalog import HOURS_PER_YEAR, Catalog
from trnplan.catalog.periods import month_index, periods_of
from trnplan.costs import Deployment
from trnplan.costs.phased import PeriodFigures, PhasedEvaluation, evaluate_phased
from trnplan.errors import KeyPath
from trnplan.numbers import canon, usd
from trnplan.optimize.solution import Decisions
from trnplan.plan.consistency import Mismatch, relation
from trnplan.plan.model import (
    PeriodDeployment,
    PeriodSite,
    PeriodTotals,
    Plan,
    PlanPeriod,
)


def period_parts(pev: PhasedEvaluation) -> list[PlanPeriod]:
    """Each period as the plan states it: installed deployments (with what was bought), fabric, power,
    positions, and the period's totals."""
    parts = []
    before: dict[tuple[str, str], int] = {}
    for pf in pev.periods:
        parts.append(_period_part(pf, before))
        before = {(site, d.key): d.units for site, s in parts[-1].sites.items() for d in s.deployments}
    return parts


def _period_part(pf: PeriodFigures, before: dict[tuple[str, str], int]) -> PlanPeriod:
    from trnplan.plan.build import site_section

    ev = pf.evaluation
    sites = {}
    for site_id, figures in sorted(ev.sites.items()):
        s = site_section(figures, workload=False)
        deployments = [
            PeriodDeployment(
                form=d.form,
                cooling=d.cooling,
                scale_up_switch=d.scale_up_switch,
                units=d.units,
                bought=d.units - before.get((site_id, d.key), 0),
                racks=d.racks,
                chips=d.chips,
                it_power_kw=d.it_power_kw,
                capex_usd=d.capex_usd,
            )
            for d in s.deployments
        ]
        sites[site_id] = PeriodSite(
            deployments=deployments,
            scale_out=s.scale_out,
            cooling_used=s.cooling_used,
            racks=s.racks,
            positions=s.racks + s.scale_out.network_racks,
            it_power_kw=s.it_power_kw,
            facility_power_kw=s.facility_power_kw,
            utilization=s.utilization,
        )
    t = ev.totals
    totals = PeriodTotals(
        chips=t.chips,
        units=t.units,
        racks=t.racks,
        network_racks=t.network_racks or 0,
        fp8_pflops=t.fp8_pflops,
        it_power_kw=t.it_power_kw,
        facility_power_kw=t.facility_power_kw,
        capex_bought_usd=usd(pf.capex_bought_usd),
        capex_usd=usd(pf.capex_installed_usd),
        opex_usd_per_year=usd(pf.opex_usd_per_year),
        effective_fp8_pflops=t.effective_fp8_pflops,
    )
    return PlanPeriod(start=pf.period.start, years=pf.period.years, sites=sites, totals=totals)


def plan_decisions(plan: Plan) -> Decisions:
    """A phased plan's decisions: what each period has installed, and each site's scale-out switch."""
    assert plan.periods is not None
    per = []
    for period in plan.periods:
        deployments = sorted(
            Deployment(site, d.form, d.cooling, d.scale_up_switch, d.units)
            for site, s in period.sites.items()
            for d in s.deployments
        )
        per.append(
            Decisions(
                tuple(deployments),
                tuple((site, s.scale_out.switch) for site, s in sorted(period.sites.items())),
            )
        )
    last = per[-1] if per else Decisions((), ())
    return Decisions(last.deployments, last.scale_out, tuple(per))


def _differences(stated: Any, computed: Any, path: str = "") -> list[str]:
    """Where two canonical plan parts differ ("periods.1.sites.x.positions: plan says 3, ... gives 4")."""
    if isinstance(computed, dict) and isinstance(stated, dict):
        keys = sorted(set(stated) | set(computed))
        return [
            m for k in keys for m in _differences(stated.get(k), computed.get(k), f"{path}.{k}".lstrip("."))
        ]
    if isinstance(computed, list) and isinstance(stated, list) and len(stated) == len(computed):
        return [
            m
            for i, (a, b) in enumerate(zip(stated, computed, strict=True))
            for m in _differences(a, b, f"{path}.{i}")
        ]
    if isinstance(computed, float | int) and isinstance(stated, float | int) and not isinstance(stated, bool):
        if math.isclose(float(stated), float(computed), rel_tol=1e-9, abs_tol=0.011):
            return []
    elif stated == computed:
        return []
    return [f"{path}: plan says {stated}, the cost model gives {computed}"]


def check_phased(plan: Plan, catalog: Catalog) -> list[str]:
    """A phased plan against the specs: its periods are the scenario's, each period's decisions allowed and
    within that period's limits, and every figure the cost model's (see `trnplan.plan.check`)."""
    from trnplan.plan.check import check_evaluation, decision_problems

    scenario = catalog.scenarios[plan.scenario]
    if scenario.periods is None or plan.periods is None:
        return [f"scenario '{plan.scenario}' has no periods; a phased plan is not its plan"]
    expected = [(p.start, p.years) for p in periods_of(scenario)]
    stated = [(p.start, p.years) for p in plan.periods]
    if [s for s, _ in stated] != [s for s, _ in expected] or not all(
        math.isclose(a, b, abs_tol=1e-6) for (_, a), (_, b) in zip(stated, expected, strict=True)
    ):
        return [f"periods: plan has {stated}, the scenario gives {expected}"]
    decisions = plan_decisions(plan)
    problems = []
    for p, dec in zip(plan.periods, decisions.periods, strict=True):
        view_scenario = scenario_view(catalog, plan.scenario, p.start)
        problems += [
            f"in {p.start}: {why}"
            for why in decision_problems(
                view_scenario[0], view_scenario[1], list(dec.deployments), dict(dec.scale_out)
            )
        ]
    switches = {site: switch for dec in decisions.periods for site, switch in dec.scale_out}
    for dec in decisions.periods:
        for site, switch in dec.scale_out:
            if switches[site] != switch:
                problems.append(
                    f"{site}: one scale-out switch type over the window, not {switch} and {switches[site]}"
                )
    if problems:
        return problems
    pev = evaluate_phased(catalog, plan.scenario, decisions)
    problems += check_evaluation(plan, catalog, pev)
    problems += _differences(
        canon([p.model_dump(exclude_none=True) for p in plan.periods]),
        canon([p.model_dump(exclude_none=True) for p in period_parts(pev)]),
        "periods",
    )
    return problems


def scenario_view(catalog: Catalog, scenario_id: str, start: str) -> tuple[Catalog, Any]:
    """The single-period view of the catalog and scenario in the period starting at `start`."""
    from trnplan.catalog.periods import catalog_at, scenario_at

    scenario = catalog.scenarios[scenario_id]
    period = next(p for p in periods_of(scenario) if p.start == start)
    view = catalog_at(catalog, scenario_id, start, scenario_at(scenario, period))
    return view, view.scenarios[scenario_id]


def phased_self_problems(plan: Plan) -> list[Mismatch]:
    """A phased plan against itself: units never fall and `bought` is their growth; each period's bought
    capex is its BOM lines' and its installed capex the sum so far; TCO and per-hour figures follow the
    periods (design.md: sum over p of L_p (C_p x CRF + opex_p), PFLOP-hours over the window)."""
    if not plan.periods:
        return [Mismatch(("periods",), "a phased plan has at least one period")]
    problems: list[Mismatch] = []
    before: dict[tuple[str, str], tuple[int, KeyPath]] = {}
    switch_of: dict[str, str] = {}
    installed = 0
    for i, p in enumerate(plan.periods):
        now = {}
        for site, s in sorted(p.sites.items()):
            for j, d in enumerate(s.deployments):
                at: KeyPath = ("periods", i, "sites", site, "deployments", j)
                now[(site, d.key)] = (d.units, (*at, "units"))
                had, where = before.get((site, d.key), (0, None))
                grew = d.units - had
                if d.bought != grew:
                    problems.append(
                        relation(
                            (*at, "bought"),
                            f"{d.bought:,}",
                            f"is not the growth of {site} {d.key}'s units over the period before",
                            f"{d.units:,} - {had:,} = {grew:,}",
                            [(*at, "units")] + ([where] if where else []),
                        )
                    )
        for key in sorted(set(before) - set(now)):
            problems.append(
                Mismatch(
                    ("periods", i, "sites"),
                    f"periods.{i}: {key[0]} {key[1]} was installed before and is gone",
                )
            )
        before = now
        problems += _period_sums(i, p)
        for site, s_ in sorted(p.sites.items()):
            first = switch_of.setdefault(site, s_.scale_out.switch)
            if s_.scale_out.switch != first:
                problems.append(
                    Mismatch(
                        ("periods", i, "sites", site, "scale_out", "switch"),
                        f"periods.{i}: {site} uses scale-out switch {s_.scale_out.switch}, not {first} as "
                        "before (one type per site over the window)",
                    )
                )
        mine = [k for k, line in enumerate(plan.bom) if line.period == p.start]
        lines = sum(round(plan.bom[k].extended_usd * 100) for k in mine)
        installed += lines
        if round(p.totals.capex_bought_usd * 100) != lines:
            problems.append(
                relation(
                    ("periods", i, "totals", "capex_bought_usd"),
                    f"${p.totals.capex_bought_usd:,.2f}",
                    f"is not what the BOM lines of {p.start} sum to",
                    f"${lines / 100:,.2f}",
                    [("bom", k, "extended_usd") for k in mine],
                )
            )
        if round(p.totals.capex_usd * 100) != installed:
            problems.append(
                relation(
                    ("periods", i, "totals", "capex_usd"),
                    f"${p.totals.capex_usd:,.2f}",
                    "is not the sum of capex_bought_usd up to and in this period",
                    f"${installed / 100:,.2f}",
                    [("periods", k, "totals", "capex_bought_usd") for k in range(i + 1)],
                )
            )
    starts = {p.start for p in plan.periods}
    for k, line in enumerate(plan.bom):
        if line.period not in starts:
            problems.append(
                Mismatch(
                    ("bom", k, "period"),
                    f"bom line {k + 1} is bought in {line.period}, not a period of the plan",
                )
            )
    return problems + _last_is_installed(plan) + _window_money_problems(plan)


def _period_sums(i: int, p: PlanPeriod) -> list[Mismatch]:
    """A period's sites add up to their deployments and fabric, and its totals to its sites."""
    from trnplan.plan.consistency import _sum_mismatch

    at: KeyPath = ("periods", i)
    problems = []
    for site, s in sorted(p.sites.items()):
        where = (*at, "sites", site)
        rows = [(*where, "deployments", j) for j in range(len(s.deployments))]
        racks = sum(d.racks for d in s.deployments)
        problems += _sum_mismatch(
            (*where, "racks"),
            s.racks,
            racks,
            "is not the sum of its deployments' racks",
            0,
            [(*row, "racks") for row in rows],
        )
        problems += _sum_mismatch(
            (*where, "positions"),
            s.positions,
            racks + s.scale_out.network_racks,
            "is not its deployments' racks + its scale-out network_racks",
            0,
            [(*row, "racks") for row in rows] + [(*where, "scale_out", "network_racks")],
        )
        it_kw = sum(d.it_power_kw for d in s.deployments) + s.scale_out.it_power_kw
        problems += _sum_mismatch(
            (*where, "it_power_kw"),
            s.it_power_kw,
            it_kw,
            "is not the sum of its deployments' and scale-out fabric's it_power_kw",
            0.011,
            [(*row, "it_power_kw") for row in rows] + [(*where, "scale_out", "it_power_kw")],
        )
    sites = list(p.sites.values())
    deps = [d for s in sites for d in s.deployments]
    rows = [
        (*at, "sites", site, "deployments", j)
        for site, s in p.sites.items()
        for j in range(len(s.deployments))
    ]
    site_rows = [(*at, "sites", site) for site in p.sites]
    t = p.totals
    for key, parts, whose, tol, paths in (
        ("chips", sum(d.chips for d in deps), "deployments'", 0.0, [(*r, "chips") for r in rows]),
        ("units", sum(d.units for d in deps), "deployments'", 0.0, [(*r, "units") for r in rows]),
        ("racks", sum(s.racks for s in sites), "sites'", 0.0, [(*r, "racks") for r in site_rows]),
        (
            "network_racks",
            sum(s.scale_out.network_racks for s in sites),
            "sites' scale-out",
            0.0,
            [(*r, "scale_out", "network_racks") for r in site_rows],
        ),
        (
            "it_power_kw",
            sum(s.it_power_kw for s in sites),
            "sites'",
            0.011,
            [(*r, "it_power_kw") for r in site_rows],
        ),
        (
            "facility_power_kw",
            sum(s.facility_power_kw for s in sites),
            "sites'",
            0.011,
            [(*r, "facility_power_kw") for r in site_rows],
        ),
    ):
        problems += _sum_mismatch(
            (*at, "totals", key),
            float(getattr(t, key)),
            parts,
            f"is not the sum of its {whose} {key}",
            tol,
            paths,
        )
    return problems


def _last_is_installed(plan: Plan) -> list[Mismatch]:
    """The plan's `sites` are its last period's installed base."""
    assert plan.periods
    last = plan.periods[-1]
    stated = {(site, d.key): d.units for site, s in plan.sites.items() for d in s.deployments}
    installed = {(site, d.key): d.units for site, s in last.sites.items() for d in s.deployments}
    if stated == installed:
        return []
    return [Mismatch(("sites",), "sites are not the last period's installed base (periods.-1.sites)")]


def exact_years(starts: list[str], horizon_years: float) -> list[float]:
    """Each period's length in years from the period starts and the window (the file rounds `years`)."""
    months = [month_index(m) for m in starts]
    ends = months[1:] + [months[0] + round(12 * horizon_years)]
    return [(b - a) / 12 for a, b in zip(months, ends, strict=True)]


def _window_money_problems(plan: Plan) -> list[Mismatch]:
    assert plan.periods is not None
    if plan.economics is None:
        return [Mismatch(("economics",), "a phased plan states its economics (the window's money terms)")]
    e, t = plan.economics, plan.totals
    years = exact_years([p.start for p in plan.periods], e.horizon_years)
    final = len(plan.periods) - 1
    problems = [
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
        for i, (p, y) in enumerate(zip(plan.periods, years, strict=True))
        if not math.isclose(p.years, y, abs_tol=1e-6)
    ]
    if problems:
        return problems
    tco = sum(
        y * (p.totals.capex_usd * e.crf + p.totals.opex_usd_per_year)
        for p, y in zip(plan.periods, years, strict=True)
    )
    n = len(plan.periods)
    period_paths = [("periods", i, "totals") for i in range(n)]
    if abs(t.tco_usd - tco) > 1.0 + 1e-9 * abs(tco):
        problems.append(
            relation(
                ("totals", "tco_usd"),
                f"${t.tco_usd:,.2f}",
                "is not the sum over the periods of years x (installed capex x crf + opex per year)",
                f"${tco:,.2f}",
                [(*at, k) for at in period_paths for k in ("capex_usd", "opex_usd_per_year")]
                + [("economics", "crf")],
            )
        )
    pflop_years = sum(y * p.totals.fp8_pflops for p, y in zip(plan.periods, years, strict=True))
    chip_years = sum(y * p.totals.chips for p, y in zip(plan.periods, years, strict=True))
    for key, amount, per in (
        ("usd_per_pflop_hour", pflop_years, "fp8_pflops"),
        ("usd_per_chip_hour", chip_years, "chips"),
    ):
        expected = t.tco_usd / (amount * HOURS_PER_YEAR) if amount else 0.0
        if not math.isclose(t.figure(key), expected, rel_tol=1e-5, abs_tol=2e-6):
            problems.append(
                relation(
                    ("totals", key),
                    str(getattr(t, key)),
                    f"is not tco_usd / the periods' years x installed {per} x {HOURS_PER_YEAR:,} hours",
                    f"{expected:.6f}",
                    [("totals", "tco_usd")] + [(*at, per) for at in period_paths],
                )
            )
    if t.fp8_pflop_years is None or not math.isclose(
        t.fp8_pflop_years, pflop_years, rel_tol=1e-9, abs_tol=1e-3
    ):
        problems.append(
            relation(
                ("totals", "fp8_pflop_years"),
                str(t.fp8_pflop_years),
                "is not the sum over the periods of years x installed fp8_pflops",
                str(pflop_years),
                [(*at, "fp8_pflops") for at in period_paths],
            )
        )
    last = plan.periods[-1].totals if plan.periods else None
    if last is not None and round(last.capex_usd * 100) != round(t.capex_usd * 100):
        problems.append(
            relation(
                ("totals", "capex_usd"),
                f"${t.capex_usd:,.2f}",
                "is not the last period's installed capex",
                f"${last.capex_usd:,.2f}",
                [("periods", n - 1, "totals", "capex_usd")],
            )
        )
    return problems
