"""Verify plans of one period or many: against themselves (`self_check`, run on every plan read; it lives in
trnplan.plan.consistency) and against the specs (`check_plan`, PuLP-free: every constraint and every stated
figure, from the plan's decisions alone, in each period).

`bom_capex_problem` is the one "BOM lines sum to capex, to the cent" check every reader relies on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import periods_of, shared_view
from trnplan.costs import (
    Deployment,
    WindowEvaluation,
    evaluate_decisions,
    option_problems,
    period_view,
    scale_out_problems,
)
from trnplan.costs.decisions import Decisions
from trnplan.numbers import canon
from trnplan.plan.body import expected_totals, period_parts, plan_body, workload_part
from trnplan.plan.consistency import REL_TOL, Mismatch, bom_capex_problem, self_check
from trnplan.plan.model import BomLine, FutureRun, Plan, PlanPeriod, SiteSection, Totals
from trnplan.plan.rows import Row, describe, plan_rows

__all__ = ["Mismatch", "Row", "bom_capex_problem", "check_plan", "self_check"]

SCALE_OUT_FIELDS = ("switch", "tiers", "ports", "switches", "optics", "network_racks")


def _close(a: float, b: float, rel: float = REL_TOL, abs_tol: float = 0.011) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


# --- the plan against the specs ------------------------------------------------------------------


def deployments_of(plan: Plan) -> list[Deployment]:
    """The decisions a plan makes, sorted (what is installed at the end of its window)."""
    return sorted(
        Deployment(site, d.form, d.cooling, d.scale_up_switch, d.units)
        for site, s in plan.sites.items()
        for d in s.deployments
    )


def scale_out_of(plan: Plan) -> dict[str, str]:
    """Each site's scale-out switch."""
    return {site: s.scale_out.switch for site, s in plan.sites.items()}


def plan_decisions(plan: Plan) -> Decisions:
    """A plan's decisions as the cost model reads them: what is installed and each site's scale-out switch,
    and in a phased plan what each period has installed."""
    per = _period_decisions(plan.periods or [])
    if per:
        return Decisions(per[-1].deployments, per[-1].scale_out, per)
    return Decisions(tuple(deployments_of(plan)), tuple(sorted(scale_out_of(plan).items())))


def _period_decisions(periods: Sequence[PlanPeriod]) -> tuple[Decisions, ...]:
    """What each period has installed, and each site's scale-out switch."""
    return tuple(
        Decisions(
            tuple(
                sorted(
                    Deployment(site, d.form, d.cooling, d.scale_up_switch, d.units)
                    for site, s in period.sites.items()
                    for d in s.deployments
                )
            ),
            tuple((site, s.scale_out.switch) for site, s in sorted(period.sites.items())),
        )
        for period in periods
    )


def decision_problems(
    catalog: Catalog, scenario: Scenario, deployments: list[Deployment], scale_out: dict[str, str]
) -> list[str]:
    """Decisions the specs do not allow: unknown ids, sites outside the scenario, blocked options."""
    problems: list[str] = []
    for d in deployments:
        if d.site not in scenario.sites:
            problems.append(f"site {d.site} is not among the scenario's sites")
            continue
        if d.form not in catalog.forms or d.cooling not in catalog.cooling:
            problems.append(f"{d.site}: unknown form or cooling {d.form}/{d.cooling}")
            continue
        form = catalog.forms[d.form]
        known_switch = d.scale_up_switch in {o.switch for o in form.scale_up} or (
            not form.scale_up and d.scale_up_switch == "none"
        )
        if not known_switch:
            problems.append(f"{d.site}: form {d.form} does not accept scale-up switch {d.scale_up_switch}")
            continue
        if d.units <= 0:
            problems.append(f"{d.site}: {d.form} has {d.units} units")
        for why in option_problems(catalog, scenario, d.site, d.form, d.cooling, d.scale_up_switch):
            problems.append(f"{d.site}: {why}")
    for site_id, switch_id in sorted(scale_out.items()):
        if switch_id not in catalog.switches:
            problems.append(f"{site_id}: unknown scale-out switch {switch_id}")
            continue
        problems.extend(f"{site_id}: {why}" for why in scale_out_problems(catalog, scenario, switch_id))
    return problems


EFFECTIVE_TOTALS = ("effective_fp8_pflops", "usd_per_effective_pflop_hour")
"""Totals a plan states exactly when its scenario names a workload."""


def _totals_problems(stated: Totals, computed: Totals) -> list[str]:
    problems = []
    for key in sorted(Totals.model_fields):
        value = getattr(computed, key)
        if value is None:
            if key in EFFECTIVE_TOTALS and getattr(stated, key) is not None:
                problems.append(f"totals.{key}: plan states it, but its scenario names no workload")
            continue
        said = getattr(stated, key)
        if said is None or not _close(float(said), float(value)):
            problems.append(f"totals.{key}: plan says {said}, the cost model gives {value}")
    return problems


