"""Compare two plans: summary metrics, per-site choices, deployments (the installed base, a phased plan's
last period), BOM lines, what the plans were computed from and, when either plan states periods, each
period's installed base and purchases. Money in integer cents, so deltas negate exactly when the plans swap.

Pure functions of two plans (no catalog, no solver). A plan without periods is one period: two of them
compare no periods, and one against a phased plan says the scenario gained or lost its periods.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from trnplan.diff.attribution import attribution
from trnplan.diff.model import (
    CHOICE_FIELDS,
    DEPLOYMENT_FIELDS,
    MONEY_METRICS,
    OPTIONAL_METRICS,
    PERIOD_METRICS,
    SUMMARY_METRICS,
    BomDelta,
    ChoiceChange,
    DeploymentChange,
    FabricChange,
    InputChange,
    Kind,
    MetricDelta,
    OptionChange,
    PeriodDelta,
    PeriodFigure,
    PeriodsDiff,
    PlanDiff,
)
from trnplan.numbers import canon_float, cents, money_short
from trnplan.plan.model import DeploymentRow, Inputs, PeriodSite, Plan, PlanPeriod, SolverInfo


def _clean(value: float) -> float:
    """Float noise and -0.0 rounded away, whole numbers as ints."""
    return canon_float(float(value))


def _delta(old: float, new: float, money: bool) -> float:
    if money:
        return (cents(new) - cents(old)) / 100
    return _clean(new - old)


def _pct(old: float, delta: float) -> float | None:
    return round(delta / old * 100, 6) if old else None


def _is_empty(plan: Plan) -> bool:
    """The stand-in for a plan that does not exist (`Plan.empty`): nothing was computed, from nothing."""
    return plan.solver is None and not plan.sites


def solver_text(solver: SolverInfo | None) -> str:
    """`HiGHS 1.16.0 (proven optimal)`, `HiGHS 1.16.0 (proven within 0.01% (gap 0.004%))`; '' for a plan
    without a solver."""
    if solver is None:
        return ""
    name = f"{solver.name} {solver.version}".strip()
    return f"{name} ({solver.proof})"


def _summary(base: Plan, head: Plan) -> list[MetricDelta]:
    out = []
    for metric, unit, _ in SUMMARY_METRICS:
        old, new = base.totals.figure(metric), head.totals.figure(metric)
        delta = _delta(old, new, metric in MONEY_METRICS)
        out.append(MetricDelta(metric, unit, old, new, delta, _pct(old, delta)))
    for metric, unit, _ in OPTIONAL_METRICS:
        if getattr(base.totals, metric) is None and getattr(head.totals, metric) is None:
            continue
        old, new = base.totals.figure(metric), head.totals.figure(metric)
        delta = _delta(old, new, False)
        out.append(MetricDelta(metric, unit, old, new, delta, _pct(old, delta)))
    return out


def _joined(values: Iterable[str]) -> str:
    return " + ".join(sorted(set(values)))


def site_choices(plan: Plan) -> dict[str, dict[str, str]]:
    """Per site, what it chose: forms, coolings and scale-up switches in use (joined with ` + `) and the
    scale-out switch."""
    return {
        site: {
            "form": _joined(d.form for d in s.deployments),
            "cooling": _joined(d.cooling for d in s.deployments),
            "scale_up_switch": _joined(d.scale_up_switch for d in s.deployments),
            "scale_out_switch": s.scale_out.switch,
        }
        for site, s in plan.sites.items()
    }


def _choices(base: Plan, head: Plan) -> list[ChoiceChange]:
    old, new = site_choices(base), site_choices(head)
    out = []
    for site in sorted(set(old) | set(new)):
        for f in CHOICE_FIELDS:
            a = old[site][f] if site in old else None
            b = new[site][f] if site in new else None
            if a != b:
                out.append(ChoiceChange(site, f, a, b))
    return out


def _figures(d: DeploymentRow) -> dict[str, float]:
    """A deployment's compared figures, capex in cents (so summing rows is exact)."""
    return {
        "units": d.units,
        "racks": d.racks,
        "chips": d.chips,
        "it_power_kw": d.it_power_kw,
        "capex_usd": cents(d.capex_usd),
    }


