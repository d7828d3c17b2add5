"""Figures derived from spec entities: HBM capacity and bandwidth, scale-up bandwidth, unit and domain sizes,
and each scale-up option's rack IT kW (they must reproduce the published figures; see the README)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trnplan.catalog import Catalog, Chip, Form, Switch


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
