"""Workloads: what share of dense FP8 peak (MFU x goodput) a workload delivers on each form, by rules on
topology, scale-up domain size and forms; the first matching rule wins."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

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


class Workload(Provenance):
    """What a workload delivers of dense FP8 peak on each form: the first matching rule wins; a form no
    rule matches delivers its peak (efficiency 1). Matching: `trnplan.costs.options.form_efficiency`."""

    name: Text
    description: Text | None = None
    efficiency: list[EfficiencyRule] = Field(min_length=1)
