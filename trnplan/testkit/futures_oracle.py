"""Brute force for a plan across futures: every plan of each future is enumerated (`oracle`'s machinery),
grouped by what it buys in the shared periods (and the scale-out switch of each site with compute by
then); the best shared purchases are those whose futures' best recourse has the least mean (or CVaR of)
TCO, among those every future can complete."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from trnplan.catalog import Catalog
from trnplan.costs.decisions import Decisions
from trnplan.numbers import risk_of
from trnplan.testkit.oracle import Candidate, SitePlan, _site_plans, _units, _value, _views


def _site_key(per_period: Sequence[Candidate], shared: int) -> tuple[object, ...]:
    """A site's purchases in the shared periods (units by option key), and its scale-out switch when it
    has compute by the last of them."""
    units = tuple(tuple(sorted(_units(per_period[p]).items())) for p in range(shared))
    last = per_period[shared - 1]
    return (units, last.scale_out if last.deployments else ())


def _key(combo: Sequence[SitePlan], shared: int) -> tuple[object, ...]:
    return tuple(_site_key(site_plan.per_period, shared) for site_plan in combo)


def best_across_futures(
    catalogs: Sequence[Catalog], scenario_id: str, shared: int, risk: float | None = None
) -> tuple[float, tuple[object, ...], list[float]] | None:
    """The least expected TCO (or CVaR at `risk`) over the futures, the shared purchases that reach it and
    each future's TCO then; None when no shared purchases let every future meet the scenario."""
    best_per_future = []
    for catalog in catalogs:
        scenario = catalog.scenarios[scenario_id]
        views = _views(catalog, scenario_id)
        per_site = [_site_plans(catalog, scenario_id, views, s, None) for s in sorted(scenario.sites)]
        best: dict[tuple[object, ...], float] = {}
        for combo in itertools.product(*per_site):
            value = _value(scenario_id, scenario, views, combo)
            if value is not None:
                key = _key(combo, shared)
                best[key] = max(best.get(key, -math.inf), value)
        best_per_future.append(best)
    common = set.intersection(*(set(b) for b in best_per_future))
    if not common:
        return None
    scored = sorted((risk_of([-b[k] for b in best_per_future], risk), repr(k), k) for k in common)
    value, _, key = scored[0]
    return value, key, [-b[key] for b in best_per_future]


def shared_key_of(decisions: Decisions, sites: Sequence[str], shared: int) -> tuple[object, ...]:
    """The same key for a plan's decisions over its periods."""
    out = []
    for site in sorted(sites):
        units = []
        for p in range(shared):
            made = decisions.periods[p].deployments
            units.append(tuple(sorted(((d.form, d.cooling, d.scale_up_switch), d.units)
                                      for d in made if d.site == site)))
        last = decisions.periods[shared - 1]
        has = any(d.site == site for d in last.deployments)
        out.append((tuple(units), tuple((s, o) for s, o in last.scale_out if s == site) if has else ()))
    return tuple(out)