def _deployment_problems(stated: dict[str, SiteSection], computed: dict[str, SiteSection]) -> list[str]:
    """Each deployment's efficiency, effective FP8 PFLOPs, and (with a job) the efficiency's source, MFU and
    goodput are the workload's (absent without one)."""
    problems = []
    for site_id, section in sorted(computed.items()):
        theirs = {d.key: d for d in stated[site_id].deployments} if site_id in stated else {}
        for ours in section.deployments:
            said = theirs.get(ours.key)
            for key in ("efficiency", "effective_fp8_pflops", "efficiency_source", "mfu", "goodput"):
                value, claim = getattr(ours, key), getattr(said, key) if said is not None else None
                same = (value is None and claim is None) or (
                    value is not None
                    and claim is not None
                    and (value == claim if isinstance(value, str) else _close(float(claim), float(value)))
                )
                if not same:
                    problems.append(
                        f"sites.{site_id}.deployments {ours.key}: {key}: plan says {claim}, "
                        f"the cost model gives {value}"
                    )
    return problems


def _fabric_problems(stated: dict[str, SiteSection], computed: dict[str, SiteSection]) -> list[str]:
    problems = []
    for site_id, section in sorted(computed.items()):
        ours = section.scale_out
        theirs = stated[site_id].scale_out if site_id in stated else None
        for key in SCALE_OUT_FIELDS:
            said, expected = (getattr(theirs, key) if theirs is not None else None), getattr(ours, key)
            if said != expected:
                problems.append(
                    f"sites.{site_id}.scale_out.{key}: plan says {said}, the cost model gives {expected}"
                )
    return problems


def _bom_problems(stated: list[BomLine], computed: list[BomLine]) -> list[str]:
    if len(computed) != len(stated):
        return [f"bom: plan has {len(stated)} lines, the cost model gives {len(computed)}"]
    problems = []
    for ours, theirs in zip(computed, stated, strict=True):
        for key in ("site", "category", "item", "period"):
            if getattr(ours, key) != getattr(theirs, key):
                problems.append(f"bom line {ours.item}: {key} differs ({getattr(theirs, key)})")
        for key in ("quantity", "unit_usd", "extended_usd"):
            if not _close(getattr(ours, key), getattr(theirs, key), abs_tol=1e-6):
                problems.append(
                    f"bom line {ours.item}: {key} is {getattr(theirs, key)}, expected {getattr(ours, key)}"
                )
    return problems


def _period_problems(plan: Plan, scenario: Scenario) -> list[str]:
    """The plan has periods exactly when its scenario does, and then the scenario's."""
    if plan.periods is None:
        if scenario.periods is None:
            return []
        return [f"scenario '{plan.scenario}' has periods; a plan of one moment is not its plan"]
    if scenario.periods is None:
        return [f"scenario '{plan.scenario}' has no periods; a phased plan is not its plan"]
    expected = [(p.start, p.years) for p in periods_of(scenario)]
    stated = [(p.start, p.years) for p in plan.periods]
    if [s for s, _ in stated] != [s for s, _ in expected] or not all(
        math.isclose(a, b, abs_tol=1e-6) for (_, a), (_, b) in zip(stated, expected, strict=True)
    ):
        return [f"periods: plan has {stated}, the scenario gives {expected}"]
    return []


def _decisions_problems(catalog: Catalog, plan: Plan, decisions: Decisions) -> list[str]:
    """Each period's decisions the specs allow there (named "in 2026-07: ..." in a phased plan), and one
    scale-out switch type per site over the window."""
    scenario = catalog.scenarios[plan.scenario]
    installs = decisions.periods or (decisions,)
    problems = []
    for period, dec in zip(periods_of(scenario), installs, strict=True):
        view, at = period_view(catalog, plan.scenario, period)
        why = decision_problems(view, at, list(dec.deployments), dict(dec.scale_out))
        problems += [f"in {period.start}: {w}" for w in why] if decisions.periods else why
    switches = {site: switch for dec in installs for site, switch in dec.scale_out}
    for dec in installs:
        for site, switch in dec.scale_out:
            if switches[site] != switch:
                problems.append(
                    f"{site}: one scale-out switch type over the window, not {switch} and {switches[site]}"
                )
    return problems


def check_plan(plan: Plan, catalog: Catalog, futures: Sequence[Catalog] | None = None) -> list[str]:
    """Every violation found in the plan, of one period or many, in words; [] means it holds. A plan
    across futures: its shared purchases against the scenario cut to its shared periods, and with
    `futures` (each run's catalog: the specs with its `set`) each run against its own and the totals
    against their mean (`check_futures`)."""
    scenario = catalog.scenarios.get(plan.scenario)
    if scenario is None:
        return [f"scenario '{plan.scenario}' is not in the specs"]
    if plan.futures is not None:
        return check_futures(plan, catalog, futures)
    return _check_in(plan, catalog)


def _check_in(plan: Plan, catalog: Catalog) -> list[str]:
    """The plan's periods, decisions and every figure against one catalog."""
    problems = _period_problems(plan, catalog.scenarios[plan.scenario])
    if problems:
        return problems
    decisions = plan_decisions(plan)
    problems = _decisions_problems(catalog, plan, decisions)
    if problems:
        return problems
    return check_evaluation(plan, catalog, evaluate_decisions(catalog, plan.scenario, decisions))


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