def _deployment_rows(plan: Plan) -> dict[tuple[str, str], dict[str, float]]:
    """(site, form/cooling/scale_up_switch) -> the deployment's figures; rows that share a key are summed."""
    acc: dict[tuple[str, str], dict[str, float]] = {}
    for site, s in plan.sites.items():
        for d in s.deployments:
            row = acc.setdefault((site, d.key), dict.fromkeys(DEPLOYMENT_FIELDS, 0.0))
            for f, value in _figures(d).items():
                row[f] += value
    return {
        key: {f: row[f] / 100 if f == "capex_usd" else _clean(row[f]) for f in DEPLOYMENT_FIELDS}
        for key, row in acc.items()
    }


def _deployments(base: Plan, head: Plan) -> list[DeploymentChange]:
    old, new = _deployment_rows(base), _deployment_rows(head)
    out = []
    for key in sorted(set(old) | set(new)):
        site, name = key
        if key not in old:
            out.append(DeploymentChange("+", site, name, {f: (None, new[key][f]) for f in DEPLOYMENT_FIELDS}))
        elif key not in new:
            out.append(DeploymentChange("-", site, name, {f: (old[key][f], None) for f in DEPLOYMENT_FIELDS}))
        else:
            changed: dict[str, tuple[float | None, float | None]] = {
                f: (old[key][f], new[key][f]) for f in DEPLOYMENT_FIELDS if old[key][f] != new[key][f]
            }
            if changed:
                out.append(DeploymentChange("~", site, name, changed))
    return out


def _bom_rows(plan: Plan) -> dict[tuple[str, str, str], tuple[float, int]]:
    """(site, category, item) -> (quantity, cents); lines that share a key are summed."""
    qty: dict[tuple[str, str, str], float] = defaultdict(float)
    usd: dict[tuple[str, str, str], int] = defaultdict(int)
    for line in plan.bom:
        key = (line.site, line.category, line.item)
        qty[key] += line.quantity
        usd[key] += cents(line.extended_usd)
    return {k: (_clean(qty[k]), usd[k]) for k in qty}


def _bom(base: Plan, head: Plan) -> list[BomDelta]:
    old, new = _bom_rows(base), _bom_rows(head)
    out = []
    for key in sorted(set(old) | set(new)):
        site, category, item = key
        if key not in old:
            q, c = new[key]
            out.append(BomDelta("+", site, category, item, None, q, None, c / 100, c / 100))
        elif key not in new:
            q, c = old[key]
            out.append(BomDelta("-", site, category, item, q, None, c / 100, None, -c / 100))
        elif old[key] != new[key]:
            (q0, c0), (q1, c1) = old[key], new[key]
            out.append(BomDelta("~", site, category, item, q0, q1, c0 / 100, c1 / 100, (c1 - c0) / 100))
    return out


# --- each period -----------------------------------------------------------------------------------


def _period_figures(old: PlanPeriod | None, new: PlanPeriod | None) -> list[PeriodFigure]:
    out = []
    for metric, unit, _ in PERIOD_METRICS:
        a = None if old is None else float(getattr(old.totals, metric))
        b = None if new is None else float(getattr(new.totals, metric))
        delta = _delta(a or 0.0, b or 0.0, unit == "USD")
        out.append(PeriodFigure(metric, unit, a, b, delta))
    return out


def _units(s: PeriodSite | None) -> dict[str, tuple[int, int]]:
    """key -> (installed units, bought units) of a site in a period (summed over rows of one key)."""
    out: dict[str, tuple[int, int]] = {}
    for d in s.deployments if s is not None else []:
        units, bought = out.get(d.key, (0, 0))
        out[d.key] = (units + d.units, bought + d.bought)
    return out


