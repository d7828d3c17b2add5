"""Where the TCO went: each plan's TCO in cents by category (BOM categories, then energy and colocation),
summing exactly to its TCO, and the change between two plans category by category.

Over one period (a plan without periods): TCO = capex x (CRF + maintenance) x horizon + horizon x (energy
+ colocation) per year. Over many, each purchase carries capex x (CRF + maintenance) for the window left
when it is bought, and each period its energy and colocation for its years. The capex-driven part is what
the TCO leaves after energy and colocation, split over BOM categories in proportion to their weights.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

from trnplan.costs.rates import OPEX_FIGURES
from trnplan.diff.model import OPEX_CATEGORIES, CategoryDelta
from trnplan.numbers import cents
from trnplan.plan.model import Plan

HOURS_PER_YEAR = 8760


def _horizon_years(plan: Plan) -> float | None:
    """The plan's horizon: economics.horizon_years, else recovered from $/chip-hour (older plans):
    years = TCO / (chips x usd_per_chip_hour x 8760), rounded."""
    if plan.economics is not None:
        return plan.economics.horizon_years
    t = plan.totals
    if t.tco_usd and t.chips and t.usd_per_chip_hour:
        years = round(t.tco_usd / (t.chips * t.usd_per_chip_hour * HOURS_PER_YEAR))
        return years if years >= 1 else None
    return None


def _split(total: int, weights: dict[str, int]) -> dict[str, int]:
    """Split integer `total` over keys in proportion to non-negative integer weights, exactly (largest
    remainder; ties by key), so the parts sum to `total`."""
    keys = sorted(weights)
    wsum = sum(weights[k] for k in keys)
    if wsum <= 0:
        keys = keys or ["capex"]
        share = {k: Fraction(total, len(keys)) for k in keys}
    else:
        share = {k: Fraction(total * weights[k], wsum) for k in keys}
    floor = {k: math.floor(share[k]) for k in keys}
    left = total - sum(floor.values())
    for k in sorted(keys, key=lambda k: (-(share[k] - floor[k]), k))[:left]:
        floor[k] += 1
    return floor


def _opex_per_year_cents(plan: Plan) -> dict[str, int] | None:
    """Each opex category the plan states, in cents per year (`OPEX_FIGURES`: an optional one the plan
    leaves out is not among them); None when it lacks one every plan states."""
    out = {}
    for category, (name, always) in zip(OPEX_CATEGORIES, OPEX_FIGURES.items(), strict=True):
        value = getattr(plan.totals, name)
        if value is None:
            if always:
                return None
            continue
        out[category] = cents(value)
    return out


def tco_parts_cents(plan: Plan) -> dict[str, int] | None:
    """The plan's TCO in cents by category, summing exactly to cents(totals.tco_usd); None when the plan
    lacks the figures (totals.energy_usd_per_year, colocation_usd_per_year, a horizon).

    TCO = capex-driven part + the opex categories (energy + colocation) over the window; the capex-driven
    part is the remainder, split over BOM categories in proportion to their weights (`_capex_weights`).
    """
    tco = cents(plan.totals.tco_usd)
    weights = _capex_weights(plan)
    if tco == 0 and not plan.bom:
        return {c: 0 for c, always in zip(OPEX_CATEGORIES, OPEX_FIGURES.values(), strict=True) if always}
    per_year = _opex_per_year_cents(plan)
    years = _horizon_years(plan)
    if per_year is None or years is None:
        return None
    opex = _opex_cents(plan, years, per_year)
    capex_part = tco - sum(opex.values())
    return {**_split(capex_part, weights), **opex}


def _opex_cents(plan: Plan, years: float, per_year: dict[str, int]) -> dict[str, int]:
    """The opex categories over the window, in cents, from their cents per year in the plan's totals.

    Over one period: years x each. Over many (given the plan's economics): sum over periods of years x
    (opex per year - maintenance on the installed capex), split between the categories as the last
    period's are (the plan states their split only for it): each but the last rounded, the last the rest.
    """
    e = plan.economics
    if plan.periods is None or e is None:
        return {c: round(years * v) for c, v in per_year.items()}
    total = round(sum(
        p.years * (cents(p.totals.opex_usd_per_year) - cents(p.totals.capex_usd) * e.maintenance_rate)
        for p in plan.periods
    ))
    whole = sum(per_year.values())
    out: dict[str, int] = {}
    for c, v in list(per_year.items())[:-1]:
        out[c] = round(total * v / whole) if whole else 0
    last = list(per_year)[-1]
    out[last] = total - sum(out.values())
    return out


def _capex_weights(plan: Plan) -> dict[str, int]:
    """Each BOM category's capex weighed by the years of the window left when it is bought (a purchase is
    charged for the rest of the window): the weights of the categories' shares of the capex-driven TCO.

    Over one period everything is bought at the start, for the whole window: the weight is the capex in
    cents. Over many, cents x years left, in cent-microyears.
    """
    left = _years_left(plan)
    out: dict[str, int] = defaultdict(int)
    for line in plan.bom:
        usd = cents(line.extended_usd)
        years = None if left is None else left.get(line.period or "", 0.0)
        out[line.category] += usd if years is None else round(usd * years * 1_000_000)
    return out


def _years_left(plan: Plan) -> dict[str, float] | None:
    """Period start -> years of the window left from it; None for a plan of one period."""
    if plan.periods is None:
        return None
    left: dict[str, float] = {}
    remaining = 0.0
    for p in reversed(plan.periods):
        remaining += p.years
        left[p.start] = remaining
    return left


def _steady(base: Plan, head: Plan, old: dict[str, int], new: dict[str, int]) -> None:
    """Categories whose capex is the same in both plans, under the same money terms, keep the same TCO
    share: the largest-remainder split may put a cent more on one side, which would show as `+$0.01`.
    Both sides then get the lesser of the two, and what that takes or gives goes, on each side, to the
    category that changed most (so each side still sums to its TCO, and swapping the plans mirrors it)."""
    if base.economics is None or head.economics is None:
        return
    if base.economics.tco_per_capex_usd != head.economics.tco_per_capex_usd:
        return
    old_capex, new_capex = _capex_weights(base), _capex_weights(head)
    steady = [c for c in old if c in new and c not in OPEX_CATEGORIES and old_capex[c] == new_capex[c]]
    if not any(old[c] != new[c] for c in steady):
        return
    changed = [c for c in old if c in new and c not in steady]  # energy and colocation at least
    target = max(changed, key=lambda c: (abs(new[c] - old[c]), c))
    for c in steady:
        common = min(old[c], new[c])
        old[target] += old[c] - common
        new[target] += new[c] - common
        old[c] = new[c] = common


def attribution(base: Plan, head: Plan) -> list[CategoryDelta] | None:
    """The TCO change category by category; None when either plan lacks the figures to split its TCO."""
    old, new = tco_parts_cents(base), tco_parts_cents(head)
    if old is None or new is None:
        return None
    _steady(base, head, old, new)
    capex_cats = sorted((set(old) | set(new)) - set(OPEX_CATEGORIES))
    opex_cats = [c for c in OPEX_CATEGORIES if c in old or c in new]
    return [
        CategoryDelta(c, old.get(c, 0) / 100, new.get(c, 0) / 100, (new.get(c, 0) - old.get(c, 0)) / 100)
        for c in [*capex_cats, *opex_cats]
    ]
