"""Scale-out fabric sizing (trnplan.costs.fabric) on values worked out by hand.

A folded Clos of radix-k switches serves k endpoints at one tier and 2 (k/2)^t at t tiers; it takes
ceil((2t - 1) N / k) switches and N (2t - 1) switch-side optics for N endpoint ports.
"""

from __future__ import annotations

import pytest

from trnplan.catalog import Switch
from trnplan.costs.fabric import (
    endpoint_ports,
    size_fabric,
    switch_side_optics_per_port,
    switches_per_port,
    tier_capacity,
    tiers_needed,
)


def make_switch(**overrides: object) -> Switch:
    """A radix-64 switch: 6400 Gb/s of 100 Gb/s ports, 2 U, 500 W, optics 15 W each."""
    spec: dict[str, object] = {
        "role": "scale_out", "protocol": "ethernet", "bandwidth_gbps": 6400, "port_gbps": 100,
        "rack_units": 2, "power_w": 500, "unit_usd": 1000, "optic_usd": 10, "optic_w": 15,
        "available_from": "2020-01",
    }
    spec.update(overrides)
    return Switch.model_validate(spec)


@pytest.mark.parametrize(
    ("radix", "tiers", "capacity"),
    [
        (64, 1, 64),  # one switch: k ports
        (64, 2, 2048),  # 2 x 32^2
        (64, 3, 65536),  # 2 x 32^3
        (128, 2, 8192),  # 2 x 64^2
        (2, 3, 2),  # 2 x 1^3: a radix-2 switch never grows the fabric
    ],
)
def test_tier_capacity(radix: int, tiers: int, capacity: int) -> None:
    assert tier_capacity(radix, tiers) == capacity


@pytest.mark.parametrize(
    ("ports", "tiers"),
    [(0, 1), (1, 1), (64, 1), (65, 2), (2048, 2), (2049, 3), (65536, 3), (65537, 4)],
)
def test_tiers_needed_radix_64(ports: int, tiers: int) -> None:
    assert tiers_needed(ports, 64) == tiers


def test_tiers_needed_beyond_max_tiers_is_an_error() -> None:
    """Radix 4: capacity 2 x 2^t, so 6 tiers serve 128 ports and 129 need a 7th."""
    assert tiers_needed(128, 4) == 6
    with pytest.raises(ValueError, match="129 endpoint ports need more than 6 tiers of radix 4"):
        tiers_needed(129, 4)


def test_per_port_factors() -> None:
    assert [switch_side_optics_per_port(t) for t in (1, 2, 3)] == [1, 3, 5]
    assert switches_per_port(2, 64) == pytest.approx(3 / 64)


@pytest.mark.parametrize(
    ("gbps", "port_gbps", "ports"),
    [
        (6400, 100, 64),  # 64 chips x 100 Gb/s on 100G ports
        (600, 400, 2),  # 3 chips x 200 Gb/s on 400G ports: ceil(1.5) = 2
        (800, 400, 2),  # exact: no spurious extra port from float noise
        (0.1 * 3 * 1000, 100, 3),  # 300.00000000000006 Gb/s still needs 3 ports, not 4
        (0, 100, 0),
    ],
)
def test_endpoint_ports(gbps: float, port_gbps: float, ports: int) -> None:
    assert endpoint_ports(gbps, port_gbps) == ports


@pytest.mark.parametrize(
    ("ports", "tiers", "switches", "switch_optics"),
    [
        (64, 1, 1, 64),  # fits one switch
        (65, 2, 4, 195),  # ceil(3 x 65 / 64) = ceil(3.05) = 4; 65 x 3 optics
        (2048, 2, 96, 6144),  # ceil(3 x 2048 / 64) = 96
        (2049, 3, 161, 10245),  # ceil(5 x 2049 / 64) = ceil(160.08) = 161; 2049 x 5 optics
    ],
)
def test_size_fabric_radix_64(ports: int, tiers: int, switches: int, switch_optics: int) -> None:
    """N endpoint ports of 100G on radix-64 switches (2 U, 500 W, 15 W optics), 7 rack-side optics.

    network racks = ceil(switches x 2 / 42); kW = (switches x 500 + optics x 15) / 1000.
    """
    sw = make_switch()
    fab = size_fabric("sw", sw, ports * 100.0, 7)
    assert (fab.ports, fab.radix, fab.tiers, fab.switches) == (ports, 64, tiers, switches)
    assert fab.switch_optics == switch_optics
    assert fab.endpoint_optics == 7
    assert fab.optics == switch_optics + 7
    assert fab.network_racks == -(-switches * 2 // 42)
    assert fab.it_power_kw == pytest.approx((switches * 500 + (switch_optics + 7) * 15) / 1000)


def test_size_fabric_two_tier_worked_example() -> None:
    """65 ports, radix 64: t = 2 (65 > 64), switches = ceil(195 / 64) = 4, switch optics = 195,
    with 65 rack-side optics 260 optics; 4 x 2 U = 8 U -> 1 network rack;
    kW = (4 x 500 + 260 x 15) / 1000 = (2000 + 3900) / 1000 = 5.9.
    """
    fab = size_fabric("sw", make_switch(), 6500.0, 65)
    assert (fab.tiers, fab.switches, fab.switch_optics, fab.optics, fab.network_racks) == (2, 4, 195, 260, 1)
    assert fab.it_power_kw == pytest.approx(5.9)


def test_size_fabric_network_racks_round_up() -> None:
    """2049 ports: 161 switches x 2 U = 322 U -> ceil(322 / 42) = 8 racks; at 42 U each, 161 racks."""
    assert size_fabric("sw", make_switch(), 2049 * 100.0, 0).network_racks == 8
    assert size_fabric("sw", make_switch(rack_units=42), 2049 * 100.0, 0).network_racks == 161


def test_size_fabric_zero_ports() -> None:
    """No scale-out bandwidth: no tiers, switches, switch optics or racks.
    Rack-side optics still draw power."""
    fab = size_fabric("sw", make_switch(), 0.0, 0)
    assert (fab.ports, fab.tiers, fab.switches) == (0, 0, 0)
    assert (fab.switch_optics, fab.optics, fab.network_racks) == (0, 0, 0)
    assert fab.it_power_kw == 0
    fab = size_fabric("sw", make_switch(), 0.0, 4)
    assert (fab.switches, fab.optics, fab.network_racks) == (0, 4, 0)
    assert fab.it_power_kw == pytest.approx(4 * 15 / 1000)


def test_size_fabric_radix_from_bandwidth() -> None:
    """51.2T of 400G ports is radix 128: 129 ports need 2 tiers,
    ceil(3 x 129 / 128) = ceil(3.02) = 4 switches."""
    sw = make_switch(bandwidth_gbps=51200, port_gbps=400)
    fab = size_fabric("big", sw, 129 * 400.0, 0)
    assert (fab.radix, fab.ports, fab.tiers, fab.switches) == (128, 129, 2, 4)
