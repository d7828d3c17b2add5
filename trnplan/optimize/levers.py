"""What a scenario itself can change when no plan meets it: its demand, `as_of` and `min_domain_chips`.

`no_option_lines` says when nothing in the catalog can serve the scenario at any of its sites (a chip with
no form, forms that support no cooling the sites have), which no capacity can fix. `lever_lines` measures
the levers: the most of each demand that fits as the scenario stands (a MILP that maximises it with the
demand rows dropped), and what a later `as_of` or a smaller `min_domain_chips` would allow.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pulp

from trnplan.catalog import Catalog, Scenario, month_leq
from trnplan.costs import all_options, option_problems
from trnplan.optimize.build import build_model
from trnplan.optimize.model import lin
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solve import solve

EXPLAIN_OPTIONS = {"mip_allow_restart": False}
"""HiGHS's options for the small MILPs that explain a scenario with no plan (its elastic models,
`explain`, and what fits, `most_that_fits`): HiGHS 1.16.0 looped for ever after a restart on one of them,
past its time limit and a cancel (an elastic model of a generated world, 39 columns,
`tests/fixtures/highs/restart_loop.mps`; without restarts it is solved in 0.03 s)."""

DEMANDS = (("chips", "chips"), ("fp8_pflops", "PF"), ("hbm_tb", "TB HBM"))
MAX_REASONS = 6


def no_option_lines(catalog: Catalog, scenario_id: str) -> list[str]:
    """Why no form, cooling and scale-up switch in the catalog can serve the scenario at any of its sites,
    whatever its capacity; [] when one can (a blocked one that the scenario could unblock counts)."""
    scenario = catalog.scenarios[scenario_id]
    hard: dict[str, None] = {}
    for site_id in sorted(scenario.sites):
        for form_id, cooling_id, switch_id in all_options(catalog):
            why = option_problems(catalog, scenario, site_id, form_id, cooling_id, switch_id)
            if not any(reason.hard for reason in why):
                return []
            hard.update((reason.text, None) for reason in why if reason.hard)
    head = "nothing in the catalog qualifies: no form can serve this scenario at any of its sites"
    if not catalog.forms:
        return [head, "  the specs describe no form; add one to `forms`"]
    if scenario.chips is not None and not any(f.chip in scenario.chips for f in catalog.forms.values()):
        chips = ", ".join(scenario.chips)
        return [
            head,
            f"  no form uses chip {chips} (the scenario's chips: [{chips}]); add a form for it to `forms`, "
            "or allow other chips",
        ]
    reasons = [r for r in hard if "not among the scenario's" not in r] or list(hard)
    lines = [head] + [f"  {r}" for r in reasons[:MAX_REASONS]]
    if len(reasons) > MAX_REASONS:
        lines.append(f"  ... and {len(reasons) - MAX_REASONS} more")
    return lines


def _with(catalog: Catalog, scenario_id: str, **update: object) -> Catalog:
    scenarios = dict(catalog.scenarios)
    scenarios[scenario_id] = catalog.scenarios[scenario_id].model_copy(update=update)
    return replace(catalog, scenarios=scenarios)


def most_that_fits(
    catalog: Catalog, scenario_id: str, key: str, solver: str, deadline: Deadline, period: int = -1
) -> float | None:
    """The most chips (fp8_pflops, hbm_tb) any plan of the scenario holds within its limits, demand aside,
    installed in its `period` (an index of its periods; the last by default); None when that could not
    be settled in the time left."""
    if deadline.expired:
        return None
    model = build_model(catalog, scenario_id)
    for row in model.prob.constraints():
        if row.name.startswith("demand_") and "at_most" not in row.name:
            row.changeRHS(0.0)  # demand >= 0: dropped
    model.prob.sense = pulp.LpMaximize
    sites = model.periods[period].sites
    model.prob.setObjective(
        lin((v, getattr(o, key)) for sm in sites for v, o in zip(sm.n, sm.options, strict=True))
    )
    result = solve(model.prob, solver, deadline.remaining(), options=EXPLAIN_OPTIONS)
    if result.status.value != "optimal":
        return 0.0 if result.status.value == "infeasible" else None
    return max(0.0, float(pulp.value(model.prob.objective) or 0.0))


class _Fits:
    """`most_that_fits` of variants of one scenario (its `min_domain_chips`, `as_of`), each solved once."""

    def __init__(self, catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline):
        self.catalog, self.scenario_id, self.solver, self.deadline = catalog, scenario_id, solver, deadline
        self.known: dict[tuple[str, int, tuple[tuple[str, object], ...]], float | None] = {}

    def __call__(self, key: str, period: int = -1, update: dict[str, object] | None = None) -> float | None:
        update = update or {}
        at = (key, period, tuple(sorted(update.items())))
        if at not in self.known:
            catalog = _with(self.catalog, self.scenario_id, **update) if update else self.catalog
            args = (catalog, self.scenario_id, key, self.solver, self.deadline, period)
            self.known[at] = most_that_fits(*args)
        return self.known[at]


def _amount(value: float, key: str, unit: str) -> str:
    if key == "chips":
        return f"{math.floor(value + 1e-6):,} {unit}"
    return f"{math.floor(value * 10 + 1e-6) / 10:,.1f} {unit}"


def _set_value(value: float, key: str) -> str:
    return str(math.floor(value + 1e-6)) if key == "chips" else f"{math.floor(value * 10 + 1e-6) / 10:g}"


def _demand_lines(catalog: Catalog, scenario_id: str, fits: _Fits) -> list[str]:
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is not None:
        return _period_demand_lines(scenario, scenario_id, fits)
    lines = []
    for key, unit in DEMANDS:
        need = getattr(scenario.demand, key)
        if need is None:
            continue
        most = fits(key)
        if most is None:
            continue
        asked = _amount(need, key, unit)
        if most < need * (1 - 1e-9) and most > 0:
            lines.append(
                f"demand.{key}: at most {_amount(most, key, unit)} fit (the scenario asks for {asked}): "
                f"--set scenarios.{scenario_id}.demand.{key}={_set_value(most, key)}"
            )
        elif most <= 0:
            lines.append(f"demand.{key}: nothing fits as the scenario stands (it asks for {asked})")
    return lines


def _period_demand_lines(scenario: Scenario, scenario_id: str, fits: _Fits) -> list[str]:
    """Per demand entry (the periods it holds for, in order): the most that fits in the tightest of them,
    when that is less than the entry asks; `--set` lowers that entry."""
    starts = list(scenario.periods or ())
    entries = sorted(scenario.demand_by_month)
    lines = []
    for key, unit in DEMANDS:
        for n, month in enumerate(entries):
            need = getattr(scenario.demand_by_month[month], key)
            if need is None:
                continue
            until = entries[n + 1] if n + 1 < len(entries) else None
            held = [i for i, s in enumerate(starts) if s >= month and (until is None or s < until)]
            mosts = [(most, starts[i]) for i in held if (most := fits(key, period=i)) is not None]
            if not mosts:
                continue
            most, tightest = min(mosts)
            if most >= need * (1 - 1e-9):
                continue
            span = f"in {starts[held[0]]}" + (f" to {starts[held[-1]]}" if len(held) > 1 else "")
            where = f" (tightest in {tightest})" if tightest != starts[held[0]] else ""
            asked = _amount(need, key, unit)
            if most <= 0:
                lines.append(f"demand.{month}.{key}: {span}, nothing fits (the scenario asks for {asked})")
                continue
            lever = (
                f"lower the ramp's {key}" if scenario.ramped
                else f"--set scenarios.{scenario_id}.demand.{month}.{key}={_set_value(most, key)}"
            )
            lines.append(
                f"demand.{month}.{key}: {span}, at most {_amount(most, key, unit)} fit{where} (the scenario "
                f"asks for {asked}): {lever}"
            )
    return lines


def _fits_text(scenario: Scenario, fits: _Fits, update: dict[str, object]) -> str:
    """', at most N chips fit' under a variant of the scenario (the first demand given); '' if unknown."""
    for key, unit in DEMANDS:
        if getattr(scenario.demand, key) is not None:
            most = fits(key, update=update)
            if most is None:
                return ""
            return f", at most {_amount(most, key, unit)} fit" if most > 0 else ", still nothing fits"
    return ""


def _late(catalog: Catalog, scenario: Scenario) -> dict[str, str]:
    """Chips, scale-up and scale-out switches the scenario could use but for `as_of`: id -> month."""
    late: dict[str, str] = {}
    for form in catalog.forms.values():
        if scenario.chips is not None and form.chip not in scenario.chips:
            continue
        chip = catalog.chips.get(form.chip)
        if chip is not None and not month_leq(chip.available_from, scenario.as_of):
            late[form.chip] = str(chip.available_from)
        for option in form.scale_up:
            switch = catalog.switches.get(option.switch)
            if switch is not None and not month_leq(switch.available_from, scenario.as_of):
                late[option.switch] = switch.available_from
    for switch_id, switch in catalog.switches.items():
        if switch.role == "scale_out" and not month_leq(switch.available_from, scenario.as_of):
            late[switch_id] = switch.available_from
    return late


def _as_of_line(catalog: Catalog, scenario_id: str, fits: _Fits) -> list[str]:
    scenario = catalog.scenarios[scenario_id]
    late = _late(catalog, scenario) if scenario.as_of is not None else {}
    if not late:
        return []
    month = max(late.values())
    named = ", ".join(f"{k} ({m})" for k, m in sorted(late.items(), key=lambda kv: (kv[1], kv[0])))
    return [
        f"as_of {scenario.as_of}: not yet available: {named}; with as_of {month}"
        f"{_fits_text(scenario, fits, {'as_of': month})}: --set scenarios.{scenario_id}.as_of={month}"
    ]


def _fit_at(scenario: Scenario, fits: _Fits, update: dict[str, object] | None = None) -> str | None:
    """'at most N chips' (or 'nothing') fit under a variant, in the last period; None if not known."""
    for key, unit in DEMANDS:
        if getattr(scenario.demand, key) is not None:
            most = fits(key, update=update)
            if most is None:
                return None
            return f"at most {_amount(most, key, unit)}" if most > 0 else "nothing"
    return None


def _domain_line(catalog: Catalog, scenario_id: str, fits: _Fits) -> list[str]:
    scenario = catalog.scenarios[scenario_id]
    smaller = [
        (f.domain_chips, fid)
        for fid, f in catalog.forms.items()
        if f.domain_chips < scenario.min_domain_chips
        and (scenario.chips is None or f.chip in scenario.chips)
        and (scenario.forms is None or fid in scenario.forms)
    ]
    if not smaller:
        return []
    largest, form_id = max(smaller)
    now = scenario.min_domain_chips
    line = f"min_domain_chips {now:,}: {form_id} has {largest:,}-chip domains"
    then, later = _fit_at(scenario, fits), _fit_at(scenario, fits, {'min_domain_chips': largest})
    if then is not None and later is not None:
        when = f"in {scenario.periods[-1]} " if scenario.periods else ""
        line += f"; {when}{then} fit{'s' if then == 'nothing' else ''} at {now:,}, {later} at {largest:,}"
    return [f"{line}: --set scenarios.{scenario_id}.min_domain_chips={largest}"]


def lever_lines(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
    """'levers in the scenario:' and what each would do, or [] when none applies (or time ran out)."""
    fits = _Fits(catalog, scenario_id, solver, deadline)
    levers = (
        _demand_lines(catalog, scenario_id, fits)
        + _as_of_line(catalog, scenario_id, fits)
        + _domain_line(catalog, scenario_id, fits)
    )
    return ["levers in the scenario:"] + [f"  {line}" for line in levers] if levers else []
