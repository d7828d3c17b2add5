"""What the performance model reads of a form and a scale-up option: peaks, HBM, bandwidths per chip, the
domain's shape and latencies, and failures."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trnplan.catalog import Catalog, Chip, Form
from trnplan.perf.constants import (
    COLLECTIVE_EFFICIENCY,
    DEFAULT_MATRIX_SHARE,
    DEFAULT_MTBF_HOURS,
    LINK_LATENCY_S,
    MATRIX_SHARE,
)

NO_SWITCH = "none"


@dataclass(frozen=True)
class Machine:
    """One form with one scale-up option, as the model sees it; bandwidths in bytes/s per chip and
    direction, already at COLLECTIVE_EFFICIENCY."""

    chip: str
    peak_flops: float  # dense, at the job's precision
    fp8_flops: float
    matrix_share: float
    hbm_bytes: float
    hbm_bytes_s: float
    domain_chips: int
    topology: str
    torus_dims: tuple[int, ...]
    hops: int  # switch crossings from chip to chip inside the domain
    hop_latency_s: float  # one step of a collective inside the domain
    scale_up_bytes_s: float
    scale_out_bytes_s: float
    mtbf_hours: float

    def allreduce_bytes_s(self, group: int) -> float:
        """Per-chip rate of a ring collective over `group` chips in the domain: a switched domain gives
        every chip its whole link; a torus only the links along the dimensions the group spans."""
        if self.topology != "torus" or group <= 1:
            return self.scale_up_bytes_s
        used = sub_dims(self.torus_dims, group)
        return self.scale_up_bytes_s * len(used) / len(self.torus_dims)

    def alltoall_bytes_s(self, group: int) -> float:
        """Per-chip rate of an all-to-all over `group` chips in the domain; on a torus half the traffic
        crosses the group's bisection, 2 x chips / k links of a k-ring: rate x min(1, 4 / (k x dims))."""
        if self.topology != "torus" or group <= 1:
            return self.scale_up_bytes_s
        used = sub_dims(self.torus_dims, group)
        k = max(used)
        return self.allreduce_bytes_s(group) * min(1.0, 4 / (k * len(used)))


def torus_dims(chips: int) -> tuple[int, ...]:
    """A torus of `chips` as cubic as it factors: three dimensions from 27 chips on, else two."""
    ndims = 3 if chips >= 27 else 2
    dims = []
    left = chips
    for i in range(ndims, 0, -1):
        target = round(left ** (1 / i))
        d = next(x for x in range(max(target, 1), left + 1) if left % x == 0)
        dims.append(d)
        left //= d
    return tuple(sorted((d for d in dims if d > 1), reverse=True)) or (1,)


def sub_dims(dims: tuple[int, ...], group: int) -> tuple[int, ...]:
    """The dimensions a group of `group` chips spans, filled one dimension after another."""
    used = []
    left = group
    for d in dims:
        if left <= 1:
            break
        take = min(d, left)
        used.append(take)
        left = math.ceil(left / take)
    return tuple(used) or (1,)


def machine(
    catalog: Catalog, form_id: str, switch_id: str, precision: str, oversubscription: float = 1.0
) -> Machine:
    """The model's view of a form with a scale-up switch (`none` for a torus) for a job at `precision`."""
    form: Form = catalog.forms[form_id]
    chip: Chip = catalog.chips[form.chip]
    peak = chip.dense_tflops.get(precision, chip.dense_tflops.get("bf16", chip.fp8_tflops))
    switch = catalog.switches.get(switch_id) if switch_id != NO_SWITCH else None
    if form.topology == "torus":
        dims = tuple(form.torus_dims) if form.torus_dims else torus_dims(form.domain_chips)
        hops, hop_latency = 1, LINK_LATENCY_S
    else:
        dims = (form.domain_chips,)
        hops = 2 * form.scale_up_levels - 1
        switch_s = (switch.latency_ns or 0.0) * 1e-9 if switch is not None else 0.0
        hop_latency = LINK_LATENCY_S + hops * switch_s
    return Machine(
        chip=form.chip,
        peak_flops=peak * 1e12,
        fp8_flops=chip.fp8_tflops * 1e12,
        matrix_share=MATRIX_SHARE.get(form.chip, DEFAULT_MATRIX_SHARE),
        hbm_bytes=chip.hbm_capacity_gb * 1e9,
        hbm_bytes_s=chip.hbm_bandwidth_tbps * 1e12,
        domain_chips=form.domain_chips,
        topology=form.topology,
        torus_dims=dims,
        hops=hops,
        hop_latency_s=hop_latency,
        scale_up_bytes_s=chip.scale_up_tbps * 1e12 * COLLECTIVE_EFFICIENCY,
        scale_out_bytes_s=chip.scale_out_gbps / 8 * 1e9 * COLLECTIVE_EFFICIENCY / oversubscription,
        mtbf_hours=chip.mtbf_hours or DEFAULT_MTBF_HOURS,
    )

