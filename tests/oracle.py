"""Brute force: enumerate every plan of a small instance through the cost model and keep the best.

Each site's candidates (unit vectors over its allowed options, times its scale-out switch) are
evaluated with `costs.evaluate`; sites are then combined. Capex is a sum of per-site BOM lines in
whole cents and TCO is linear in capex, energy and colocation, so totals add up over sites; the
winning combination is evaluated once more as a whole.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from trnplan.catalog import Catalog
from trnplan.check import constraint_rows
from trnplan.costs import Deployment, evaluate, scale_out_switches, site_options


@dataclass(frozen=True)
class Candidate:
    deployments: tuple[Deployment, ...]
    scale_out: tuple[tuple[str, str], ...]
    chips: float
    fp8_pflops: float
    hbm_tb: float
    capex_usd: float
    tco_usd: float
    supply: tuple[tuple[str, int], ...]


EMPTY = Candidate((), (), 0, 0, 0, 0, 0, ())


def _vectors(bounds: list[int], racks: list[int], max_racks: int):
    """Unit vectors within per-option bounds whose compute racks fit in max_racks."""

    def rec(i: int, left: int):
        if i == len(bounds):
            yield ()
            return
        for n in range(0, min(bounds[i], left // racks[i]) + 1):
            for rest in rec(i + 1, left - n * racks[i]):
                yield (n, *rest)

    yield from rec(0, max_racks)


def site_candidates(catalog: Catalog, scenario_id: str, site_id: str) -> list[Candidate]:
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
                    t["chips"],
                    t["fp8_pflops"],
                    t["hbm_tb"],
                    t["capex_usd"],
                    t["tco_usd"],
                    tuple(sorted(ev.supply_used.items())),
                )
            )
    return out


def best_plan(catalog: Catalog, scenario_id: str) -> tuple[float, Candidate] | None:
    """The optimal objective value and a plan achieving it, or None when no plan is feasible."""
    scenario = catalog.scenarios[scenario_id]
    per_site = [site_candidates(catalog, scenario_id, s) for s in sorted(scenario.sites)]
    demand, budget = scenario.demand, scenario.budget
    best: tuple[float, Candidate] | None = None
    for combo in itertools.product(*per_site):
        chips = sum(c.chips for c in combo)
        if chips == 0:
            continue
        pflops = sum(c.fp8_pflops for c in combo)
        hbm = sum(c.hbm_tb for c in combo)
        if demand.chips is not None and chips < demand.chips:
            continue
        if demand.fp8_pflops is not None and pflops < demand.fp8_pflops * (1 - 1e-9):
            continue
        if demand.hbm_tb is not None and hbm < demand.hbm_tb * (1 - 1e-9):
            continue
        supply: dict[str, int] = {}
        for c in combo:
            for key, used in c.supply:
                supply[key] = supply.get(key, 0) + used
        if any(supply.get(key, 0) > cap for key, cap in scenario.supply.items()):
            continue
        capex = sum(c.capex_usd for c in combo)
        tco = sum(c.tco_usd for c in combo)
        if budget.capex_usd is not None and capex > budget.capex_usd * (1 + 1e-9):
            continue
        if budget.tco_usd is not None and tco > budget.tco_usd * (1 + 1e-9):
            continue
        if scenario.objective == "min_tco":
            value = -tco
        elif scenario.objective == "max_perf":
            value = pflops
        else:
            value = pflops / tco
        if best is None or value > best[0]:
            merged = Candidate(
                tuple(d for c in combo for d in c.deployments),
                tuple(s for c in combo for s in c.scale_out),
                chips,
                pflops,
                hbm,
                capex,
                tco,
                tuple(sorted(supply.items())),
            )
            best = (value, merged)
    if best is None:
        return None
    value, cand = best
    ev = evaluate(catalog, scenario, cand.deployments, dict(cand.scale_out))
    t = ev.totals
    exact = {
        "min_tco": t["tco_usd"],
        "max_perf": t["fp8_pflops"],
        "max_perf_per_tco": t["fp8_pflops"] / t["tco_usd"] * 1e6,
    }
    return exact[scenario.objective], cand
