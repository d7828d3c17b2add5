"""Scale-out fabric sizing: a non-blocking folded Clos of one switch type per site."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trnplan.catalog import RACK_UNITS_PER_RACK, Switch

MAX_TIERS = 6


def tier_capacity(radix: int, tiers: int) -> int:
    """Endpoints a t-tier Clos of radix-k switches serves: k for t = 1, else 2 x (k/2)^t."""
    if tiers == 1:
        return radix
    return int(2 * (radix // 2) ** tiers)


def tiers_needed(ports: int, radix: int) -> int:
    """The smallest t >= 1 with ports <= capacity(t)."""
    for t in range(1, MAX_TIERS + 1):
        if ports <= tier_capacity(radix, t):
            return t
    raise ValueError(f"{ports} endpoint ports need more than {MAX_TIERS} tiers of radix {radix}")


def switches_per_port(tiers: int, radix: int) -> float:
    """Switches per endpoint port at t tiers: (2t - 1) / k (before rounding up)."""
    return (2 * tiers - 1) / radix


def switch_side_optics_per_port(tiers: int) -> int:
    """Switch-side optics per endpoint port: 1 + 2 (t - 1) = 2t - 1."""
    return 2 * tiers - 1


def switches_by_tier(ports: int, radix: int, tiers: int) -> list[int]:
    """Switches in each tier, leaf first: ceil(2N / k) below the top, ceil(N / k) at the top (N <= k: one).

    Their sum can exceed ceil((2t - 1) N / k) by the rounding of each tier; the plan counts the total."""
    if tiers == 1:
        return [1] if ports else [0]
    return [-(-2 * ports // radix)] * (tiers - 1) + [-(-ports // radix)]


def endpoint_ports(scale_out_gbps_total: float, port_gbps: float) -> int:
    """N = ceil(chips x scale_out_gbps / port_gbps), summed over chip types first."""
    return math.ceil(scale_out_gbps_total / port_gbps - 1e-9) if scale_out_gbps_total > 0 else 0


def network_rack_kw(switch: Switch, switches: int, switch_optics: int) -> float:
    """kW that sits in network racks: the switches and their own (switch-side) optics."""
    return (switches * switch.power_w + switch_optics * switch.optic_w) / 1000


@dataclass(frozen=True)
class FabricSize:
    """One site's scale-out fabric."""

    switch: str
    ports: int
    radix: int
    tiers: int
    switches: int
    switch_optics: int
    endpoint_optics: int
    network_racks: int
    it_power_kw: float

    @property
    def optics(self) -> int:
        return self.switch_optics + self.endpoint_optics


def size_fabric(
    switch_id: str,
    switch: Switch,
    scale_out_gbps_total: float,
    endpoint_optics: int,
    max_rack_kw: float | None = None,
) -> FabricSize:
    """Size the Clos for the site's total scale-out bandwidth and its rack-side optics.

    switches = ceil((2t - 1) N / k); optics = N (2t - 1) + rack-side; kW = (switches x power_w + optics x
    optic_w) / 1000; network racks = ceil(switches x U / 42), or more when the switches and their optics
    would draw over `max_rack_kw` per rack (rack-side optics sit in the compute racks).
    """
    ports = endpoint_ports(scale_out_gbps_total, switch.port_gbps or 1.0)
    radix = switch.radix
    if ports == 0:
        return FabricSize(
            switch_id, 0, radix, 0, 0, 0, endpoint_optics, 0, endpoint_optics * switch.optic_w / 1000
        )
    tiers = tiers_needed(ports, radix)
    switches = -(-(2 * tiers - 1) * ports // radix)  # integer ceil((2t - 1) N / k)
    switch_optics = ports * switch_side_optics_per_port(tiers)
    racks = -(-switches * (switch.rack_units or 1) // RACK_UNITS_PER_RACK)
    kw = (switches * switch.power_w + (switch_optics + endpoint_optics) * switch.optic_w) / 1000
    if max_rack_kw:
        rack_kw = network_rack_kw(switch, switches, switch_optics)
        racks = max(racks, math.ceil(rack_kw / max_rack_kw - 1e-9))
    return FabricSize(switch_id, ports, radix, tiers, switches, switch_optics, endpoint_optics, racks, kw)
