"""Brute force: enumerate every plan of a small instance, of one period or many, through the cost model and
keep the best.

A site's candidates in a period are unit vectors over its allowed options times a scale-out switch, each
evaluated with `costs.evaluate` on that period's view of the catalog (its site figures, prices and what is
available at its start; a scenario without periods is one period, read at its `as_of`) and kept when they
keep within the site's own limits. A site's plans are the sequences of its candidates whose units never
fall, with one scale-out switch for the window (over one period, each candidate). Capex and TCO add up over
sites (TCO is linear in each site's purchases and per-period kW), so each site's plan is priced once, sites
are combined, and the winner is evaluated again as a whole with `evaluate_decisions`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import catalog_at, periods_of, scenario_at, single_view
from trnplan.costs import Deployment, evaluate, evaluate_decisions, perf_of, scale_out_switches, site_options
from trnplan.costs.decisions import Decisions
from trnplan.plan.rows import constraint_rows

T = TypeVar("T")


@dataclass(frozen=True)
class Candidate:
    """Decisions at one or more sites, with the figures that add up over sites."""

    deployments: tuple[Deployment, ...]
    scale_out: tuple[tuple[str, str], ...]
    chips: float
    fp8_pflops: float
    hbm_tb: float
    capex_usd: float
    tco_usd: float
    supply: tuple[tuple[str, int], ...]
    effective_fp8_pflops: float = 0.0  # the cost model's: peak x the workload's efficiency (peak without one)


class TooBig(Exception):
    """The instance has more to enumerate than `best_plan`'s caps allow (a site's unit vectors in a period or
    plans over the window, or the combinations over sites): raised before they are priced."""


def _capped(items: Iterator[T], limit: int | None, what: str) -> list[T]:
    out = list(itertools.islice(items, None if limit is None else limit + 1))
    if limit is not None and len(out) > limit:
        raise TooBig(f"more than {limit} {what}")
    return out


EMPTY = Candidate((), (), 0, 0, 0, 0, 0, ())


def _vectors(bounds: list[int], racks: list[int], max_racks: int) -> Iterator[tuple[int, ...]]:
    """Unit vectors within per-option bounds whose compute racks fit in max_racks."""

    def rec(i: int, left: int) -> Iterator[tuple[int, ...]]:
        if i == len(bounds):
            yield ()
            return
        for n in range(0, min(bounds[i], left // racks[i]) + 1):
            for rest in rec(i + 1, left - n * racks[i]):
                yield (n, *rest)

    yield from rec(0, max_racks)


def site_candidates(
    catalog: Catalog, scenario_id: str, site_id: str, limit: int | None = None
) -> list[Candidate]:
    """Every plan of one site that keeps within the site's own limits, the empty one first; `TooBig` when
    there are more than `limit` unit vectors to price."""
    scenario = catalog.scenarios[scenario_id]
    site = catalog.sites[site_id]
    options = site_options(catalog, scenario, site_id)
    racks = [o.racks for o in options]
    bounds = [site.rack_positions // r for r in racks]  # positions alone; every other limit is checked below
    switches = scale_out_switches(catalog, scenario)
    vectors = _capped(_vectors(bounds, racks, site.rack_positions), limit, f"{site_id}'s unit vectors")
    out = [EMPTY]
    for vector in vectors:
        if not any(vector):
            continue
        deployments = tuple(
            Deployment(site_id, o.form, o.cooling, o.scale_up_switch, n)
            for o, n in zip(options, vector, strict=True)
            if n
        )
        for switch in switches:
            ev = evaluate(catalog, scenario, deployments, {site_id: switch})
            rows = [r for r in constraint_rows(catalog, scenario, ev) if r.name.startswith(site_id + " ")]
            if any(r.violated for r in rows):
                continue
            t = ev.totals
            out.append(
                Candidate(
                    deployments,
                    ((site_id, switch),),
                    t.chips,
                    t.fp8_pflops,
                    t.figure("hbm_tb"),
                    t.capex_usd,
                    t.tco_usd,
                    tuple(sorted(ev.supply_used.items())),
                    perf_of(t),
                )
            )
    return out


def _add_up(combo: tuple[Candidate, ...]) -> Candidate:
    """One candidate per site, summed (capex and TCO add up over sites); decisions left out until needed."""
    supply: dict[str, int] = {}
    for c in combo:
        for key, used in c.supply:
            supply[key] = supply.get(key, 0) + used
    return Candidate(
        (),
        (),
        sum(c.chips for c in combo),
        sum(c.fp8_pflops for c in combo),
        sum(c.hbm_tb for c in combo),
        sum(c.capex_usd for c in combo),
        sum(c.tco_usd for c in combo),
        tuple(sorted(supply.items())),
        sum(c.effective_fp8_pflops for c in combo),
    )


def _meets_demand(scenario: Scenario, total: Candidate) -> bool:
    """Every demand given, and no more than `demand.at_most` of each."""
    demand = scenario.demand
    if demand.chips is not None and total.chips < demand.chips:
        return False
    if demand.fp8_pflops is not None and total.fp8_pflops < demand.fp8_pflops * (1 - 1e-9):
        return False
    if demand.hbm_tb is not None and total.hbm_tb < demand.hbm_tb * (1 - 1e-9):
        return False
    effective = demand.effective_fp8_pflops
    if effective is not None and total.effective_fp8_pflops < effective * (1 - 1e-9):
        return False
    for key in ("chips", "fp8_pflops", "hbm_tb"):
        cap = demand.cap(key)
        if cap is not None and getattr(total, key) > cap * (1 + 1e-9):
            return False
    return True


@dataclass(frozen=True)
class SitePlan:
    """One site's candidate in each period, with the figures that add up over sites: capex and TCO over the
    window, and performance (effective, or peak, PFLOPs; PFLOP-years over many periods)."""

    per_period: tuple[Candidate, ...]
    capex_usd: float
    tco_usd: float
    perf: float


def _views(catalog: Catalog, scenario_id: str) -> list[Catalog]:
    """The catalog as each period sees it; one view, at its `as_of`, for a scenario without periods."""
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is None:
        return [single_view(catalog, scenario_id)]
    return [catalog_at(catalog, scenario_id, p.start, scenario_at(scenario, p)) for p in periods_of(scenario)]


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


def _decisions(scenario: Scenario, per_period: list[tuple[Candidate, ...]]) -> Decisions:
    """One candidate per site in each period as the cost model reads it; periods only for a scenario with
    them."""
    periods = []
    for combo in per_period:
        deployments = tuple(sorted(d for c in combo for d in c.deployments))
        scale_out = tuple(sorted(s for c in combo for s in c.scale_out))
        periods.append(Decisions(deployments, scale_out))
    last = periods[-1]
    return Decisions(last.deployments, last.scale_out, tuple(periods) if scenario.periods is not None else ())


def _site_plans(
    catalog: Catalog, scenario_id: str, views: list[Catalog], site_id: str, limit: int | None
) -> list[SitePlan]:
    """Every plan of one site over the window, priced: over one period its candidate's figures, over many
    the cost model's for the sequence."""
    scenario = catalog.scenarios[scenario_id]
    per_period = [site_candidates(view, scenario_id, site_id, limit) for view in views]
    out = []
    for seq in _capped(_sequences(per_period), limit, f"plans of {site_id} over the window"):
        last = seq[-1]
        if not last.deployments:
            out.append(SitePlan(seq, 0.0, 0.0, 0.0))
        elif len(seq) == 1:
            out.append(SitePlan(seq, last.capex_usd, last.tco_usd, last.effective_fp8_pflops))
        else:
            t = evaluate_decisions(catalog, scenario_id, _decisions(scenario, [(c,) for c in seq])).totals
            out.append(SitePlan(seq, t.capex_usd, t.tco_usd, perf_of(t)))
    return out


