"""A training step from first principles: model FLOPs at the matrix units' achievable share, element-wise
HBM traffic, tensor-parallel collectives and expert all-to-all in the domain, what leaves the domain at the
scale-out rate, data-parallel gradients with their overlap, and the pipeline bubble."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from trnplan.catalog import Job
from trnplan.perf.constants import (
    ACTIVATION_BYTES,
    ACTIVATION_BYTES_PER_TOKEN_LAYER,
    ATTENTION_SCORE_BYTES,
    DP_OVERLAP,
    ELEMENTWISE_PASSES,
    GRADIENT_BYTES,
    HBM_USABLE_SHARE,
    LONG_CONTEXT_TOKENS,
    MAX_TENSOR_PARALLEL,
    OPTIMIZER_BYTES_PER_PARAM,
    OPTIMIZER_STEP_BYTES_PER_PARAM,
    P2P_OVERLAP,
    SCALE_OUT_LATENCY_S,
    TP_COLLECTIVES_PER_LAYER,
    WEIGHT_GRAD_BYTES_PER_PARAM,
)
from trnplan.perf.machine import Machine


@dataclass(frozen=True)
class Layout:
    """Chips = tp x cp x pp x dp; experts are split over ep chips of the tp x cp x dp ones."""

    tp: int = 1
    ep: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    interleave: int = 1
    micro_batch: int = 1

    @property
    def chips(self) -> int:
        return self.tp * self.cp * self.pp * self.dp


@dataclass(frozen=True)
class Step:
    """One step's time split into its parts (seconds; they add up to `step_s`) and its model FLOPs."""

    layout: Layout
    compute_s: float
    memory_s: float
    scale_up_s: float
    scale_out_s: float
    bubble_s: float
    model_flops: float
    hbm_used_bytes: float

    @property
    def step_s(self) -> float:
        return self.compute_s + self.memory_s + self.scale_up_s + self.scale_out_s + self.bubble_s


def flops_per_token(job: Job) -> float:
    """Model FLOPs per trained token: 6 x active parameters + 12 x layers x hidden x seq_len (attention
    scores), Narayanan et al. 2021 / Korthikanti et al. 2022's count."""
    return 6 * job.active_params_b * 1e9 + 12 * job.layers * job.hidden * job.seq_len


def expert_params(job: Job) -> float:
    """Parameters in routed experts: active = dense + experts x k / E, so experts = (total - active) /
    (1 - k / E)."""
    if not job.moe:
        return 0.0
    return (job.total_params_b - job.active_params_b) * 1e9 / (1 - job.experts_per_token / job.experts)


def kv_bytes_per_token_layer(job: Job) -> float:
    """Key and value bytes of one token in one layer: the job's figure, else 2 x hidden x 2 bytes / 8
    (grouped-query attention with 8 query heads per KV head, Llama 3)."""
    if job.kv_cache_kb_per_token is not None:
        return job.kv_cache_kb_per_token * 1000 / job.layers
    return 2 * job.hidden * 2 / 8


def _hbm_bytes(job: Job, lay: Layout, params_chip: float, micro: float) -> float:
    """Weights and gradients, the optimizer state sharded over data parallelism, and stored activations:
    the mean stage holds (pp + 1) / 2 micro-batches' activations of its layers."""
    in_flight = (lay.pp + 1) / 2 if micro >= lay.pp else micro
    tokens_mb = job.seq_len * lay.micro_batch / (lay.tp * lay.cp)
    act_layer = ACTIVATION_BYTES_PER_TOKEN_LAYER * job.hidden * tokens_mb
    return (
        params_chip * WEIGHT_GRAD_BYTES_PER_PARAM
        + params_chip * OPTIMIZER_BYTES_PER_PARAM / lay.dp
        + act_layer * job.layers / lay.pp * in_flight
    )


def _tensor_and_context(
    job: Job, m: Machine, lay: Layout, tokens: float, calls: float
) -> tuple[float, float]:
    """Seconds of tensor-parallel collectives and context-parallel key/value exchange, (in the domain,
    over the scale-out network)."""
    layers_chip = job.layers / lay.pp
    up = out = 0.0
    if lay.tp > 1:
        per = TP_COLLECTIVES_PER_LAYER * 2 * (lay.tp - 1)
        wire = tokens / (lay.dp * lay.cp) * layers_chip * per / lay.tp * job.hidden * ACTIVATION_BYTES
        up += wire / m.allreduce_bytes_s(lay.tp) + calls * per * m.hop_latency_s
    if lay.cp > 1:  # keys and values gathered forward, their gradients reduced backward
        kv = tokens / lay.dp * layers_chip * 2 * (lay.cp - 1) / lay.cp
        kv *= kv_bytes_per_token_layer(job) / lay.tp
        inside = lay.tp * lay.cp <= m.domain_chips
        rate_cp = m.allreduce_bytes_s(lay.cp) if inside else m.scale_out_bytes_s
        t = kv / rate_cp + calls * 2 * (lay.cp - 1) * (m.hop_latency_s if inside else SCALE_OUT_LATENCY_S)
        up, out = (up + t, out) if inside else (up, out + t)
    return up, out


