"""A plan's deployments against themselves: a deployment's racks are its units x its form's racks per unit
and its chips its racks x chips per rack, whole numbers, the same in every deployment of the form (in the
plan's sites and in each period's), so an edited count is refused at its own line."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trnplan.errors import KeyPath
from trnplan.plan.mismatch import Mismatch, each, num, relation
from trnplan.plan.model import DeploymentRow, PeriodDeployment, PeriodSite, Plan, SiteSection

_PER = (("units", "racks", "racks per unit"), ("racks", "chips", "chips per rack"))
"""A deployment's figures that are whole multiples of one another, by a number that is its form's."""


@dataclass(frozen=True)
class _Row:
    """One deployment's counts, and which of them the plan's sums agree with."""

    at: KeyPath
    form: str
    counts: dict[str, int]
    summed: frozenset[str]


def _rows(plan: Plan) -> list[_Row]:
    """Every deployment of the plan (its sites and each period's); a count is `summed` when the sum it
    enters agrees (units and chips: the totals; racks: the site's)."""
    rows = []

    def add(at: KeyPath, sites: Mapping[str, SiteSection | PeriodSite], units: int, chips: int) -> None:
        deps = [d for s in sites.values() for d in s.deployments]
        agree = {"units": units == sum(d.units for d in deps), "chips": chips == sum(d.chips for d in deps)}
        for site_id, s in sorted(sites.items()):
            racks = s.racks == sum(d.racks for d in s.deployments)
            mine: Sequence[DeploymentRow | PeriodDeployment] = s.deployments
            for j, d in enumerate(mine):
                summed = frozenset(k for k, ok in {**agree, "racks": racks}.items() if ok)
                counts = {"units": d.units, "racks": d.racks, "chips": d.chips}
                rows.append(_Row((*at, "sites", site_id, "deployments", j), d.form, counts, summed))

    add((), plan.sites, plan.totals.units, plan.totals.chips)
    for i, p in enumerate(plan.periods or []):
        add(("periods", i), p.sites, p.totals.units, p.totals.chips)
    return rows


def _usual(ratios: Counter[int]) -> int | None:
    """The ratio most deployments of a form have; None when none is more common than every other."""
    ranked = ratios.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _ratio(r: _Row, small: str, big: str) -> int | None:
    """The row's `big` per `small` when both are stated and it is whole; None otherwise."""
    a, b = r.counts[small], r.counts[big]
    return b // a if a > 0 and b > 0 and b % a == 0 else None


def _blame(r: _Row, small: str, big: str, per: str, usual: int | None, others: list[KeyPath]) -> Mismatch:
    """The mismatch of a row whose counts are no whole or usual multiple: at `big` when `small` agrees
    with its sum and `big` does not, else at `small`."""
    a, b = r.counts[small], r.counts[big]
    if small in r.summed and big not in r.summed:  # the small count agrees with its sum: blame big
        if usual is None:
            claim, result = f"is not its {small} x a whole number of {per}", f"{a:,} {small}"
        else:
            claim = f"is not its {small} x {usual}, the {per} of {r.form} in its other deployments"
            result = f"{a:,} x {usual} = {a * usual:,}"
        return relation((*r.at, big), f"{b:,}", claim, result, [(*r.at, small), *each(others, big)])
    if usual is None:
        claim, result = f"does not divide its {big} into a whole number of {per}", f"{b:,} {big}"
    else:
        claim = f"is not its {big} / {usual}, the {per} of {r.form} in its other deployments"
        result = f"{b:,} / {usual} = {num(b / usual)}"
    return relation((*r.at, small), f"{a:,}", claim, result, [(*r.at, big), *each(others, small)])


def deployment_count_problems(plan: Plan) -> list[Mismatch]:
    """A deployment's racks are its units x its form's racks per unit and its chips its racks x chips per
    rack: whole numbers, the same in every deployment of the form. The figure blamed is the one whose sum
    disagrees (an edited `units` shows here at its own line, not only in `totals.units`)."""
    rows = _rows(plan)
    problems: list[Mismatch] = []
    blamed: set[KeyPath] = set()
    for small, big, per in _PER:
        ratios: dict[str, Counter[int]] = defaultdict(Counter)
        for r in rows:
            whole = _ratio(r, small, big)
            if whole is not None:
                ratios[r.form][whole] += 1
        for r in rows:
            usual, whole = _usual(ratios[r.form]), _ratio(r, small, big)
            if r.counts[small] <= 0 or r.counts[big] <= 0:
                continue  # a count not stated (0) is for the sums to find
            if whole is not None and usual in (None, whole):
                continue
            others = [
                o.at
                for o in rows
                if usual is not None and o.form == r.form and o.at != r.at and _ratio(o, small, big) == usual
            ]
            mismatch = _blame(r, small, big, per, usual, others)
            if mismatch.path not in blamed:
                blamed.add(mismatch.path)
                problems.append(mismatch)
    return problems