def _options(old: PlanPeriod, new: PlanPeriod) -> list[OptionChange]:
    out = []
    for site in sorted(set(old.sites) | set(new.sites)):
        a, b = _units(old.sites.get(site)), _units(new.sites.get(site))
        for key in sorted(set(a) | set(b)):
            (ua, ba), (ub, bb) = a.get(key, (0, 0)), b.get(key, (0, 0))
            if (ua, ba) != (ub, bb):
                out.append(OptionChange(site, key, ua, ub, ba, bb))
    return out


def _fabric_value(s: PeriodSite | None, name: str) -> str | None:
    if s is None:
        return None
    return s.scale_out.switch if name == "switch" else str(s.scale_out.tiers)


def _fabric(old: PlanPeriod, new: PlanPeriod) -> list[FabricChange]:
    out = []
    for site in sorted(set(old.sites) | set(new.sites)):
        for name in ("switch", "tiers"):
            a, b = _fabric_value(old.sites.get(site), name), _fabric_value(new.sites.get(site), name)
            if a != b:
                out.append(FabricChange(site, name, a, b))
    return out


def _period(start: str, old: PlanPeriod | None, new: PlanPeriod | None) -> PeriodDelta:
    """One period in base and head: its figures and, when both plans have it, what changed in it."""
    figures = _period_figures(old, new)
    if old is None or new is None:
        return PeriodDelta(start, old is not None, new is not None, figures)
    return PeriodDelta(start, True, True, figures, _options(old, new), _fabric(old, new))


def _periods(base: Plan, head: Plan) -> PeriodsDiff | None:
    """The periods of two plans compared, over the union of their starts; None when neither states
    periods. A plan that does not exist (a new or a gone scenario) has none to gain or lose."""
    if base.periods is None and head.periods is None:
        return None
    old = {p.start: p for p in base.periods or []}
    new = {p.start: p for p in head.periods or []}
    base_many = base.periods is not None or _is_empty(base)
    head_many = head.periods is not None or _is_empty(head)
    kind: Kind = "phased" if base_many and head_many else "gained" if head_many else "lost"
    periods = [_period(start, old.get(start), new.get(start)) for start in sorted(set(old) | set(new))]
    if kind == "phased" and sorted(old) == sorted(new):
        periods = _where_changes_start(periods)
    return PeriodsDiff(kind, sorted(old), sorted(new), periods)


def _where_changes_start(periods: list[PeriodDelta]) -> list[PeriodDelta]:
    """Each change once, in the period where it starts: an option in a period where both plans bought the
    same (its installed units differ only by what earlier periods bought, which those periods list), a
    fabric figure whose base and head are the same pair as the period before."""
    out = []
    before: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    for period in periods:
        options = [o for o in period.options if o.old_bought != o.new_bought]
        fabric = [f for f in period.fabric if before.get((f.site, f.field)) != (f.old, f.new)]
        before = {(f.site, f.field): (f.old, f.new) for f in period.fabric}
        out.append(replace(period, options=options, fabric=fabric))
    return out


# --- the diff ---------------------------------------------------------------------------------------


def _input_values(inputs: Inputs | None) -> dict[str, str]:
    """`specs` and each `--set PATH` of a plan's inputs, with their values; the defaults for none."""
    if inputs is None:
        return {"specs": "default"}
    values = {"specs": ", ".join(inputs.specs) or "default"}
    for override in inputs.overrides:
        path, _, value = override.partition("=")
        values[f"--set {path.strip()}"] = value.strip()
    return values


def _replaced(inputs: Inputs | None) -> dict[str, str]:
    """`--set PATH` -> the value the specs had where an override of the plan replaced one."""
    return {f"--set {path}": value for path, value in ((inputs.replaced or {}) if inputs else {}).items()}


def _inputs(base: Plan, head: Plan) -> list[InputChange]:
    """What the two plans were computed from, where it differs (nothing when a side does not exist). A
    `--set` on one side only is compared with the value it replaced (what the other side's specs say,
    when both read the same specs); None where the specs had none."""
    if _is_empty(base) or _is_empty(head):
        return []
    old, new = _input_values(base.inputs), _input_values(head.inputs)
    if old["specs"] == new["specs"]:
        old = {**_replaced(head.inputs), **old}
        new = {**_replaced(base.inputs), **new}
    names = ["specs"] + sorted((set(old) | set(new)) - {"specs"})
    return [InputChange(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n)]


