"""Figures derived from spec entities: HBM capacity and bandwidth, scale-up bandwidth, unit and domain sizes,
and each scale-up option's rack IT kW (they must reproduce the published figures; see the README)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trnplan.catalog import Catalog, Chip, Form, Switch, Workload


def rack_it_kw(form: Form, chip: Chip, switch: Switch | None, per_rack: int) -> float:
    """Rack IT kW = chips_per_rack x tdp_w / 1000 + rack_overhead_kw + switches per rack x power_w / 1000."""
    switch_kw = per_rack * switch.power_w / 1000 if switch is not None else 0.0
    return form.chips_per_rack * chip.tdp_w / 1000 + form.rack_overhead_kw + switch_kw


def form_derived(form: Form, catalog: Catalog) -> dict[str, Any]:
    """Derived figures of a form: unit and domain sizes, domain FP8 PFLOPs and HBM, rack IT kW per option."""
    chip = catalog.chips[form.chip]
    options: dict[str, float] = {}
    if form.scale_up:
        for opt in form.scale_up:
            options[opt.switch] = rack_it_kw(form, chip, catalog.switches.get(opt.switch), opt.per_rack)
    else:
        options["none"] = rack_it_kw(form, chip, None, 0)
    return {
        "unit_chips": form.unit_chips,
        "domain_chips": form.domain_chips,
        "domain_fp8_pflops": form.domain_chips * chip.fp8_tflops / 1000,
        "domain_hbm_tb": form.domain_chips * chip.hbm_capacity_gb / 1000,
        "domain_hbm_bandwidth_tbps": form.domain_chips * chip.hbm_bandwidth_tbps,
        "rack_it_kw": options,
    }


def chip_derived(chip: Chip) -> dict[str, float]:
    return {
        "hbm_capacity_gb": chip.hbm_capacity_gb,
        "hbm_bandwidth_tbps": chip.hbm_bandwidth_tbps,
        "scale_up_tbps": chip.scale_up_tbps,
    }


def workload_derived(workload: Workload, catalog: Catalog) -> dict[str, Any]:
    """The share of dense FP8 peak a workload delivers on each form of the catalog (its first matching
    rule's value; 1 where no rule matches)."""
    from trnplan.catalog import Scenario
    from trnplan.costs import form_efficiency

    workload_id = next(k for k, w in sorted(catalog.workloads.items()) if w is workload)
    probe = Scenario.model_construct(workload=workload_id)
    return {"efficiency_by_form": {f: form_efficiency(catalog, probe, f) for f in sorted(catalog.forms)}}


DERIVED: dict[str, Callable[[Any, Catalog], dict[str, Any]]] = {
    "chips": lambda chip, _catalog: chip_derived(chip),
    "forms": form_derived,
    "workloads": workload_derived,
}
