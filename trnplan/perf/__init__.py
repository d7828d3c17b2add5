"""Delivered performance computed from a workload's job and the hardware (design.md, "Delivered performance:
efficiency computed from the job"): the best parallel layout on each form and scale-up option, its step
time by part, MFU, goodput from failures, and efficiency = MFU x (job-precision peak / FP8 peak) x goodput.

A table of named constants (`trnplan.perf.constants`) plus formulas (`train`, `serve`), as Calculon
(calculon-ai/calculon) is; `trnplan.perf.calibration` holds the published runs it is checked against."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from trnplan.catalog import Catalog, Job
from trnplan.perf.constants import CHECKPOINT_INTERVAL_HOURS, RESTART_HOURS
from trnplan.perf.machine import NO_SWITCH, Machine, machine
from trnplan.perf.serve import serve_layouts, serve_step
from trnplan.perf.train import Layout, Step, train_layouts, train_step

__all__ = [
    "Layout",
    "Machine",
    "Performance",
    "Step",
    "best_step",
    "goodput",
    "machine",
    "option_performance",
    "workload_performance",
]


@dataclass(frozen=True)
class Performance:
    """What a job gets on one form with one scale-up option."""

    form: str
    scale_up_switch: str
    step: Step
    mfu: float  # model FLOPs / (chips x job-precision peak x step time)
    goodput: float
    precision_ratio: float  # job-precision peak / FP8 peak
    fp8_tflops: float

    @property
    def layout(self) -> Layout:
        return self.step.layout

    @property
    def efficiency(self) -> float:
        """Share of dense FP8 peak delivered: MFU x precision ratio x goodput."""
        return self.mfu * self.precision_ratio * self.goodput

    @property
    def effective_pflops_per_chip(self) -> float:
        return self.fp8_tflops / 1000 * self.efficiency


def goodput(chips: int, mtbf_hours: float) -> float:
    """Share of wall-clock time that trains: chips / mtbf_hours interruptions an hour, each losing
    RESTART_HOURS and half a CHECKPOINT_INTERVAL_HOURS: 1 / (1 + rate x loss)."""
    rate = chips / mtbf_hours
    return 1 / (1 + rate * (RESTART_HOURS + CHECKPOINT_INTERVAL_HOURS / 2))


@lru_cache(maxsize=4096)
def best_step(job: Job, m: Machine) -> Step | None:
    """The layout with the shortest step (ties: the first searched) among those that fit; None if none."""
    best: Step | None = None
    if job.kind == "train":
        for lay in train_layouts(job, m):
            if lay.chips != job.job_chips:
                continue
            step = train_step(job, m, lay)
            if step is not None and (best is None or step.step_s < best.step_s):
                best = step
    else:
        for lay in serve_layouts(job, m):
            step = serve_step(job, m, lay)
            if step is None:
                continue
            # serving is judged by throughput per chip: tokens per second per replica chip
            if best is None or _serve_cost(step) < _serve_cost(best):
                best = step
    return best


def _serve_cost(step: Step) -> float:
    """Chip-seconds per unit of model FLOPs: lower is better."""
    lay = step.layout
    return step.step_s * max(lay.tp, lay.ep) * lay.pp / step.model_flops


def _chips_in(step: Step, job: Job) -> int:
    lay = step.layout
    return max(lay.tp, lay.ep) * lay.pp if job.kind == "serve" else lay.chips


def option_performance(
    catalog: Catalog, job: Job, form_id: str, switch_id: str, oversubscription: float = 1.0
) -> Performance | None:
    """What `job` gets on a form with a scale-up switch (`none` on a torus); None when it fits no layout."""
    m = machine(catalog, form_id, switch_id, job.precision, oversubscription)
    step = best_step(job, m)
    if step is None:
        return None
    chips = _chips_in(step, job)
    mfu = step.model_flops / (chips * m.peak_flops * step.step_s)
    failing = job.job_chips if job.kind == "train" else chips
    return Performance(
        form=form_id,
        scale_up_switch=switch_id,
        step=step,
        mfu=min(mfu, 1.0),
        goodput=goodput(failing, m.mtbf_hours),
        precision_ratio=m.peak_flops / m.fp8_flops,
        fp8_tflops=m.fp8_flops / 1e12,
    )


def scale_up_options(catalog: Catalog, form_id: str) -> list[str]:
    """A form's scale-up switch ids, `none` for a form without any (a torus)."""
    return [o.switch for o in catalog.forms[form_id].scale_up] or [NO_SWITCH]


def workload_performance(
    catalog: Catalog,
    workload_id: str,
    forms: list[str] | None = None,
    chips: list[str] | None = None,
    oversubscription: float = 1.0,
) -> list[tuple[str, str, Performance | None]]:
    """Every (form, scale-up option) the selection allows, sorted, with what the workload's job gets."""
    job = catalog.workloads[workload_id].job
    assert job is not None
    rows = []
    for form_id in sorted(catalog.forms):
        form = catalog.forms[form_id]
        if (forms is not None and form_id not in forms) or (chips is not None and form.chip not in chips):
            continue
        for switch_id in scale_up_options(catalog, form_id):
            perf = option_performance(catalog, job, form_id, switch_id, oversubscription)
            rows.append((form_id, switch_id, perf))
    return rows
