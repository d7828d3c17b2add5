"""Figures derived from spec entities, by kind, as `show` prints them: the catalog's own (chips, forms)
and a workload's efficiency on each form, which the cost model computes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trnplan.catalog import Catalog, Scenario, Workload
from trnplan.catalog.derived import chip_derived, form_derived
from trnplan.costs.options import form_efficiency, option_efficiency


def workload_derived(workload: Workload, catalog: Catalog) -> dict[str, Any]:
    """The share of dense FP8 peak a workload delivers on each form of the catalog (its first matching
    rule's value; 1 where no rule matches)."""
    workload_id = next(k for k, w in sorted(catalog.workloads.items()) if w is workload)
    probe = Scenario.model_construct(workload=workload_id)
    return {
        "efficiency_by_form": {
            f: form_efficiency(catalog, probe, f)
            for f in sorted(catalog.forms)
            if option_efficiency(catalog, probe, f).fits
        }
    }


DERIVED: dict[str, Callable[[Any, Catalog], dict[str, Any]]] = {
    "chips": lambda chip, _catalog: chip_derived(chip),
    "forms": form_derived,
    "workloads": workload_derived,
}
