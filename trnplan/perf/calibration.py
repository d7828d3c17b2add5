"""Published training runs the model is checked against, each with its source, layout and MFU; the matrix
share of each chip family is fitted on the runs marked `fit` and checked on the others."""

from __future__ import annotations

from dataclasses import dataclass, replace

from trnplan.catalog import Catalog, Job
from trnplan.catalog.workloads import JobLayout
from trnplan.perf.machine import machine
from trnplan.perf.train import Layout, train_step

KORTHIKANTI = (
    "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models (2022), Table 5 "
    "(sequence parallelism + selective recomputation; layouts as Calculon's validation reads them): "
    "https://arxiv.org/abs/2205.05198"
)
LLAMA3 = "The Llama 3 Herd of Models (2024), Table 4 (BF16 MFU): https://arxiv.org/abs/2407.21783"


@dataclass(frozen=True)
class Run:
    """A published run: the job with its pinned layout, where it ran, its MFU, and whether the chip
    family's share is fitted on it."""

    name: str
    source: str
    form: str
    switch: str
    job: Job
    published_mfu: float
    fit: bool


def _gpt(params_b: float, layers: int, hidden: int, heads: int, seqs: int, **layout: int) -> Job:
    """A Megatron GPT of Korthikanti et al. (sequence 2,048, vocabulary 51,200) on A100s."""
    chips = layout.get("tp", 1) * layout.get("pp", 1) * layout.get("dp", 1)
    return Job(
        kind="train", total_params_b=params_b, active_params_b=params_b, layers=layers, hidden=hidden,
        heads=heads, seq_len=2048, global_batch_tokens=float(seqs * 2048), precision="bf16",
        job_chips=chips, flash_attention=False, layout=JobLayout(**layout),
    )


def _llama(chips: int, seq_len: int, **layout: int) -> Job:
    """Llama 3 405B (126 layers, hidden 16,384, 128 heads, 8 KV heads), 16M tokens a step; the
    interleaving depth is not published: taken as deep as the layers per stage allow (126 / 16 = 7)."""
    return Job(
        kind="train", total_params_b=405.0, active_params_b=405.0, layers=126, hidden=16384, heads=128,
        seq_len=seq_len, global_batch_tokens=float(16 * 2**20), precision="bf16", job_chips=chips,
        kv_cache_kb_per_token=126 * 2 * 1024 * 2 / 1000, layout=JobLayout(interleave=7, **layout),
    )


RUNS: tuple[Run, ...] = (
    Run("Megatron 22B, 8 A100", KORTHIKANTI, "dgx-a100", "nvswitch-a100",
        _gpt(22.06, 48, 6144, 64, 4, tp=8, micro_batch=4), 0.415, fit=False),
    Run("Megatron 175B, 64 A100", KORTHIKANTI, "dgx-a100", "nvswitch-a100",
        _gpt(174.6, 96, 12288, 96, 64, tp=8, pp=8, interleave=3), 0.514, fit=True),
    Run("Megatron 530B, 280 A100", KORTHIKANTI, "dgx-a100", "nvswitch-a100",
        _gpt(529.5, 105, 20480, 128, 280, tp=8, pp=35, interleave=3), 0.560, fit=True),
    Run("Megatron 1T, 512 A100", KORTHIKANTI, "dgx-a100", "nvswitch-a100",
        _gpt(1007.9, 128, 25600, 160, 512, tp=8, pp=64), 0.563, fit=False),
    Run("Llama 3 405B, 8,192 H100", LLAMA3, "dgx-h100", "nvswitch-h100",
        _llama(8192, 8192, tp=8, pp=16, dp=64), 0.43, fit=True),
    Run("Llama 3 405B, 16,384 H100", LLAMA3, "dgx-h100", "nvswitch-h100",
        _llama(16384, 8192, tp=8, pp=16, dp=128), 0.41, fit=False),
    Run("Llama 3 405B, 16,384 H100, 131k context", LLAMA3, "dgx-h100", "nvswitch-h100",
        _llama(16384, 131072, tp=8, cp=16, pp=16, dp=8), 0.38, fit=False),
)


def predicted_mfu(catalog: Catalog, run: Run, share: float | None = None) -> float:
    """The model's MFU for a run on its published layout (at `share` instead of the family's constant)."""
    m = machine(catalog, run.form, run.switch, run.job.precision)
    if share is not None:
        m = replace(m, matrix_share=share)
    assert run.job.layout is not None
    p = run.job.layout
    step = train_step(run.job, m, Layout(p.tp, p.ep, p.pp, p.dp, p.cp, p.interleave, p.micro_batch))
    if step is None:
        raise ValueError(f"{run.name}: its published layout does not fit in HBM under the model")
    return step.model_flops / (run.job.job_chips * m.peak_flops * step.step_s)


def fitted_share(catalog: Catalog, chip: str) -> float:
    """The matrix share at which the model's mean relative error on `chip`'s `fit` runs is zero (bisection:
    MFU grows with the share)."""
    runs = [r for r in RUNS if r.fit and catalog.forms[r.form].chip == chip]

    def error(share: float) -> float:
        return sum(predicted_mfu(catalog, r, share) / r.published_mfu - 1 for r in runs) / len(runs)

    lo, hi = 0.05, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if error(mid) < 0 else (lo, mid)
    return (lo + hi) / 2
