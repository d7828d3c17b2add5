"""Small catalogs built in code, for hand-worked fixtures and generated instances."""

from __future__ import annotations

import copy
from typing import Any

from trnplan.catalog import KINDS, MODELS, Catalog, catalog_entity


def catalog_from_dict(data: dict[str, dict[str, Any]]) -> Catalog:
    """Validate each entity with its model (no files, no cross-reference checks)."""
    kinds: dict[str, Any] = {
        kind: {
            k: catalog_entity(kind, MODELS[kind].model_validate(v))
            for k, v in sorted(data.get(kind, {}).items())
        }
        for kind in KINDS
    }
    return Catalog(**kinds)


def base_specs() -> dict[str, dict[str, Any]]:
    """A tiny two-form world with round numbers, so optima can be worked out by hand.

    chip x: 1000 W, 1000 TFLOPS FP8, 100 Gb/s scale-out, $10,000.
    form air8: 8 chips/rack, 1 rack/unit, air only, overhead 2 kW -> 10 kW/rack; kit $1,000.
    form liq16: 16 chips/rack, 1 rack/unit, liquid only, overhead 2 kW -> 18 kW/rack (+ switch); kit $1,000.
    scale-out sw: radix 64 at 100 Gb/s, $1,000 per switch, 0 W, optics free: one switch up to 64 chips.
    """
    return copy.deepcopy(
        {
            "chips": {
                "x": {
                    "name": "X",
                    "vendor": "T",
                    "tdp_w": 1000,
                    "dense_tflops": {"fp8": 1000},
                    "hbm": {
                        "generation": "HBM3E",
                        "stacks": 4,
                        "stack_gb": 24,
                        "pin_gbps": 8.0,
                        "bus_bits": 1024,
                    },
                    "scale_up": {"pcie_gen": 6, "lanes": 64},
                    "scale_out_gbps": 100,
                    "unit_usd": 10000,
                },
            },
            "forms": {
                "air8": {
                    "chip": "x",
                    "topology": "torus",
                    "chips_per_rack": 8,
                    "racks_per_unit": 1,
                    "domain_chips": 8,
                    "cooling": ["air"],
                    "rack_overhead_kw": 2,
                    "rack_bom": [{"item": "kit", "qty": 1, "unit_usd": 1000}],
                    "endpoint_optics_per_chip": 0,
                },
                "liq16": {
                    "chip": "x",
                    "topology": "switched",
                    "chips_per_rack": 16,
                    "racks_per_unit": 1,
                    "domain_chips": 16,
                    "cooling": ["liquid"],
                    "rack_overhead_kw": 2,
                    "rack_bom": [{"item": "kit", "qty": 1, "unit_usd": 1000}],
                    "scale_up": [{"switch": "up", "per_rack": 1}],
                    "endpoint_optics_per_chip": 0,
                },
            },
            "switches": {
                "up": {
                    "role": "scale_up",
                    "protocol": "pcie6",
                    "lanes": 160,
                    "ports": 20,
                    "power_w": 0,
                    "unit_usd": 0,
                    "available_from": "2025-01",
                },
                "sw": {
                    "role": "scale_out",
                    "protocol": "ethernet",
                    "bandwidth_gbps": 6400,
                    "port_gbps": 100,
                    "rack_units": 1,
                    "power_w": 0,
                    "unit_usd": 1000,
                    "optic_usd": 0,
                    "optic_w": 0,
                    "available_from": "2020-01",
                },
            },
            "cooling": {
                "air": {"max_rack_kw": 40, "pue": 1.5, "capex_usd_per_kw": 0},
                "liquid": {"max_rack_kw": 100, "pue": 1.1, "capex_usd_per_kw": 0},
            },
            "sites": {
                "a": {
                    "it_power_mw": 1,
                    "rack_positions": 100,
                    "cooling": ["air", "liquid"],
                    "electricity_usd_per_kwh": 0.1,
                    "colocation_usd_per_kw_month": 100,
                },
            },
            "scenarios": {
                "s": {
                    "sites": ["a"],
                    "demand": {"chips": 64},
                    "horizon_years": 1,
                    "cost_of_capital": 0.0,
                    "utilization": 1.0,
                    "maintenance_rate": 0.0,
                },
            },
        }
    )