def check_evaluation(plan: Plan, catalog: Catalog, ev: WindowEvaluation) -> list[str]:
    """The plan's rows, totals, sites, fabric, BOM, workload and periods against the cost model's
    evaluation (a plan across futures' totals are the futures' mean: `check_futures` checks them)."""
    scenario = catalog.scenarios[plan.scenario]
    problems = [f"violated: {describe(row)}" for row in plan_rows(scenario, ev) if row.violated]
    totals, sites = plan_body(ev)
    if plan.futures is None:
        problems += _totals_problems(plan.totals, totals)
    problems += _deployment_problems(plan.sites, sites)
    problems += _fabric_problems(plan.sites, sites)
    problems += _bom_problems(plan.bom, ev.bom)
    expected = workload_part(catalog, scenario)
    if plan.workload != expected:
        problems.append(f"workload: plan says {plan.workload}, the specs give {expected}")
    mismatch = bom_capex_problem(plan.bom, plan.bom_capex_usd)
    if mismatch:
        problems.append(mismatch)
    if ev.phased:
        problems += _differences(
            canon([p.model_dump(exclude_none=True) for p in plan.periods or []]),
            canon([p.model_dump(exclude_none=True) for p in period_parts(ev)]),
            "periods",
        )
    return problems


def check_futures(plan: Plan, catalog: Catalog, futures: Sequence[Catalog] | None) -> list[str]:
    """A plan across futures against the specs: its top level (the shared purchases) against the scenario
    cut to its shared periods, priced with the specs as they are; with `futures`, each run against its own
    catalog (every constraint, every figure of its periods, its TCO, and the shared purchases made in it)
    and the totals against the mean of the futures' own (`expected_totals`)."""
    assert plan.futures is not None
    part = plan.futures
    scenario = catalog.scenarios[plan.scenario]
    if not scenario.periods or part.decide not in scenario.periods:
        return [f"futures.decide: {part.decide} is not a period of scenario '{plan.scenario}'"]
    shared = scenario.periods.index(part.decide) + 1
    problems = _check_in(plan, shared_view(catalog, plan.scenario, shared))
    if futures is None or plan.periods is None:
        return problems
    if len(futures) != len(part.runs):
        return [*problems, f"futures: {len(part.runs)} runs, but {len(futures)} catalogs to check them in"]
    each = []
    for k, (run, future) in enumerate(zip(part.runs, futures, strict=True)):
        found, totals = _run_problems(run, future, plan.scenario, _period_decisions(plan.periods[:shared]))
        problems += [f"futures.runs.{k}.{p}" for p in found]
        if totals is not None:
            each.append(totals)
    if len(each) == len(part.runs):
        problems += _totals_problems(plan.totals, expected_totals(each))
    return problems


def _committed(dec: Decisions) -> tuple[Any, ...]:
    """What a shared period commits to: the units installed, and the scale-out switch of each site with
    compute."""
    sites = {d.site for d in dec.deployments}
    return dec.deployments, tuple((s, o) for s, o in dec.scale_out if s in sites)


def _run_problems(
    run: FutureRun, future: Catalog, scenario_id: str, shared: Sequence[Decisions]
) -> tuple[list[str], Totals | None]:
    """One future's periods against its catalog, and its whole-window totals (None when they cannot be
    evaluated)."""
    scenario = future.scenarios[scenario_id]
    starts = [p.start for p in run.periods]
    if starts != [p.start for p in periods_of(scenario)]:
        return [f"periods: starts {starts}, the scenario's are {scenario.periods}"], None
    decisions = _period_decisions(run.periods)
    installs = Decisions(decisions[-1].deployments, decisions[-1].scale_out, decisions)
    problems = [
        f"periods.{p}: installs other than the shared purchases of {starts[p]}"
        for p, (mine, top) in enumerate(zip(decisions, shared, strict=False))
        if _committed(mine) != _committed(top)
    ]
    for period, dec in zip(periods_of(scenario), decisions, strict=True):
        view, at = period_view(future, scenario_id, period)
        why = decision_problems(view, at, list(dec.deployments), dict(dec.scale_out))
        problems += [f"periods: in {period.start}: {w}" for w in why]
    if problems:
        return problems, None
    ev = evaluate_decisions(future, scenario_id, installs)
    problems += [f"violated: {describe(row)}" for row in plan_rows(scenario, ev) if row.violated]
    problems += _differences(
        canon([p.model_dump(exclude_none=True) for p in run.periods]),
        canon([p.model_dump(exclude_none=True) for p in period_parts(ev)]),
        "periods",
    )
    totals = plan_body(ev)[0]
    if not _close(run.tco_usd, totals.tco_usd):
        problems.append(f"tco_usd: plan says {run.tco_usd}, the cost model gives {totals.tco_usd}")
    return problems, totals
