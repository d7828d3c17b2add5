"""Workloads: what share of dense FP8 peak (MFU x goodput) a workload delivers on each form, by rules on
topology, scale-up domain size and forms (the first matching rule wins), or computed from the job it runs
(`trnplan.perf`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, model_validator

from trnplan.catalog.base import Checked, Id, Plausible, Spec, Text
from trnplan.catalog.provenance import Provenance


@dataclass(frozen=True)
class Share(Checked):
    """A share of dense peak in (0, 1]; a percentage typed in is named as such."""

    def check(self, value: float) -> float:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        if 0 < value <= 1:
            return value
        hint = "; this looks like a percentage: write 0.35 for 35%" if 5 <= value <= 100 else ""
        raise ValueError(
            f"efficiency {value:g} is outside (0, 1]: the share of dense FP8 peak delivered{hint}"
        )

    def json_bounds(self) -> dict[str, float]:
        return {"exclusiveMinimum": 0, "maximum": 1}


class EfficiencyRule(Spec):
    """One rule of a workload: the share of dense FP8 peak delivered (MFU x goodput) on the forms that meet
    every condition given; a rule without conditions matches any form."""

    topology: Literal["switched", "torus"] | None = None
    min_domain_chips: Annotated[int, Plausible(1, 1_000_000, "chips")] | None = None
    forms: list[Id] | None = Field(default=None, min_length=1)
    value: Annotated[float, Share()]

    def covers(self, later: EfficiencyRule) -> bool:
        """Every form `later` matches, this rule matches too (so `later`, after this one, never matches)."""
        return (
            (self.topology is None or self.topology == later.topology)
            and (
                self.min_domain_chips is None
                or (later.min_domain_chips is not None and later.min_domain_chips >= self.min_domain_chips)
            )
            and (self.forms is None or (later.forms is not None and set(later.forms) <= set(self.forms)))
        )


JobChips = Annotated[int, Plausible(1, 10_000_000, "chips")]


class JobLayout(Spec):
    """A parallel layout pinned by the job (a published run's); absent: `trnplan.perf` searches them.
    `interleave` is the virtual pipeline stages per chip, `micro_batch` sequences per micro-batch."""

    tp: Annotated[int, Plausible(1, 1024, "chips")] = 1
    ep: Annotated[int, Plausible(1, 65536, "chips")] = 1
    pp: Annotated[int, Plausible(1, 1024, "stages")] = 1
    dp: Annotated[int, Plausible(1, 1_000_000, "replicas")] = 1
    cp: Annotated[int, Plausible(1, 1024, "chips")] = 1
    interleave: Annotated[int, Plausible(1, 64, "virtual stages")] = 1
    micro_batch: Annotated[int, Plausible(1, 4096, "sequences")] = 1


class Job(Spec):
    """The job a workload runs, from which `trnplan.perf` computes MFU, goodput and efficiency per form
    and scale-up option (design.md, "Delivered performance")."""

    kind: Literal["train", "serve"]
    total_params_b: Annotated[float, Plausible(0.001, 100_000, "billion parameters")]
    active_params_b: Annotated[float, Plausible(0.001, 100_000, "billion parameters")]
    layers: Annotated[int, Plausible(1, 10_000, "layers")]
    hidden: Annotated[int, Plausible(64, 1_000_000, "")]
    experts: Annotated[int, Plausible(0, 100_000, "experts")] = 0
    experts_per_token: Annotated[int, Plausible(0, 1024, "experts")] = 0
    seq_len: Annotated[int, Plausible(16, 100_000_000, "tokens")]
    global_batch_tokens: Annotated[float, Plausible(1, 1e12, "tokens")] | None = None
    precision: Literal["fp8", "bf16"]
    job_chips: JobChips
    heads: Annotated[int, Plausible(1, 4096, "heads")] | None = None
    flash_attention: bool = True  # attention scores never stored nor re-read (false: Megatron 2022)
    kv_cache_kb_per_token: Annotated[float, Plausible(0.001, 100_000, "KB")] | None = None
    prompt_tokens: Annotated[int, Plausible(1, 100_000_000, "tokens")] | None = None
    output_tokens: Annotated[int, Plausible(1, 100_000_000, "tokens")] | None = None
    batch: Annotated[int, Plausible(1, 1_000_000, "sequences")] | None = None
    layout: JobLayout | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Job:
        problems = []
        if self.active_params_b > self.total_params_b:
            problems.append("active_params_b exceeds total_params_b")
        if (self.experts > 0) != (self.experts_per_token > 0):
            problems.append("experts and experts_per_token go together (both 0 or absent for a dense model)")
        elif self.experts and self.experts_per_token > self.experts:
            problems.append("experts_per_token exceeds experts")
        if self.kind == "train" and self.global_batch_tokens is None:
            problems.append("a train job needs global_batch_tokens")
        if self.kind == "serve":
            missing = [f for f in ("prompt_tokens", "output_tokens", "batch") if getattr(self, f) is None]
            if missing:
                problems.append(f"a serve job needs {', '.join(missing)}")
        if not self.flash_attention and self.heads is None:
            problems.append("flash_attention false needs heads (the attention scores' size)")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def moe(self) -> bool:
        return self.experts > 0


class Workload(Provenance):
    """What a workload delivers of dense FP8 peak on each form: the first matching rule wins; with a `job`,
    a form no rule matches delivers what `trnplan.perf` computes, without one its peak (efficiency 1).
    Matching: `trnplan.costs.options.form_efficiency`."""

    name: Text
    description: Text | None = None
    efficiency: list[EfficiencyRule] = []
    job: Job | None = None

    @model_validator(mode="after")
    def _rules_or_job(self) -> Workload:
        if not self.efficiency and self.job is None:
            raise ValueError(
                "a workload needs efficiency rules or a job (or both: rules win where they match)"
            )
        return self
