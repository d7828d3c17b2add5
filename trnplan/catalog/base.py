"""The base of every spec entity: strict frozen models, ids and months, plausible ranges that name the
likely unit slip, and provenance (sources, estimates, notes, ranges)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

ID_PATTERN = r"^[a-z0-9][a-z0-9.-]*$"
MONTH_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])$"

# Gb/s per lane per direction, by PCIe generation.
PCIE_LANE_GBPS = {3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0, 7: 128.0}
HOURS_PER_YEAR = 8760
RACK_UNITS_PER_RACK = 42

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
Month = Annotated[str, StringConstraints(pattern=MONTH_PATTERN)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class Checked:
    """A pydantic marker for numbers: `check` validates (and names the likely slip), `json_bounds` goes into
    the JSON Schema."""

    def check(self, value: float) -> float:
        raise NotImplementedError

    def json_bounds(self) -> dict[str, float]:
        raise NotImplementedError

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        out.update(self.json_bounds())
        return out


@dataclass(frozen=True)
class Plausible(Checked):
    """A number in [lo, hi] of `unit`; outside it, an error naming the likely unit slip.

    `slips` maps a factor to a description: if value x factor lands in range, that slip is named (every
    one that does, each with the value it would mean, when more than one does).
    """

    lo: float
    hi: float
    unit: str
    slips: tuple[tuple[float, str], ...] = ()

    def check(self, value: float) -> float:
        lo, hi, unit = self.lo, self.hi, self.unit
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        if abs(value) > 1e15:
            raise ValueError(
                f"{float(value):.3g} {unit} is far outside the plausible range {lo:g} to {hi:g} {unit}"
            )
        if lo <= value <= hi:
            return value
        slips = [(factor, what) for factor, what in self.slips if value != 0 and lo <= value * factor <= hi]
        if len(slips) > 1:  # more than one reading fits: each with the value it would mean
            slips = [(factor, f"{what} ({value * factor:g} {unit})") for factor, what in slips]
        hint = f"; this looks like {' or '.join(what for _, what in slips)}" if slips else ""
        raise ValueError(f"{value:g} {unit} is outside the plausible range {lo:g} to {hi:g} {unit}{hint}")

    def json_bounds(self) -> dict[str, float]:
        return {"minimum": self.lo, "maximum": self.hi}


def _slips(slips: dict[float, str] | None) -> tuple[tuple[float, str], ...]:
    return tuple((slips or {}).items())


Usd = Annotated[float, Plausible(0, 1e12, "USD")]


@dataclass(frozen=True)
class Extension:
    """A pydantic marker for a spec field added after plans were committed (`Annotated[float, ...,
    EXTENSION] = 0.0`): at its default it digests as before it existed (`catalog.digest`), so the plans of
    specs that leave it out keep their bytes."""


EXTENSION = Extension()


class Spec(BaseModel):
    """Strict base: unknown fields are errors, values are frozen, no type coercion."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


PROVENANCE = frozenset({"sources", "estimates", "notes", "ranges"})
"""Fields that say where figures come from and how sure they are: they change no figure of a plan."""
