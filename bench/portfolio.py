"""A deterministic generator of synthetic site portfolios over the shipped catalog.

`portfolio_specs(n_sites, seed)` returns spec data (the same shape as YAML files) with the shipped
chips, forms, switches and cooling, plus N sites with varied power, grid caps, cooling, density
limits and prices, and one min-TCO scenario whose FP8 demand needs most of the sites.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
STATES = [  # (name, industrial USD/kWh), EIA 2023 state averages as in the shipped sites
    ("va", 0.0892), ("tx", 0.0660), ("in", 0.0824), ("or", 0.0752), ("oh", 0.0703), ("ga", 0.0688), ("wa", 0.0635),
]


def shipped_catalog(spec_dir: Path | None = None) -> dict[str, Any]:
    """chips, forms, switches and cooling from the shipped specs (sites and scenarios are generated)."""
    data: dict[str, Any] = {"chips": {}, "forms": {}, "switches": {}, "cooling": {}}
    for path in sorted((spec_dir or REPO / "specs").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for kind in data:
            data[kind].update(doc.get(kind, {}))
    return data


def portfolio_specs(n_sites: int, seed: int = 0, chips: list[str] | None = None) -> dict[str, Any]:
    rng = random.Random(seed * 1_000_003 + n_sites)
    data = copy.deepcopy(shipped_catalog())
    coolings = sorted(data["cooling"])
    sites: dict[str, Any] = {}
    total_mw = 0.0
    for i in range(n_sites):
        state, price = STATES[rng.randrange(len(STATES))]
        it_mw = rng.choice([5, 10, 20, 30, 40, 60, 80, 120])
        kind = rng.random()
        if kind < 0.25:
            cooling = ["air"]
        elif kind < 0.5:
            cooling = [c for c in coolings if c != "rear-door"] if "rear-door" in coolings else coolings
        else:
            cooling = coolings
        site: dict[str, Any] = {
            "name": f"Synthetic site {i:03d}",
            "it_power_mw": it_mw,
            "rack_positions": int(it_mw * rng.choice([8, 12, 16, 25])),
            "cooling": sorted(cooling),
            "electricity_usd_per_kwh": round(price * rng.uniform(0.85, 1.25), 4),
            "colocation_usd_per_kw_month": round(rng.uniform(120, 220), 2),
            "sources": ["synthetic"],
        }
        if rng.random() < 0.4:
            site["grid_power_mw"] = round(it_mw * rng.uniform(1.12, 1.35), 2)
        if "liquid" in cooling and rng.random() < 0.5:
            site["cooling_fixed_usd"] = {"liquid": rng.choice([2_000_000, 8_000_000, 20_000_000])}
        if rng.random() < 0.3:
            site["max_rack_kw"] = rng.choice([50, 80, 150])
        sites[f"site-{i:03d}"] = site
        total_mw += it_mw
    data["sites"] = sites
    # Demand sized to need most of the portfolio: ~70% of its power at ~1.6 kW per PFLOP-ish chip mix.
    fp8_pflops = round(total_mw * 1000 * 0.7 / 1.6 * 2.5 / 1.0, -1)
    scenario: dict[str, Any] = {
        "sites": sorted(sites),
        "demand": {"fp8_pflops": fp8_pflops},
        "objective": "min_tco",
        "as_of": "2026-12",
        "horizon_years": 5,
        "cost_of_capital": 0.08,
        "utilization": 0.8,
        "maintenance_rate": 0.03,
    }
    if chips:
        scenario["chips"] = chips
    data["scenarios"] = {f"portfolio-{n_sites}": scenario}
    return data


def write_portfolio(n_sites: int, out_dir: Path, seed: int = 0, chips: list[str] | None = None) -> str:
    """Write the portfolio as one spec file in out_dir; return the scenario id."""
    data = portfolio_specs(n_sites, seed, chips)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "portfolio.yaml").write_text(yaml.safe_dump(data, sort_keys=True))
    return f"portfolio-{n_sites}"
