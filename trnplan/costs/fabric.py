"""Scale-out fabric sizing: a folded Clos of one switch type per site, non-blocking unless the scenario
oversubscribes its first tier, with optics on every link but the rack-to-leaf links of copper forms."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trnplan.catalog import RACK_UNITS_PER_RACK, Switch

MAX_TIERS = 6


def tier_capacity(radix: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Endpoints a t-tier Clos of radix-k switches serves: k for t = 1, else 2 (k/2)^(t-1) leaves of
    k r / (r + 1) down-ports each, r the first tier's oversubscription (r = 1: 2 (k/2)^t)."""
    if tiers == 1:
        return radix
    if oversubscription == 1:
        return int(2 * (radix // 2) ** tiers)
    leaves = int(2 * (radix // 2) ** (tiers - 1))
    return math.floor(leaves * radix * oversubscription / (oversubscription + 1))


def tiers_needed(ports: int, radix: int, oversubscription: float = 1.0) -> int:
    """The smallest t >= 1 with ports <= capacity(t)."""
    for t in range(1, MAX_TIERS + 1):
        if ports <= tier_capacity(radix, t, oversubscription):
            return t
    raise ValueError(f"{ports} endpoint ports need more than {MAX_TIERS} tiers of radix {radix}")


def uplinks(ports: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Leaf uplink ports U: none for one switch, else ceil(N / r) (N at r = 1)."""
    if tiers == 1 or ports == 0:
        return 0
    return ports if oversubscription == 1 else math.ceil(ports / oversubscription - 1e-9)


def switch_ports(ports: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Switch ports in use: N leaf down-ports + 2 (t - 1) U above them (each link between tiers has two
    ends); (2t - 1) N when non-blocking. Each carries an optic, but a copper link's leaf end."""
    return ports + 2 * (tiers - 1) * uplinks(ports, tiers, oversubscription)


def switch_ports_per_port(tiers: int, oversubscription: float = 1.0) -> float:
    """`switch_ports` per endpoint port before U is rounded up: 2t - 1 non-blocking, 1 + 2 (t - 1) / r
    with leaf uplinks U >= N / r (a lower bound of what N ports take)."""
    if oversubscription == 1 or tiers == 1:
        return float(switch_side_optics_per_port(tiers))
    return 1 + 2 * (tiers - 1) / oversubscription


def switches_per_port(tiers: int, radix: int) -> float:
    """Switches per endpoint port of a non-blocking fabric at t tiers: (2t - 1) / k (before rounding up)."""
    return (2 * tiers - 1) / radix


def switch_side_optics_per_port(tiers: int) -> int:
    """Switch-side optics per endpoint port of a non-blocking optical fabric: 1 + 2 (t - 1) = 2t - 1."""
    return 2 * tiers - 1


def switches_by_tier(ports: int, radix: int, tiers: int) -> list[int]:
    """Switches in each tier of a non-blocking fabric, leaf first: ceil(2N / k) below the top, ceil(N / k)
    at the top (N <= k: one). Their sum can exceed ceil((2t - 1) N / k) by each tier's rounding; the plan
    counts the total."""
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
    copper_links: int = 0  # rack-to-leaf copper links (their price is in the racks' options, not here)

    @property
    def optics(self) -> int:
        return self.switch_optics + self.endpoint_optics


def size_fabric(
    switch_id: str,
    switch: Switch,
    scale_out_gbps_total: float,
    endpoint_optics: int,
    max_rack_kw: float | None = None,
    oversubscription: float = 1.0,
    copper: tuple[int, float] = (0, 0.0),
) -> FabricSize:
    """Size the Clos for the site's total scale-out bandwidth, its rack-side optics and copper links.

    switches = ceil(P / k) with P = N + 2 (t - 1) U switch ports (U = ceil(N / r) leaf uplinks; P = (2t - 1) N
    non-blocking); switch-side optics = P less the leaf ends of the copper links (at most N); kW =
    (switches x power_w + optics x optic_w) / 1000 + the copper links' kW (`copper` = (links, kW));
    network racks = ceil(switches x U / 42), or more when the switches and their optics would draw over
    `max_rack_kw` per rack (rack-side optics and copper sit in the compute racks).
    """
    links, copper_kw = copper
    ports = endpoint_ports(scale_out_gbps_total, switch.port_gbps or 1.0)
    radix = switch.radix
    if ports == 0:
        kw = endpoint_optics * switch.optic_w / 1000 + copper_kw
        return FabricSize(switch_id, 0, radix, 0, 0, 0, endpoint_optics, 0, kw, links)
    tiers = tiers_needed(ports, radix, oversubscription)
    used = switch_ports(ports, tiers, oversubscription)
    switches = -(-used // radix)  # integer ceil(P / k)
    switch_optics = used - min(links, ports)
    racks = -(-switches * (switch.rack_units or 1) // RACK_UNITS_PER_RACK)
    kw = (switches * switch.power_w + (switch_optics + endpoint_optics) * switch.optic_w) / 1000 + copper_kw
    if max_rack_kw:
        rack_kw = network_rack_kw(switch, switches, switch_optics)
        racks = max(racks, math.ceil(rack_kw / max_rack_kw - 1e-9))
    return FabricSize(
        switch_id, ports, radix, tiers, switches, switch_optics, endpoint_optics, racks, kw, links
    )
