"""The figures the cost model returns, typed as a plan states them: the totals and the priced BOM lines.

They live below the plan (which embeds them) so that the cost model needs nothing of plan files.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Count = Annotated[int, Field(ge=0)]
Amount = Annotated[float, Field(ge=0)]
Id = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]*$")]
"""A spec id (site, form, cooling, switch), as the specs allow them."""
MONTH = r"^[0-9]{4}-(0[1-9]|1[0-2])$"
class Part(BaseModel):
    """Strict, frozen, closed: a plan part holds exactly its fields, each of its type, every number finite."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Totals(Part):
    """The plan's figures over all sites; money per year where the name says so."""

    chips: Count
    units: Count
    racks: Count
    fp8_pflops: Amount
    it_power_kw: Amount
    facility_power_kw: Amount
    capex_usd: Amount
    opex_usd_per_year: float  # negative only where a residual credit outweighs the rest
    tco_usd: Amount
    usd_per_pflop_hour: Amount
    usd_per_chip_hour: Amount
    domains: Count | None = None
    network_racks: Count | None = None
    hbm_tb: Amount | None = None
    energy_usd_per_year: Amount | None = None
    colocation_usd_per_year: Amount | None = None
    residual_usd_per_year: float | None = None  # capex with lives of its own; negative: a credit
    maintenance_usd_per_year: Amount | None = None
    effective_fp8_pflops: Amount | None = None  # under the scenario's workload; absent without one
    usd_per_effective_pflop_hour: Amount | None = None
    fp8_pflop_years: Amount | None = None  # a phased plan: sum over periods of years x installed PFLOPs
    effective_fp8_pflop_years: Amount | None = None

    def figure(self, name: str) -> float:
        """A total by name; 0 where the plan does not state it."""
        value = getattr(self, name)
        return 0.0 if value is None else float(value)


class BomLine(Part):
    """One priced line: quantity x unit_usd = extended_usd, to the cent."""

    site: Id
    category: str
    item: str
    quantity: Amount
    unit_usd: Amount
    extended_usd: Amount
    it_kw: Amount | None = None
    period: Annotated[str, StringConstraints(pattern=MONTH)] | None = None  # a phased plan: when it is bought
    life_years: Annotated[float, Field(gt=0)] | None = None  # a life of its own (else the horizon's)