def _experts(job: Job, m: Machine, lay: Layout, tokens: float, calls: float) -> tuple[float, float]:
    """Seconds of expert all-to-all (dispatch and combine, forward and backward, k copies of each token):
    the part of the expert group inside the domain at its all-to-all rate, the rest at the scale-out rate,
    at once; (in the domain, over the scale-out network), whichever is longer."""
    if not job.moe or lay.ep <= 1:
        return 0.0, 0.0
    wire = tokens * job.layers * 4 * job.experts_per_token * job.hidden * ACTIVATION_BYTES
    wire *= (lay.ep - 1) / lay.ep / lay.chips
    in_domain = min(lay.ep, m.domain_chips)
    share_in = (in_domain - 1) / (lay.ep - 1)
    t_in = wire * share_in / m.alltoall_bytes_s(in_domain)
    t_out = wire * (1 - share_in) / m.scale_out_bytes_s
    latency = calls * 4 * (m.hop_latency_s if lay.ep <= m.domain_chips else SCALE_OUT_LATENCY_S)
    return (0.0, t_out + latency) if t_out > t_in else (t_in + latency, 0.0)


def train_step(job: Job, m: Machine, lay: Layout) -> Step | None:
    """The step of `job` on `m` laid out as `lay`; None when the layout is not one (sizes do not divide,
    too few sequences) or its weights, optimizer state and activations do not fit in HBM."""
    n = lay.chips
    tokens = float(job.global_batch_tokens or 0)
    per_replica = tokens / job.seq_len / lay.dp
    if per_replica < lay.micro_batch or lay.tp > m.domain_chips or lay.pp > job.layers:
        return None
    if job.moe and (job.experts % lay.ep or (lay.tp * lay.cp * lay.dp) % lay.ep):
        return None
    micro = per_replica / lay.micro_batch
    experts = expert_params(job)
    dense = job.total_params_b * 1e9 - experts
    params_chip = dense / (lay.tp * lay.pp) + experts / (lay.ep * lay.pp)
    hbm = _hbm_bytes(job, lay, params_chip, micro)
    if hbm > m.hbm_bytes * HBM_USABLE_SHARE:
        return None
    h, layers = job.hidden, job.layers
    model_flops = tokens * flops_per_token(job)
    recompute = 0.0 if job.flash_attention else tokens * 4 * layers * h * job.seq_len  # selective: scores
    compute = (model_flops + recompute) / (n * m.peak_flops * m.matrix_share)
    scores = 0.0 if job.flash_attention else ATTENTION_SCORE_BYTES * (job.heads or 0) * job.seq_len
    elementwise = tokens * layers * ELEMENTWISE_PASSES * (ACTIVATION_BYTES_PER_TOKEN_LAYER * h + scores)
    memory = (elementwise / n + params_chip / lay.dp * OPTIMIZER_STEP_BYTES_PER_PARAM) / m.hbm_bytes_s

    calls = micro * layers / lay.pp  # (micro-batch, layer) pairs a chip runs
    up, out = _tensor_and_context(job, m, lay, tokens, calls)
    ep_up, ep_out = _experts(job, m, lay, tokens, calls)
    up, out = up + ep_up, out + ep_out
    pipe = 0.0
    if lay.pp > 1:  # activations to the next stage and gradients back, per virtual stage
        sends = micro * lay.interleave * 2
        wire = sends * job.seq_len * lay.micro_batch * h * ACTIVATION_BYTES / (lay.tp * lay.cp)
        pipe = wire / m.scale_out_bytes_s + sends * SCALE_OUT_LATENCY_S
        pipe -= min(P2P_OVERLAP * pipe, compute)
    bubble = (lay.pp - 1) / (lay.interleave * micro) * (compute + memory + up + out + pipe)
    grads = 0.0
    if lay.dp > 1:  # reduce-scatter + all-gather of the gradients over the scale-out network
        wire = 2 * params_chip * GRADIENT_BYTES * (lay.dp - 1) / lay.dp / m.scale_out_bytes_s
        grads = wire - min(DP_OVERLAP * wire, compute)
    return Step(
        layout=lay,
        compute_s=compute,
        memory_s=memory,
        scale_up_s=up,
        scale_out_s=out + pipe + grads,
        bubble_s=bubble,
        model_flops=model_flops,
        hbm_used_bytes=hbm,
    )


def _powers_of_two(top: int) -> list[int]:
    out, x = [], 1
    while x <= top:
        out.append(x)
        x *= 2
    return out


def train_layouts(job: Job, m: Machine) -> Iterator[Layout]:
    """The layouts searched: the job's own when it pins one; else tensor groups of powers of two inside the
    domain, context splits for long sequences, pipelines up to the layer count, experts over powers of two
    dividing their count, the rest data parallel, interleaving as deep as the layers per stage allow."""
    if job.layout is not None:
        p = job.layout
        yield Layout(p.tp, p.ep, p.pp, p.dp, p.cp, p.interleave, p.micro_batch)
        return
    n = job.job_chips
    cps = _powers_of_two(64) if job.seq_len >= LONG_CONTEXT_TOKENS else [1]
    for tp in _powers_of_two(min(m.domain_chips, MAX_TENSOR_PARALLEL, n)):
        for cp in cps:
            if n % (tp * cp):
                continue
            rest = n // (tp * cp)
            for pp in (p for p in range(1, min(rest, job.layers) + 1) if rest % p == 0):
                dp = rest // pp
                interleave = max(1, job.layers // pp) if pp > 1 else 1
                eps = [e for e in _powers_of_two(min(job.experts, tp * cp * dp))] if job.moe else [1]
                for ep in eps:
                    yield Layout(tp, ep, pp, dp, cp, interleave, 1)
