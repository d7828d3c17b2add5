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
    catalog: Catalog, scenario_id: str, key: str, solver: str, deadline: Deadline
) -> float | None:
    """The most chips (fp8_pflops, hbm_tb) any plan of the scenario holds within its limits, demand aside;
    None when that could not be settled in the time left."""
    if deadline.expired:
        return None
    model = build_model(catalog, scenario_id)
    for row in model.prob.constraints():
        if row.name.startswith("demand_") and "at_most" not in row.name:
            row.changeRHS(0.0)  # demand >= 0: dropped
    model.prob.sense = pulp.LpMaximize
    model.prob.setObjective(
        lin((v, getattr(o, key)) for sm in model.sites for v, o in zip(sm.n, sm.options, strict=True))
    )
    result = solve(model.prob, solver, deadline.remaining())
    if result.status.value != "optimal":
        return 0.0 if result.status.value == "infeasible" else None
    return max(0.0, float(pulp.value(model.prob.objective) or 0.0))


def _amount(value: float, key: str, unit: str) -> str:
    if key == "chips":
        return f"{math.floor(value + 1e-6):,} {unit}"
    return f"{math.floor(value * 10 + 1e-6) / 10:,.1f} {unit}"


def _set_value(value: float, key: str) -> str:
    return str(math.floor(value + 1e-6)) if key == "chips" else f"{math.floor(value * 10 + 1e-6) / 10:g}"


def _demand_lines(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is not None:
        return []  # demand by month: the elastic explanation names each period's shortfall
    lines = []
    for key, unit in DEMANDS:
        need = getattr(scenario.demand, key)
        if need is None:
            continue
        most = most_that_fits(catalog, scenario_id, key, solver, deadline)
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


def _fits_text(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> str:
    """', at most N chips fit' under a variant of the scenario (the first demand given); '' if unknown."""
    scenario = catalog.scenarios[scenario_id]
    for key, unit in DEMANDS:
        if getattr(scenario.demand, key) is not None:
            most = most_that_fits(catalog, scenario_id, key, solver, deadline)
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


def _as_of_line(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
    scenario = catalog.scenarios[scenario_id]
    late = _late(catalog, scenario) if scenario.as_of is not None else {}
    if not late:
        return []
    month = max(late.values())
    named = ", ".join(f"{k} ({m})" for k, m in sorted(late.items(), key=lambda kv: (kv[1], kv[0])))
    fits = _fits_text(_with(catalog, scenario_id, as_of=month), scenario_id, solver, deadline)
    return [
        f"as_of {scenario.as_of}: not yet available: {named}; with as_of {month}{fits}: "
        f"--set scenarios.{scenario_id}.as_of={month}"
    ]


def _domain_line(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
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
    fits = _fits_text(_with(catalog, scenario_id, min_domain_chips=largest), scenario_id, solver, deadline)
    return [
        f"min_domain_chips {scenario.min_domain_chips:,}: {form_id} has {largest:,}-chip domains; with "
        f"min_domain_chips {largest:,}{fits}: --set scenarios.{scenario_id}.min_domain_chips={largest}"
    ]


def lever_lines(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
    """'levers in the scenario:' and what each would do, or [] when none applies (or time ran out)."""
    levers = (
        _demand_lines(catalog, scenario_id, solver, deadline)
        + _as_of_line(catalog, scenario_id, solver, deadline)
        + _domain_line(catalog, scenario_id, solver, deadline)
    )
    return ["levers in the scenario:"] + [f"  {line}" for line in levers] if levers else []
