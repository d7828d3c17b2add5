"""Brute force for phased scenarios: enumerate every phased plan of a small instance through the cost model.

Per site, each period's candidates are the single-period oracle's (`site_candidates`) on that period's view
of the catalog (its site figures, prices and what is available at its start); a site's plans are the
sequences of them whose units never fall, with one scale-out switch for the window. Phased TCO is linear in
each site's purchases and per-period kW, so it adds up over sites: each site sequence is evaluated once
with `costs.phased.evaluate_phased`, sites are combined, and the winner is evaluated again as a whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from trnplan.catalog import Catalog
from trnplan.catalog.periods import catalog_at, periods_of, scenario_at
from trnplan.costs import evaluate_decisions as evaluate_phased
from trnplan.costs import perf_of
from trnplan.optimize.solution import Decisions
from trnplan.testkit.oracle import EMPTY, Candidate, _add_up, _meets_demand, site_candidates


@dataclass(frozen=True)
class SiteSequence:
    """One site's candidate in each period, with the figures that add up over sites."""

    per_period: tuple[Candidate, ...]
    capex_usd: float
    tco_usd: float
    perf_years: float  # effective (or peak) PFLOP-years


def _units(c: Candidate) -> dict[tuple[str, str, str], int]:
    return {(d.form, d.cooling, d.scale_up_switch): d.units for d in c.deployments}


def _grows(prev: Candidate, cur: Candidate) -> bool:
    """Nothing installed before is gone, and the scale-out switch stays the same."""
    if prev.deployments and cur.scale_out != prev.scale_out:
        return False
    now = _units(cur)
    return all(now.get(key, 0) >= n for key, n in _units(prev).items())


def _sequences(per_period: list[list[Candidate]]) -> Iterator[tuple[Candidate, ...]]:
    def rec(p: int, prev: Candidate) -> Iterator[tuple[Candidate, ...]]:
        if p == len(per_period):
            yield ()
            return
        for cur in per_period[p]:
            if _grows(prev, cur):
                for rest in rec(p + 1, cur):
                    yield (cur, *rest)

    yield from rec(0, EMPTY)


def _decisions(per_period: list[tuple[Candidate, ...]]) -> Decisions:
    periods = []
    for combo in per_period:
        deployments = tuple(sorted(d for c in combo for d in c.deployments))
        scale_out = tuple(sorted(s for c in combo for s in c.scale_out))
        periods.append(Decisions(deployments, scale_out))
    return Decisions(periods[-1].deployments, periods[-1].scale_out, tuple(periods))


def best_phased_plan(catalog: Catalog, scenario_id: str) -> tuple[float, Decisions] | None:
    """The optimal objective value of a phased scenario and a plan achieving it; None when none is
    feasible."""
    scenario = catalog.scenarios[scenario_id]
    periods = periods_of(scenario)
    views = [catalog_at(catalog, scenario_id, p.start, scenario_at(scenario, p)) for p in periods]
    per_site: list[list[SiteSequence]] = []
    for site_id in sorted(scenario.sites):
        per_period = [site_candidates(view, scenario_id, site_id) for view in views]
        sequences = []
        for seq in _sequences(per_period):
            if not seq[-1].deployments:
                sequences.append(SiteSequence(seq, 0.0, 0.0, 0.0))
                continue
            t = evaluate_phased(catalog, scenario_id, _decisions([(c,) for c in seq])).totals
            sequences.append(SiteSequence(seq, t.capex_usd, t.tco_usd, perf_of(t)))
        per_site.append(sequences)
    best: tuple[float, tuple[SiteSequence, ...]] | None = None
    for combo in itertools.product(*per_site):
        value = _feasible_value(catalog, scenario_id, views, combo)
        if value is not None and (best is None or value > best[0]):
            best = (value, combo)
    if best is None:
        return None
    decisions = _decisions([tuple(s.per_period[p] for s in best[1]) for p in range(len(periods))])
    t = evaluate_phased(catalog, scenario_id, decisions).totals
    exact = {"min_tco": t.tco_usd, "max_perf": perf_of(t), "max_perf_per_tco": perf_of(t) / t.tco_usd * 1e6}
    return exact[scenario.objective], decisions


def _feasible_value(
    catalog: Catalog, scenario_id: str, views: list[Catalog], combo: tuple[SiteSequence, ...]
) -> float | None:
    """-TCO, PFLOP-years or PFLOP-years per USD of a combination of site sequences; None when it breaks a
    period's demand, a supply cap or a budget."""
    scenario = catalog.scenarios[scenario_id]
    last = None
    for p, view in enumerate(views):
        total = _add_up(tuple(s.per_period[p] for s in combo))
        at = view.scenarios[scenario_id]
        if not at.demand.empty or p == len(views) - 1:
            if not _meets_demand(at, total):
                return None
        last = total
    assert last is not None
    if last.chips == 0:
        return None
    used = dict(last.supply)
    if any(used.get(key, 0) > cap for key, cap in scenario.supply.items()):
        return None
    capex = sum(s.capex_usd for s in combo)
    tco = sum(s.tco_usd for s in combo)
    budget = scenario.budget
    if budget.capex_usd is not None and capex > budget.capex_usd * (1 + 1e-9):
        return None
    if budget.tco_usd is not None and tco > budget.tco_usd * (1 + 1e-9):
        return None
    perf = sum(s.perf_years for s in combo)
    if scenario.objective == "min_tco":
        return -tco
    return perf if scenario.objective == "max_perf" else perf / tco
