"""The digest of the resolved specs a scenario can use (`inputs_digest`, in every plan): the same specs give
the same digest, and an extension a spec leaves out digests as it did before the extension existed."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from trnplan.catalog.base import PROVENANCE, Extension, Spec

if TYPE_CHECKING:
    from trnplan.catalog import Catalog

DIGEST_DEFAULTS: dict[str, Any] = {
    "endpoint_links": "optics",
    "copper_usd": 0.0,
    "copper_w": 0.0,
    "plant_usd_per_kw": 0.0,
    "ownership": "leased",
    "colocation_usd_per_kw_month": None,
    "build_usd_per_mw": 0.0,
    "oversubscription": 1.0,
    "rack_usd": 0.0,
    "workload": None,
    "periods": None,
    "demand_by_month": {},
    "schedules": {},
    "life_years": None,
    "facility_life_years": None,
    "redundancy": None,
    "cooling_capacity_mw": {},
    "liquid_premium_usd_per_kw_month": 0.0,
}
"""Fields of the second version (ownership, plant, copper, oversubscription, network rack kits, workloads,
periods and schedules) and of the third's facility economics (lives, redundancy, cooling capacity, the liquid
premium; `colocation` read as `leased`, an owned site's rent left out) whose
defaults keep the first version's model: at their default they digest as before they existed. A field
added since says so where it is declared (`catalog.base.EXTENSION`, `extension_defaults`)."""


def extension_defaults(entity: Spec) -> dict[str, Any]:
    """The entity's fields marked EXTENSION, with their defaults (in JSON form, as `model_dump` gives)."""
    return {
        name: info.default
        for name, info in type(entity).model_fields.items()
        if any(isinstance(m, Extension) for m in info.metadata)
    }


def inputs_digest(catalog: Catalog, scenario_id: str) -> str:
    """sha256 of the resolved specs a scenario can use: it, its sites, every chip, form, switch, cooling."""
    scenario = catalog.scenarios[scenario_id]
    provenance = set(PROVENANCE)  # citations and ranges change no figure, so they change no digest

    def dump(entity: Spec) -> dict[str, Any]:
        data = entity.model_dump(mode="json", exclude=provenance)
        demand = data.get("demand")
        if isinstance(demand, dict):
            for key in ("at_most", "effective_fp8_pflops"):
                if demand.get(key) is None:
                    demand.pop(key, None)  # an extension left out digests as it did before it existed
        for part in (data, data.get("fabric")):
            for key, default in DIGEST_DEFAULTS.items():
                if isinstance(part, dict) and key in part and part[key] == default:
                    part.pop(key)
        for key, default in extension_defaults(entity).items():
            if key in data and data[key] == default:
                data.pop(key)
        return data

    doc = {
        "scenario": {scenario_id: dump(scenario)},
        "sites": {s: dump(catalog.sites[s]) for s in sorted(scenario.sites)},
        **{
            kind: {k: dump(v) for k, v in sorted(catalog.of(kind).items())}
            for kind in ("chips", "forms", "switches", "cooling")
        },
    }
    chains = sorted({r for s in scenario.sites if s in catalog.sites and (r := catalog.sites[s].redundancy)})
    if chains:
        doc["power_chains"] = {c: dump(catalog.power_chains[c]) for c in chains if c in catalog.power_chains}
    if scenario.workload is not None and scenario.workload in catalog.workloads:
        doc["workloads"] = {scenario.workload: dump(catalog.workloads[scenario.workload])}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
