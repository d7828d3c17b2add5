"""Which entities a scenario's plan can read: the inputs a sweep draws and a tornado bars. An input of
an entity no allowed option, site or switch of the scenario reads cannot move its plan, so it is left out
(and a tornado lists it as unused)."""

from __future__ import annotations

from trnplan.catalog import Catalog
from trnplan.costs import all_options, option_problems, scale_out_switches


def usable_ids(catalog: Catalog, scenario_id: str) -> dict[str, set[str]]:
    """Ids per kind a scenario's plan can depend on (kinds not listed: all of them): the scenario, its
    sites and workload; the forms, chips, coolings and scale-up switches of the options some site of
    the scenario may use; the scale-out switches it may use; the fabric's cooling; the power chains its
    sites name."""
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
