"""Which entities a scenario's plan can read: the inputs a sweep draws and a tornado bars. An input of
an entity no allowed option, site or switch of the scenario reads cannot move its plan, so it is left out
(and a tornado lists it as unused)."""

from __future__ import annotations

import dataclasses
from typing import Any

from trnplan.catalog import KINDS, Catalog
from trnplan.costs import all_options, option_problems, scale_out_switches


def usable_ids(catalog: Catalog, scenario_id: str) -> dict[str, set[str]]:
    """Ids per kind a scenario's plan can depend on (kinds not listed: all of them): the scenario, its
    sites and workload; the forms, chips, coolings and scale-up switches of the options some site of
    the scenario may use; the scale-out switches it may use; the fabric's cooling; the power chains its
    sites name. A month a range draws (`available_from`) is read at its earliest end: a switch that may
    ship in time in some draw can move the plan."""
    catalog = _earliest(catalog)
    scenario = catalog.scenarios[scenario_id]
    allowed = [
        (f, q, u)
        for f, q, u in all_options(catalog)
        if any(not option_problems(catalog, scenario, s, f, q, u) for s in scenario.sites)
    ]
    forms = {f for f, _, _ in allowed}
    switches = {u for _, _, u in allowed} | set(scale_out_switches(catalog, scenario))
    workload = scenario.workload
    return {
        "scenarios": {scenario_id},
        "sites": set(scenario.sites),
        "chips": {catalog.forms[f].chip for f in forms},
        "forms": forms,
        "switches": switches & set(catalog.switches),
        "cooling": {q for _, q, _ in allowed} | {scenario.fabric.cooling},
        "workloads": {workload} if workload else set(),
        "power_chains": {
            chain for s in scenario.sites if s in catalog.sites and (chain := catalog.sites[s].redundancy)
        },
    }


def _earliest(catalog: Catalog) -> Catalog:
    """The catalog with every month range's field at its low end (what can be bought soonest)."""
    changes: dict[str, Any] = {}
    for kind in KINDS:
        entities = catalog.of(kind)
        moved = {}
        for entity_id, entity in entities.items():
            months = {f: low for f, (low, _) in getattr(entity, "ranges", {}).items()
                      if "." not in f and isinstance(low, str)}
            if months:
                moved[entity_id] = entity.model_copy(update=months)
        if moved:
            changes[kind] = {**entities, **moved}
    return dataclasses.replace(catalog, **changes) if changes else catalog