def _within_limits(scenario: Scenario, installed: Candidate, capex_usd: float, tco_usd: float) -> bool:
    """Supply caps (on what is installed at the end) and budgets (the per-site limits were checked when the
    sites' candidates were made)."""
    used = dict(installed.supply)
    if any(used.get(key, 0) > cap for key, cap in scenario.supply.items()):
        return False
    budget = scenario.budget
    if budget.capex_usd is not None and capex_usd > budget.capex_usd * (1 + 1e-9):
        return False
    return budget.tco_usd is None or tco_usd <= budget.tco_usd * (1 + 1e-9)


def _value(
    scenario_id: str, scenario: Scenario, views: list[Catalog], combo: tuple[SitePlan, ...]
) -> float | None:
    """Larger is better: -TCO, performance, or performance per USD of TCO of one plan per site; None when it
    deploys nothing or breaks a period's demand, a supply cap or a budget."""
    installed = EMPTY
    for p, view in enumerate(views):
        installed = _add_up(tuple(s.per_period[p] for s in combo))
        at = view.scenarios[scenario_id]
        if (not at.demand.empty or p == len(views) - 1) and not _meets_demand(at, installed):
            return None
    capex = sum(s.capex_usd for s in combo)
    tco = sum(s.tco_usd for s in combo)
    if installed.chips == 0 or not _within_limits(scenario, installed, capex, tco):
        return None
    perf = sum(s.perf for s in combo)
    if scenario.objective == "min_tco":
        return -tco
    return perf if scenario.objective == "max_perf" else perf / tco


def best_plan(
    catalog: Catalog, scenario_id: str, *, max_priced: int | None = None, max_combined: int | None = None
) -> tuple[float, Decisions] | None:
    """The optimal objective value of a scenario, of one period or many, and a plan achieving it; None when
    no plan is feasible. `TooBig`, before the work, when a site has more than `max_priced` unit vectors in
    a period or plans over the window to price (a cost-model evaluation each), or the sites' plans more
    than `max_combined` combinations (a property test's draw can make a world too big to enumerate)."""
    scenario = catalog.scenarios[scenario_id]
    views = _views(catalog, scenario_id)
    per_site = [_site_plans(catalog, scenario_id, views, s, max_priced) for s in sorted(scenario.sites)]
    combined = math.prod(len(plans) for plans in per_site)
    if max_combined is not None and combined > max_combined:
        raise TooBig(f"{combined} combinations of the sites' plans, more than {max_combined}")
    best: tuple[float, tuple[SitePlan, ...]] | None = None
    for combo in itertools.product(*per_site):
        value = _value(scenario_id, scenario, views, combo)
        if value is not None and (best is None or value > best[0]):
            best = (value, combo)
    if best is None:
        return None
    winner = best[1]
    decisions = _decisions(scenario, [tuple(s.per_period[p] for s in winner) for p in range(len(views))])
    t = evaluate_decisions(catalog, scenario_id, decisions).totals
    exact = {"min_tco": t.tco_usd, "max_perf": perf_of(t), "max_perf_per_tco": perf_of(t) / t.tco_usd * 1e6}
    return exact[scenario.objective], decisions
