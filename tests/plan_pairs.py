"""Plans for the bom and diff tests: solved from tiny catalogs (trnplan.testkit.builders), plus synthetic
plans built from plan-file dicts."""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from trnplan.numbers import ECONOMICS_DIGITS, canon
from trnplan.plan import Plan, SolverInfo, plan_from_dict, plan_scenario
from trnplan.testkit.builders import base_specs, catalog_from_dict

FIXED_SOLVER = {"name": "HiGHS", "version": "1.x", "status": "optimal", "mip_gap": 0}


def head_specs() -> dict[str, dict[str, Any]]:
    """base_specs() with a dearer chip, priced liquid cooling, a second small air-only site b, 96 chips,
    and real money terms (3 years at 8%, 2% maintenance).

    Optimum (unique; the runner-up is $235 dearer): at a, 1 air8 unit and 3 liq16 units; at b (50 kW,
    so 5 air racks of 10 kW) 5 air8 units. Against the base plan (4 liq16 units at a): two deployments
    added, one changed, site b new.
    """
    h = base_specs()
    h["chips"]["x"]["unit_usd"] = 12000
    h["cooling"]["liquid"]["capex_usd_per_kw"] = 100
    h["sites"]["b"] = {
        "it_power_mw": 0.05,
        "rack_positions": 10,
        "cooling": ["air"],
        "electricity_usd_per_kwh": 0.05,
        "colocation_usd_per_kw_month": 50,
    }
    s = h["scenarios"]["s"]
    s.update(
        sites=["a", "b"], demand={"chips": 96}, horizon_years=3, cost_of_capital=0.08, maintenance_rate=0.02
    )
    return h


@cache
def solved(which: str) -> Plan:
    specs = {"base": base_specs, "head": head_specs}[which]()
    return plan_scenario(catalog_from_dict(specs), "s")


def pinned(plan: Plan, digest: str) -> Plan:
    """The plan with a fixed solver and digest, so golden output does not move with highspy's version."""
    solver = SolverInfo.model_validate(FIXED_SOLVER)
    return plan.model_copy(update={"solver": solver, "inputs_digest": digest})


def golden_pair() -> tuple[Plan, Plan]:
    return pinned(solved("base"), "sha256:" + "a" * 64), pinned(solved("head"), "sha256:" + "b" * 64)


def synthetic_plan(
    scenario: str,
    deployments: dict[tuple[str, str], int],
    bom: dict[tuple[str, str, str], tuple[int, int]],
    energy_cents: int,
    colocation_cents: int,
    horizon_years: int,
    capex_factor: float,
    scale_out: dict[str, str] | None = None,
) -> Plan:
    """A structurally valid plan that adds up (it passes the reader's self_check): deployments
    {(site, "form/cooling/switch"): units}; bom {(site, category, item): (quantity, unit cents)}; TCO =
    capex x capex_factor + horizon x (energy + colocation), like the cost model's (capex_factor = horizon x
    (CRF + maintenance_rate), so 1 <= capex_factor <= 1 + horizon: no cost of capital, the rest maintenance).

    Each site's capex is its BOM lines' (carried by its fabric), its power that of its deployments; the
    energy and colocation are the first site's (none without a site)."""
    maintenance = (capex_factor - 1) / horizon_years
    site_ids = sorted({site for site, _ in deployments} | {site for site, _, _ in bom})
    if not site_ids:
        energy_cents = colocation_cents = 0
    sites: dict[str, dict[str, Any]] = {}
    for site in site_ids:
        site_cents = sum(q * u for (s, _, _), (q, u) in bom.items() if s == site)
        mine = {k: u for (s, k), u in deployments.items() if s == site}
        first = site == site_ids[0]
        energy, colocation = (energy_cents / 100, colocation_cents / 100) if first else (0, 0)
        sites[site] = {
            "cooling_used": sorted({key.split("/")[1] for key in mine}),
            "scale_out": {"switch": (scale_out or {}).get(site, "sw"), "capex_usd": site_cents / 100},
            "deployments": [],
            "racks": sum(mine.values()),
            "it_power_kw": sum(u * 10.5 for u in mine.values()),
            "facility_power_kw": sum(u * 12.6 for u in mine.values()),
            "capex_usd": site_cents / 100,
            "energy_usd_per_year": energy,
            "colocation_usd_per_year": colocation,
            "opex_usd_per_year": round(energy + colocation + site_cents / 100 * maintenance, 2),
        }
        for key, units in sorted(mine.items()):
            form, cooling, switch = key.split("/")
            sites[site]["deployments"].append(
                {
                    "form": form,
                    "cooling": cooling,
                    "scale_up_switch": switch,
                    "units": units,
                    "racks": units,
                    "chips": units * 8,
                    "fp8_pflops": units * 12,
                    "it_power_kw": units * 10.5,
                }
            )
    lines = []
    for (site, category, item), (qty, unit_cents) in sorted(bom.items()):
        lines.append(
            {
                "site": site,
                "category": category,
                "item": item,
                "quantity": qty,
                "unit_usd": unit_cents / 100,
                "extended_usd": qty * unit_cents / 100,
            }
        )
    capex_cents = sum(qty * unit for qty, unit in bom.values())
    chips = sum(u * 8 for u in deployments.values())
    tco_cents = round(capex_cents * capex_factor) + horizon_years * (energy_cents + colocation_cents)
    totals = {
        "chips": chips,
        "units": sum(deployments.values()),
        "racks": sum(deployments.values()),
        "fp8_pflops": chips * 1.5,
        "it_power_kw": sum(u * 10.5 for u in deployments.values()),
        "facility_power_kw": sum(u * 12.6 for u in deployments.values()),
        "capex_usd": capex_cents / 100,
        "energy_usd_per_year": energy_cents / 100,
        "colocation_usd_per_year": colocation_cents / 100,
        "opex_usd_per_year": (energy_cents + colocation_cents) / 100,
        "tco_usd": tco_cents / 100,
        "usd_per_pflop_hour": round(tco_cents / 100 / (chips * 1.5 * 8760 * horizon_years), 6)
        if chips
        else 0,
        "usd_per_chip_hour": round(tco_cents / 100 / (chips * 8760 * horizon_years), 6) if chips else 0,
    }
    data = {
        "format": "trnplan-plan/1",
        "scenario": scenario,
        "inputs_digest": "sha256:" + "0" * 64,
        "solver": dict(FIXED_SOLVER),
        "objective": {"kind": "min_tco", "value": tco_cents / 100, "unit": "USD"},
        "totals": totals,
        "sites": sites,
        "bom": lines,
    }
    # full precision, as plan files keep economics: capex x tco_per_capex_usd must give the TCO to the dollar
    economics = {
        "horizon_years": horizon_years,
        "cost_of_capital": 0,
        "crf": 1 / horizon_years,
        "maintenance_rate": maintenance,
        "utilization": 1,
        "tco_per_capex_usd": horizon_years * (1 / horizon_years + maintenance),
    }
    return plan_from_dict({**canon(data), "economics": canon(economics, ECONOMICS_DIGITS)})


def git(repo: Path, *args: str) -> str:
    """Run git in a test repository with a throwaway identity; its stdout."""
    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
