"""The performance model's named constants, each with its source, or fitted (on which runs), or an estimate
with its reasoning. `trnplan.perf.calibration` holds the published runs the fitted ones come from."""

from __future__ import annotations

MATRIX_SHARE: dict[str, float] = {"a100": 0.633, "h100": 0.547}
"""Achievable matrix-unit share of the job-precision peak, per chip family: the share of peak a large
matrix multiply sustains inside a training step (clocks under power limits, kernel efficiency, small
operations). Fitted: A100 on Korthikanti et al. 2022's 175B and 530B runs (Table 5), checked on its 22B and
1T runs; H100 on Llama 3 405B's 8,192-GPU run (Llama 3 paper, Table 4), checked on its two 16,384-GPU runs
(`trnplan.perf.calibration`)."""

DEFAULT_MATRIX_SHARE = 0.59
"""Chips without a fitted share (Trainium, TPU, AMD, Blackwell): the mean of the fitted A100 and H100
shares, an estimate: no public training run on them states its layout and MFU."""

ELEMENTWISE_PASSES = 2.0
"""Times each stored activation byte crosses HBM in a training step outside the matrix units (written in the
forward pass, read in the backward): an estimate, the least it can be. The bytes are Korthikanti et al.
2022's activation memory per layer and token, 34 x hidden (+ 5 x heads x seq_len when attention scores are
stored), their equation (1)."""

ACTIVATION_BYTES_PER_TOKEN_LAYER = 34
"""Stored activation bytes per token, layer and unit of hidden with 16-bit activations, without the attention
scores: Korthikanti et al. 2022, equation (1) (sequence parallelism shards them over the tensor group)."""

ATTENTION_SCORE_BYTES = 5
"""Bytes per head and token pair of stored attention scores (softmax input and output, dropout mask):
Korthikanti et al. 2022, equation (1); zero with flash attention, which never stores them."""

ACTIVATION_BYTES = 2
"""Bytes per element of activations on the wire (tensor-parallel collectives, expert all-to-all, pipeline
sends): 16-bit, as Megatron-LM and Llama 3 send them; FP8 jobs keep 16-bit activations between layers."""

TP_COLLECTIVES_PER_LAYER = 5
"""All-reduce-sized tensor-parallel collectives per layer and micro-batch with sequence parallelism: two
all-gather/reduce-scatter pairs forward, two backward (Korthikanti et al. 2022, section 4.2.2), and one pair
gathered again in the backward for the weight gradients instead of kept (Megatron-LM; Calculon's
`seq_par_ag_redo`)."""

OPTIMIZER_STEP_BYTES_PER_PARAM = 32
"""HBM bytes an Adam step moves per parameter it owns: reads 16-bit weights and gradients and FP32 master
weights and both moments (18), writes the last three and the 16-bit weights (14): from ZeRO's 16-byte
state (section 3.1)."""

GRADIENT_BYTES = 2
"""Bytes per gradient element reduced over data parallelism (16-bit): an estimate; Megatron-LM's distributed
optimizer may reduce in FP32 (4), which would double data-parallel traffic."""

WEIGHT_GRAD_BYTES_PER_PARAM = 4
"""HBM bytes per parameter for 16-bit weights and gradients; the optimizer's FP32 master weights and Adam
moments add OPTIMIZER_BYTES_PER_PARAM, sharded over data parallelism (ZeRO-1, the distributed optimizer):
Rajbhandari et al., ZeRO (2020), 16 bytes per parameter for mixed-precision Adam."""

OPTIMIZER_BYTES_PER_PARAM = 12
"""FP32 master weights, Adam's first and second moments: ZeRO (2020), section 3.1."""

HBM_USABLE_SHARE = 0.9
"""Share of HBM a job can fill (runtime, collectives' buffers, fragmentation take the rest): an estimate."""

COLLECTIVE_EFFICIENCY = 0.8
"""Share of a link's rate a collective (all-reduce, all-gather, all-to-all) sustains: an estimate from
NCCL's bus bandwidth on 8-GPU NVLink servers (about 230 of 300 GB/s on A100, 360 of 450 on H100)."""

DP_OVERLAP = 0.75
"""Share of data-parallel gradient traffic hidden behind the backward pass (bucketed reduce-scatter as
layers finish); the rest, the last buckets, is exposed. An estimate."""

P2P_OVERLAP = 0.75
"""Share of pipeline-parallel sends (activations forward, their gradients back) hidden behind compute:
Megatron-LM's interleaved schedule overlaps them (`overlap_p2p_comm`); the rest is exposed. An estimate."""

LINK_LATENCY_S = 500e-9
"""Per-step latency of a collective beyond the switches' own (NIC, SerDes, software): an estimate."""

SCALE_OUT_LATENCY_S = 5e-6
"""Per-step latency of a collective over the scale-out network: an estimate (AWS 10p10u: under 10 us)."""

RESTART_HOURS = 0.15
"""Hours a job loses per interruption to detect it, replace the chip and reload (beyond lost work): an
estimate within the Llama 3 bound (466 interruptions in 54 days on 16k GPUs with more than 90% effective
training time: restart plus half a checkpoint interval at most 0.31 h)."""

CHECKPOINT_INTERVAL_HOURS = 0.25
"""Hours between checkpoints; an interruption loses half of it on average: an estimate within the same
Llama 3 bound."""

DEFAULT_MTBF_HOURS = 45_500.0
"""Mean hours between job-interrupting failures per chip when a chip states none: Llama 3's 466
interruptions in 54 days on 16,384 H100s = 16,384 x 54 x 24 / 466 chip-hours per interruption."""

MAX_TENSOR_PARALLEL = 64
"""The widest tensor-parallel group searched (a hidden split finer than this leaves matrices too thin)."""

LONG_CONTEXT_TOKENS = 32_768
"""Sequences at least this long may be split over chips (context parallelism); shorter ones are not."""
