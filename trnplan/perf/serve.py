"""Serving from first principles: a replica of tp x pp chips (experts over ep of them) prefills a batch of
prompts at the matrix units' share, then decodes token by token, each step bound by compute or by reading
the weights it touches and the batch's KV cache from HBM, plus its collectives (latency-bound at small
batches)."""

from __future__ import annotations

from collections.abc import Iterator

from trnplan.catalog import Job
from trnplan.perf.constants import (
    ACTIVATION_BYTES,
    HBM_USABLE_SHARE,
    MAX_TENSOR_PARALLEL,
    SCALE_OUT_LATENCY_S,
)
from trnplan.perf.machine import Machine
from trnplan.perf.train import Layout, Step, _powers_of_two, expert_params, kv_bytes_per_token_layer

WEIGHT_BYTES = {"fp8": 1, "bf16": 2}
"""Bytes per served weight at the job's precision."""


def serve_step(job: Job, m: Machine, lay: Layout) -> Step | None:
    """One batch of `job.batch` requests on one replica (prefill, then every output token); None when the
    weights and the batch's KV cache do not fit."""
    width = max(lay.tp, lay.ep)
    chips = width * lay.pp
    if lay.tp > m.domain_chips or (job.moe and job.experts % lay.ep) or lay.pp > job.layers:
        return None
    batch = job.batch or 1
    prompt = job.prompt_tokens or 0
    output = job.output_tokens or 0
    experts = expert_params(job)
    dense = job.total_params_b * 1e9 - experts
    wbytes = WEIGHT_BYTES[job.precision]
    weights_chip = (dense / lay.tp + experts / lay.ep) / lay.pp * wbytes
    kv_token = kv_bytes_per_token_layer(job) * job.layers
    kv_chip = batch * (prompt + output) * kv_token / chips
    if weights_chip + kv_chip > m.hbm_bytes * HBM_USABLE_SHARE:
        return None
    rate = m.peak_flops * m.matrix_share
    h, layers = job.hidden, job.layers
    active = job.active_params_b * 1e9

    def flops(context: float) -> float:
        return 2 * active + 4 * layers * h * context

    prefill = batch * prompt * flops(prompt / 2) / (chips * rate)
    context = prompt + output / 2
    step_compute = batch * flops(context) / (chips * rate)
    touched = 1.0
    if job.moe:  # share of experts a decode step's tokens reach
        touched = 1 - (1 - job.experts_per_token / job.experts) ** batch
    weights_read = (dense / lay.tp + experts * touched / lay.ep) / lay.pp * wbytes
    step_bytes = weights_read + batch * context * kv_token / chips
    step_memory = step_bytes / m.hbm_bytes_s
    up = out = 0.0
    steps = output + 1  # decode steps and the prefill pass
    tokens_all = batch * (prompt + output)
    if lay.tp > 1:  # two all-reduces per layer
        tokens_group = tokens_all * lay.tp / width  # attention is data parallel over width / tp groups
        wire = tokens_group * layers / lay.pp * 2 * 2 * (lay.tp - 1) / lay.tp * h * ACTIVATION_BYTES
        up += wire / m.allreduce_bytes_s(lay.tp) + steps * layers * 2 * 2 * (lay.tp - 1) * m.hop_latency_s
    if job.moe and lay.ep > 1:  # dispatch and combine per layer
        wire = tokens_all * layers / lay.pp * 2 * job.experts_per_token * h * ACTIVATION_BYTES
        wire *= (lay.ep - 1) / lay.ep / width
        if lay.ep <= m.domain_chips:
            up += wire / m.alltoall_bytes_s(lay.ep) + steps * layers * 2 * m.hop_latency_s
        else:
            out += wire / m.scale_out_bytes_s + steps * layers * 2 * SCALE_OUT_LATENCY_S
    if lay.pp > 1:  # each token's activations cross every stage boundary
        hops = width * lay.pp > m.domain_chips
        wire = tokens_all * (lay.pp - 1) * h * ACTIVATION_BYTES / width
        t = wire / (m.scale_out_bytes_s if hops else m.scale_up_bytes_s) + steps * (lay.pp - 1) * (
            SCALE_OUT_LATENCY_S if hops else m.hop_latency_s
        )
        out, up = (out + t, up) if hops else (out, up + t)
    model_flops = batch * (prompt * flops(prompt / 2) + output * flops(context))
    return Step(
        layout=Layout(lay.tp, lay.ep, lay.pp, job.job_chips // chips, 1, 1, batch),
        compute_s=prefill + output * step_compute,
        memory_s=output * max(0.0, step_memory - step_compute),
        scale_up_s=up,
        scale_out_s=out,
        bubble_s=0.0,
        model_flops=model_flops,
        hbm_used_bytes=weights_chip + kv_chip,
    )


def serve_layouts(job: Job, m: Machine) -> Iterator[Layout]:
    """Replicas of tp (powers of two inside the domain) x pp chips, experts over ep >= tp chips; a replica
    spans at most the job's chips, which it must divide."""
    if job.layout is not None:
        p = job.layout
        yield Layout(p.tp, p.ep, p.pp, p.dp, 1, 1, 1)
        return
    n = job.job_chips
    for tp in _powers_of_two(min(m.domain_chips, MAX_TENSOR_PARALLEL, n)):
        eps = [e for e in _powers_of_two(min(job.experts, n)) if e >= tp] if job.moe else [tp]
        for ep in eps:
            for pp in _powers_of_two(min(job.layers, n // max(tp, ep))):
                if n % (max(tp, ep) * pp) == 0:
                    yield Layout(tp, ep, pp, n // (max(tp, ep) * pp), 1, 1, 1)
