"""Why no plan exists, in the user's terms, from elastic re-solves.

Two questions are asked of an elastic copy of the model, where capacity rows take slacks and blocked
options (no such cooling at the site, a switch not yet available, domains too small) may be unlocked:
  1. with today's choices, how much more capacity would it take?  (unlocks forbidden)
  2. which choices would have to change?                            (unlocks cheap, capacity dear)
When nothing in the catalog can serve the scenario at all (no form for its chips, say), that is said
instead. Then the scenario's own levers (`levers`): how much of the demand fits as it stands, and what a
later `as_of` or a smaller `min_domain_chips` would allow. Every solve shares the caller's deadline.
"""

from __future__ import annotations

import re

from trnplan.catalog import Catalog
from trnplan.costs import scale_out_switches
from trnplan.optimize.build import build_model
from trnplan.optimize.levers import EXPLAIN_OPTIONS, lever_lines, no_option_lines
from trnplan.optimize.model import Model, set_elastic_objective
from trnplan.optimize.progress import Deadline
from trnplan.optimize.solve import solve

TOL = 1e-6


def _fmt(amount: float, unit: str) -> str:
    if unit == "USD":
        return f"${amount:,.0f}"
    if unit == "MW":
        return f"{amount:,.2f} MW" if amount < 10 else f"{amount:,.1f} MW"
    if abs(amount - round(amount)) < 1e-6:
        return f"{amount:,.0f} {unit[:-1] if round(amount) == 1 and unit.endswith('s') else unit}"
    return f"{amount:,.2f} {unit}"


def _slack_lines(model: Model) -> list[str]:
    lines = []
    for _name, slack in sorted(model.slacks.items()):
        value = slack.var.value() or 0.0
        if value <= TOL * max(1.0, slack.limit):
            continue
        amount = value / slack.per
        if _fmt(amount, slack.unit) == _fmt(0.0, slack.unit):
            continue  # a relaxation too small to state
        if slack.shortfall:
            lines.append(
                f"{slack.label} for {_fmt(slack.limit, slack.unit)} cannot be met by any allowed option "
                f"({_fmt(amount, slack.unit)} short)"
            )
        else:
            now = slack.limit / slack.per
            lines.append(
                f"{slack.label}: needs {_fmt(amount, slack.unit)} more "
                f"({_fmt(now, slack.unit)} -> {_fmt(now + amount, slack.unit)})"
            )
    return _in_period_order(lines, [pm.period.start for pm in model.periods] if model.multi else [])


_WHEN = re.compile(r"in (\d{4}-\d{2}) (.*)", re.DOTALL)


def _in_period_order(lines: list[str], periods: list[str]) -> list[str]:
    """Lines of a model with periods in the periods' order (stable within one), one line for the same
    need in consecutive periods: `in 2027-07 to 2028-01 ohio IT power: needs ...`."""
    months: dict[str, list[str]] = {}
    order: dict[str, int] = {}
    for n, line in enumerate(lines):
        match = _WHEN.fullmatch(line)
        if match is None or match.group(1) not in periods:
            months.setdefault(line, [])
            order.setdefault(line, n)
            continue
        months.setdefault(match.group(2), []).append(match.group(1))
        order.setdefault(match.group(2), n)
    runs: list[tuple[int, int, str]] = []
    for text, seen in months.items():
        if not seen:
            runs.append((-1, order[text], text))
            continue
        at = sorted(periods.index(month) for month in seen)
        start = at[0]
        for prev, here in zip(at, [*at[1:], None], strict=True):
            if here is None or here != prev + 1:
                span = periods[start] if start == prev else f"{periods[start]} to {periods[prev]}"
                runs.append((start, order[text], f"in {span} {text}"))
                start = here if here is not None else start
    return [text for _, _, text in sorted(runs)]


def _unlock_lines(model: Model) -> list[str]:
    return [
        f"lift: {reason}"
        for _name, (var, reason) in sorted(model.unlocks.items())
        if (var.value() or 0) > 0.5
    ]


def _no_scale_out_lines(catalog: Catalog, scenario_id: str) -> list[str]:
    """Why no scale-out switch can serve the scenario at all; [] when one can."""
    scenario = catalog.scenarios[scenario_id]
    if scale_out_switches(catalog, scenario):
        return []
    candidates = sorted((s.available_from, k) for k, s in catalog.switches.items() if s.role == "scale_out")
    if not candidates:
        return ["the specs describe no scale-out switch; add one to `switches` with role scale_out"]
    month, earliest = candidates[0]
    return [
        f"no scale-out switch is available by as_of {scenario.as_of}: "
        f"the earliest, {earliest}, is available from {month}"
    ]


def _capacity_lines(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
    """With today's choices (no unlocks), how much more capacity it would take."""
    if deadline.expired:
        return []
    capacity = build_model(catalog, scenario_id, elastic=True)
    for var, _reason in capacity.unlocks.values():
        var.upBound = 0
    set_elastic_objective(capacity, unlock_weight=0.0, slack_weight=1.0)
    first = solve(capacity.prob, solver, deadline.remaining(), options=EXPLAIN_OPTIONS)
    return _slack_lines(capacity) if first.status.has_solution else []


def _choice_lines(catalog: Catalog, scenario_id: str, solver: str, deadline: Deadline) -> list[str]:
    """Which blocked choices would have to change (unlocks cheap, capacity dear)."""
    if deadline.expired:
        return []
    choices = build_model(catalog, scenario_id, elastic=True)
    set_elastic_objective(choices, unlock_weight=1.0, slack_weight=100.0)
    second = solve(choices.prob, solver, deadline.remaining(), options=EXPLAIN_OPTIONS)
    return (_unlock_lines(choices) + _slack_lines(choices)) if second.status.has_solution else []


def explain_infeasible(
    catalog: Catalog, scenario_id: str, solver: str, time_limit: float | Deadline | None
) -> list[str]:
    """Lines that say which constraints must give, and by how much; then the scenario's levers."""
    deadline = Deadline.of(time_limit)
    missing_fabric = _no_scale_out_lines(catalog, scenario_id)
    if missing_fabric:
        return missing_fabric
    nothing = no_option_lines(catalog, scenario_id)
    if nothing:
        return nothing + lever_lines(catalog, scenario_id, solver, deadline)
    capacity_lines = _capacity_lines(catalog, scenario_id, solver, deadline)
    choice_lines = _choice_lines(catalog, scenario_id, solver, deadline)
    out: list[str] = []
    capacity_ok = bool(capacity_lines) and not any(line.startswith("demand for") for line in capacity_lines)
    if capacity_ok:
        out.append("with the current choices, capacity must give:")
        out.extend(f"  {line}" for line in capacity_lines)
    lifts = any(line.startswith("lift:") for line in choice_lines)
    if choice_lines and choice_lines != capacity_lines and lifts:
        out.append("or" if capacity_ok else "choices must change:")
        out.extend(f"  {line}" for line in choice_lines)
    if not out and not capacity_lines and not choice_lines and deadline.expired:
        return ["not explained: the time limit ran out before the elastic re-solves did; raise --time-limit"]
    if not out:
        out.extend(
            capacity_lines
            or choice_lines
            or ["no relaxation of power, space, supply or budget makes it feasible"]
        )
    return out + lever_lines(catalog, scenario_id, solver, deadline)
