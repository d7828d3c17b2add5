"""The base of every spec entity that states figures: where they come from (`sources`), which are estimates
(`estimates`, with the reasoning in `notes`) and how far an estimate may be off (`ranges`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from trnplan.catalog.base import PROVENANCE, Spec, Text
from trnplan.catalog.ranges import RangeEnd, range_problems


class Provenance(Spec):
    sources: list[Text] = []
    estimates: list[str] = []
    notes: Text | None = None
    ranges: dict[str, Annotated[list[RangeEnd], Field(min_length=2, max_length=2)]] = {}
    """`{FIELD: [LOW, HIGH]}`: how far an estimate may be off (numbers, or months for a month field);
    `trnplan sweep --sample`, `--tornado` and `optimize --futures` draw in them."""

    @model_validator(mode="after")
    def _estimates_name_fields(self) -> Provenance:
        known = set(type(self).model_fields) - PROVENANCE
        for name in self.estimates:
            top = name.split(".")[0]
            if top not in known:
                raise ValueError(f"estimates names unknown field '{name}'")
        return self

    @model_validator(mode="after")
    def _ranges_hold_values(self) -> Provenance:
        problems = range_problems(self)
        if problems:
            raise ValueError("; ".join(f"ranges.{p}" for p in problems))
        return self
