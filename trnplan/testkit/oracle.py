"""Brute force: enumerate every plan of a small instance through the cost model and keep the best.

Each site's candidates (unit vectors over its allowed options, times its scale-out switch) are
evaluated with `costs.evaluate`; sites are then combined. Capex is a sum of per-site BOM lines in
whole cents and TCO is linear in capex, energy and colocation, so totals add up over sites; the
winning combination is evaluated once more as a whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from trnplan.catalog import Catalog, Scenario
from trnplan.costs import Deployment, evaluate, perf_of, scale_out_switches, site_options
from trnplan.plan.rows import constraint_rows


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


def site_candidates(catalog: Catalog, scenario_id: str, site_id: str) -> list[Candidate]:
    """Every plan of one site that keeps within the site's own limits, the empty one first."""
    scenario = catalog.scenarios[scenario_id]
    site = catalog.sites[site_id]
    options = site_options(catalog, scenario, site_id)
    racks = [o.racks for o in options]
    bounds = [site.rack_positions // r for r in racks]  # positions alone; every other limit is checked below
    switches = scale_out_switches(catalog, scenario)
    out = [EMPTY]
    for vector in _vectors(bounds, racks, site.rack_positions):
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


def _within_limits(scenario: Scenario, total: Candidate) -> bool:
    """Supply caps and budgets (the per-site limits were checked when the site's candidates were made)."""
    used = dict(total.supply)
    if any(used.get(key, 0) > cap for key, cap in scenario.supply.items()):
        return False
    budget = scenario.budget
    if budget.capex_usd is not None and total.capex_usd > budget.capex_usd * (1 + 1e-9):
        return False
    return budget.tco_usd is None or total.tco_usd <= budget.tco_usd * (1 + 1e-9)


def _score(objective: str, total: Candidate) -> float:
    """Larger is better: -TCO, effective PFLOPs, or effective PFLOPs per USD of TCO (effective = peak
    without a workload)."""
    if objective == "min_tco":
        return -total.tco_usd
    if objective == "max_perf":
        return total.effective_fp8_pflops
    return total.effective_fp8_pflops / total.tco_usd


def best_plan(catalog: Catalog, scenario_id: str) -> tuple[float, Candidate] | None:
    """The optimal objective value and a plan achieving it, or None when no plan is feasible."""
    scenario = catalog.scenarios[scenario_id]
    per_site = [site_candidates(catalog, scenario_id, s) for s in sorted(scenario.sites)]
    best: tuple[float, Candidate] | None = None
    for combo in itertools.product(*per_site):
        total = _add_up(combo)
        if total.chips == 0 or not _meets_demand(scenario, total) or not _within_limits(scenario, total):
            continue
        value = _score(scenario.objective, total)
        if best is None or value > best[0]:
            deployments = tuple(d for c in combo for d in c.deployments)
            scale_out = tuple(s for c in combo for s in c.scale_out)
            best = (value, replace(total, deployments=deployments, scale_out=scale_out))
    if best is None:
        return None
    cand = best[1]
    t = evaluate(catalog, scenario, cand.deployments, dict(cand.scale_out)).totals
    exact = {
        "min_tco": t.tco_usd,
        "max_perf": perf_of(t),
        "max_perf_per_tco": perf_of(t) / t.tco_usd * 1e6,
    }
    return exact[scenario.objective], cand
