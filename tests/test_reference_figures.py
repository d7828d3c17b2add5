"""Published reference designs the model must reproduce through its own code (costs.fabric, costs).

- NVIDIA DGX SuperPOD B200 RA (RA-11334), "Larger DGX SuperPOD component counts": 8 NDR 400G rails per
  32-node SU on QM9700 (64 x 400G) switches; 2 SU = 512 GPUs: 16 leaf + 8 spine; 4 SU 32 + 16; 8 SU 64 + 32;
  16 SU = 4,096 GPUs: 128 leaf + 128 spine + 64 core; 32 SU 256 + 256 + 128; 64 SU 512 + 512 + 256.
  https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/dgx-superpod-architecture.html
- NVIDIA DGX SuperPOD B300 with Quantum-X800 (Q3400, 144 x 800G) RA, Table 3: 1 SU = 576 GPUs: 8 leaf + 4
  spine; 2 SU 16 + 8; 4 SU 32 + 18; 8 SU 64 + 36; 18 SU = 9,216 GPUs: 144 + 72 with 10,368 cables per layer.
  https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html
- NVIDIA GB300 NVL72 enterprise RA: "up to 142 kW per rack", 8 power shelves x 33 kW, 9 NVLink switch trays.
- AWS Neuron trn3-arch: Gen2 UltraServer = 36 servers x 4 Trainium3 (2 racks x 18), first-level switch in a
  server and second level across servers, 362 PF MXFP8, 705.6 TB/s, EFA 28.8 Tb/s (200 Gb/s per chip);
  Gen1 = 4 servers x 16, 161 PF, 313.6 TB/s, EFA 12.8 Tb/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trnplan.catalog import Catalog, Switch
from trnplan.costs import make_option
from trnplan.costs.fabric import size_fabric, switches_by_tier, tier_capacity
from trnplan.specs.load import load_specs

SPECS = Path(__file__).resolve().parent.parent / "specs"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_specs([SPECS])


def ib_switch(bandwidth_gbps: float, port_gbps: float) -> Switch:
    """A reference InfiniBand switch (not in the shipped catalog): only its radix matters here."""
    return Switch(
        role="scale_out",
        protocol="infiniband",
        bandwidth_gbps=bandwidth_gbps,
        port_gbps=port_gbps,
        rack_units=1,
        power_w=0,
        unit_usd=0,
        available_from="2024-01",
        sources=["NVIDIA DGX SuperPOD reference architectures"],
    )


QM9700 = ib_switch(64 * 400, 400)  # NDR: 64 ports of 400G
Q3400 = ib_switch(144 * 800, 800)  # XDR: 144 ports of 800G


@pytest.mark.parametrize(
    ("gpus", "by_tier"),
    [
        (512, [16, 8]),
        (1024, [32, 16]),
        (2048, [64, 32]),
        (4096, [128, 128, 64]),
        (8192, [256, 256, 128]),
        (16384, [512, 512, 256]),
    ],
)
def test_dgx_superpod_b200_switch_counts(gpus: int, by_tier: list[int]) -> None:
    """One 400G port per GPU on 64-port switches: the folded Clos gives NVIDIA's counts exactly, tier by tier
    (2,048 GPUs fill two tiers, 2 x 32^2; 4,096 need a core tier); its optics are 2 per cable."""
    fabric = size_fabric("qm9700", QM9700, gpus * 400, endpoint_optics=gpus)
    assert fabric.radix == 64 and fabric.ports == gpus
    assert fabric.tiers == len(by_tier)
    assert switches_by_tier(fabric.ports, fabric.radix, fabric.tiers) == by_tier
    assert fabric.switches == sum(by_tier)
    cables = gpus * fabric.tiers  # node-leaf, leaf-spine (and spine-core): one per GPU per layer
    assert fabric.optics == 2 * cables


@pytest.mark.parametrize(
    ("gpus", "leaf", "spine"),
    [(576, 8, 4), (1152, 16, 8), (2304, 32, 18), (4608, 64, 36)],
)
def test_dgx_superpod_b300_xdr_switch_counts(gpus: int, leaf: int, spine: int) -> None:
    """One 800G port per GPU on 144-port switches. Leaves match exactly; spines match where the leaves' 72
    uplinks split evenly over them (1 and 2 SU), else NVIDIA rounds up to the next divisor of 72 (16 -> 18,
    32 -> 36) so every leaf has the same number of links to every spine: the formula is its floor."""
    fabric = size_fabric("q3400", Q3400, gpus * 800, endpoint_optics=gpus)
    assert fabric.radix == 144 and fabric.tiers == 2
    our_leaf, our_spine = switches_by_tier(fabric.ports, fabric.radix, fabric.tiers)
    assert our_leaf == leaf
    uplinks = fabric.radix // 2
    assert spine == min(d for d in range(our_spine, uplinks + 1) if uplinks % d == 0)
    if spine == our_spine:
        assert fabric.switches == leaf + spine


def test_dgx_superpod_b300_xdr_largest() -> None:
    """18 SU = 9,216 GPUs: NVIDIA builds the full two-tier fabric, 2 x 72^2 = 10,368 ports (144 leaf + 72
    spine, 10,368 cables per layer); the formula needs two tiers too and no more than that fabric."""
    assert tier_capacity(144, 2) == 10368
    full = switches_by_tier(10368, 144, 2)
    assert full == [144, 72]
    fabric = size_fabric("q3400", Q3400, 9216 * 800, endpoint_optics=9216)
    assert fabric.tiers == 2 and fabric.switches <= sum(full)


def test_gb300_nvl72_up_to_142_kw(catalog: Catalog) -> None:
    """GB300 NVL72: 72 x 1.4 kW + overhead + 9 NVLink trays = 142 kW, within 8 shelves x 33 kW."""
    option = make_option(catalog, "gb300-nvl72", "liquid", "nvlink5-tray")
    assert option.rack_it_kw == pytest.approx(142)
    assert option.scale_up_switches == 9
    shelves = next(b for b in catalog.forms["gb300-nvl72"].rack_bom if b.category == "power")
    assert option.rack_it_kw <= shelves.qty * 33
    assert option.rack_it_kw <= catalog.cooling["liquid"].max_rack_kw


@pytest.mark.parametrize(
    ("form_id", "cooling", "switch", "chips", "servers", "pflops", "hbm_tbps", "efa_tbps"),
    [
        ("trn3-nl72x2", "liquid", "pcie6-160", 144, 36, 362.4, 705.6, 28.8),
        ("trn3-nl32x2", "air", "pcie6-160", 64, 4, 161.1, 313.6, 12.8),
    ],
)
def test_aws_ultraserver_figures(
    catalog: Catalog,
    form_id: str,
    cooling: str,
    switch: str,
    chips: int,
    servers: int,
    pflops: float,
    hbm_tbps: float,
    efa_tbps: float,
) -> None:
    """An UltraServer as the model plans it: chips, compute and EFA bandwidth per unit, and its servers."""
    option = make_option(catalog, form_id, cooling, switch)
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    assert option.chips == chips == form.domain_chips and option.domains == 1
    assert option.fp8_pflops == pytest.approx(pflops, abs=0.1)
    assert chips * round(chip.hbm_bandwidth_tbps, 1) == pytest.approx(hbm_tbps)
    assert option.scale_out_gbps / 1000 == pytest.approx(efa_tbps)
    assert option.copper_links == chips and option.endpoint_optics == 0  # one 200G AEC per chip to its leaf
    assert chips // servers in (4, 16)  # Gen2 blade: 4 chips; Gen1 server: 16


def test_aws_gen2_two_switch_levels(catalog: Catalog) -> None:
    """Gen2 (NL72x2): 18 four-chip blades per rack, and scale-up switches for two levels of lanes (twice the
    one-level lane floor of Gen1)."""
    nl72, nl32 = catalog.forms["trn3-nl72x2"], catalog.forms["trn3-nl32x2"]
    blades = next(b for b in nl72.rack_bom if b.category == "compute")
    assert blades.qty * 4 == nl72.chips_per_rack
    lanes = catalog.chips["trn3"].scale_up.lanes
    for form, levels in ((nl72, 2), (nl32, 1)):
        for opt in form.scale_up:
            switch_lanes = catalog.switches[opt.switch].lanes or 0
            assert opt.per_rack == -(-levels * form.chips_per_rack * lanes // switch_lanes), opt.switch