def _both_and_differ(a: object, b: object) -> bool:
    """Both sides state something (non-empty), and not the same thing."""
    return bool(a) and bool(b) and a != b


def _futures_text(plan: Plan) -> str:
    """A plan across futures' figures in one phrase ("" for another plan)."""
    part = plan.futures
    if part is None:
        return ""
    vss = money_short(part.vss_usd) if part.vss_usd is not None else "none"
    risk = f", {part.risk} {money_short(part.risk_tco_usd)}" if part.risk_tco_usd is not None else ""
    return (f"{part.n} futures (seed {part.seed}, shared to {part.decide}): expected TCO "
            f"{money_short(part.expected_tco_usd)}{risk}, VSS {vss}, EVPI {money_short(part.evpi_usd)}")


def futures_notes(base: Plan, head: Plan) -> list[str]:
    """What the plans across futures say, when either is one: their expected TCO and what the
    uncertainty is worth (a plan's top level holds only the shared purchases)."""
    old, new = _futures_text(base), _futures_text(head)
    if not old and not new:
        return []
    if old == new:
        return [f"both plans are across {new}"]
    said = [f"{side}: {'across ' + text if text else 'one future'}" for side, text in (("base", old),
                                                                                      ("head", new))]
    return ["; ".join(said)]


def _notes(base: Plan, head: Plan, different: bool, attributed: bool) -> list[str]:
    """What a reader should know beyond the tables: a scenario mismatch, provenance that changed while the
    plan did not, a solver change, and a missing attribution."""
    notes = []
    if base.scenario != head.scenario and base.sites and head.sites:
        notes.append(f"comparing different scenarios: '{base.scenario}' and '{head.scenario}'")
    if _both_and_differ(base.inputs_digest, head.inputs_digest) and not different:
        notes.append("the inputs digest changed but the plan did not")
    base_solver, head_solver = solver_text(base.solver), solver_text(head.solver)
    if _both_and_differ(base_solver, head_solver):
        notes.append(f"solved by {base_solver} in base and {head_solver} in head")
    if _both_and_differ(base.binding, head.binding) and not different:
        notes.append("what holds the plan back (binding constraints) changed, the plan did not")
    if not attributed:
        notes.append(
            "TCO attribution needs totals.energy_usd_per_year, totals.colocation_usd_per_year and "
            "economics.horizon_years in both plans; re-plan to get it"
        )
    return notes


def diff_plans(base: Plan, head: Plan, base_label: str = "base", head_label: str = "head") -> PlanDiff:
    """Compare two plans: summary metrics, per-site choices, deployments (keyed by site and
    form/cooling/scale_up_switch), BOM lines (keyed by site, category, item), the TCO delta by category and,
    when either plan states periods, each period."""
    summary = _summary(base, head)
    choices = _choices(base, head)
    deployments = _deployments(base, head)
    bom = _bom(base, head)
    attributed = attribution(base, head)
    periods = _periods(base, head)
    changed = any(m.delta != 0 for m in summary) or (periods is not None and periods.different)
    changed = changed or _futures_text(base) != _futures_text(head)
    different = bool(choices or deployments or bom or changed)
    return PlanDiff(
        base_label=base_label,
        head_label=head_label,
        base_digest=base.inputs_digest,
        head_digest=head.inputs_digest,
        base_solver=solver_text(base.solver),
        head_solver=solver_text(head.solver),
        different=different,
        summary=summary,
        choices=choices,
        deployments=deployments,
        bom=bom,
        attribution=attributed or [],
        scenario=head.scenario if head.sites or not base.sites else base.scenario,
        notes=_notes(base, head, different, attributed is not None) + (periods.notes() if periods else [])
        + futures_notes(base, head),
        inputs=_inputs(base, head),
        periods=periods,
    )
