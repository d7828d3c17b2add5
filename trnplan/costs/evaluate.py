"""Evaluate one period's installed base: every figure a plan states of it (BOM lines to the cent, power,
fabric, opex), computed from its deployments and each site's scale-out switch alone, and its TCO held over
the scenario's horizon (a scenario without periods: its plan's figures; `window` charges a phased plan's
periods)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from trnplan.catalog import Catalog, Scenario
from trnplan.costs.fabric import FabricSize, size_fabric
from trnplan.costs.figures import BomLine, Totals
from trnplan.costs.options import (
    KW_LINE_CATEGORIES,
    NO_SWITCH,
    Deployment,
    kw_lines,
    make_option,
    network_rack_limit_kw,
    option_efficiency,
    option_lines,
)
from trnplan.costs.rates import (
    OPEX_FIGURES,
    maintenance_usd_per_year,
    opex_usd_per_year,
    residual_usd_per_year,
    site_opex_usd_per_year,
    stated_opex,
    usd_per_hour,
    window_tco_usd,
)
from trnplan.numbers import cents


@dataclass(frozen=True)
class DeploymentFigures:
    deployment: Deployment
    racks: int
    chips: int
    domains: int
    it_power_kw: float
    fp8_pflops: float
    hbm_tb: float
    capex_usd: float
    efficiency: float = 1.0
    effective_fp8_pflops: float = 0.0
    efficiency_source: str | None = None  # with a workload's job: `model` or the rule that matched
    mfu: float | None = None  # the performance model's, where it gave the efficiency
    goodput: float | None = None


@dataclass(frozen=True)
class SiteFigures:
    site: str
    deployments: list[DeploymentFigures]
    fabric: FabricSize | None
    fabric_capex_usd: float
    cooling_used: list[str]
    compute_racks: int
    it_power_kw: float
    facility_power_kw: float
    capex_usd: float
    opex_usd_per_year: float
    utilization: dict[str, float]
    opex_figures: dict[str, float] = field(default_factory=dict)
    """The site's opex categories per year, by OPEX_FIGURES name (`rates.site_opex_usd_per_year`)."""
    kw_by_cooling: dict[str, float] = field(default_factory=dict)
    """IT kW (compute and network) by the cooling type that removes its heat."""

    def opex_figure(self, name: str) -> float:
        """One opex category's USD per year; 0 where the site has none of it."""
        return self.opex_figures.get(name, 0.0)

    @property
    def energy_usd_per_year(self) -> float:
        return self.opex_figure("energy_usd_per_year")

    @property
    def colocation_usd_per_year(self) -> float:
        return self.opex_figure("colocation_usd_per_year")


@dataclass(frozen=True)
class Evaluation:
    """Everything a plan states, computed from decisions alone."""

    sites: dict[str, SiteFigures]
    bom: list[BomLine]
    totals: Totals
    supply_used: dict[str, int] = field(default_factory=dict)


RawLine = tuple[str, str, str, float, float, float | None, float | None]
"""(site, category, item, quantity, unit_usd, it_kw, life_years) before equal lines are merged and priced."""


def _merge_lines(raw: Iterable[RawLine]) -> list[BomLine]:
    """Merge equal (site, category, item, unit price) lines, then price each merged line to the cent."""
    qty: dict[tuple[str, str, str, float], float] = defaultdict(float)
    kw: dict[tuple[str, str, str, float], float] = defaultdict(float)
    has_kw: set[tuple[str, str, str, float]] = set()
    lives: dict[tuple[str, str, str, float], float] = {}
    for site, category, item, quantity, unit_usd, it_kw, life in raw:
        key = (site, category, item, unit_usd)
        qty[key] += quantity
        if it_kw is not None:
            kw[key] += it_kw
            has_kw.add(key)
        if life is not None:
            lives[key] = life
    lines = []
    for key in sorted(qty):
        site, category, item, unit_usd = key
        q = round(qty[key], 6)
        if q == 0:
            continue
        lines.append(
            BomLine(
                site=site,
                category=category,
                item=item,
                quantity=q,
                unit_usd=unit_usd,
                extended_usd=cents(q * unit_usd) / 100,
                it_kw=round(kw[key], 6) if key in has_kw else None,
                life_years=lives.get(key),
            )
        )
    return lines


@dataclass
class _SiteLoad:
    """What a site's deployments add up to before its fabric is sized (filled by `_add_deployments`)."""

    figures: list[DeploymentFigures] = field(default_factory=list)
    kw_by_cooling: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    gbps: float = 0.0
    endpoint_optics: int = 0
    copper_links: int = 0
    copper_kw: float = 0.0
    compute_racks: int = 0
    capex_usd: float = 0.0


def _add_deployments(
    catalog: Catalog,
    scenario: Scenario,
    deployments: list[Deployment],
    raw_lines: list[RawLine],
    supply: dict[str, int],
) -> _SiteLoad:
    """Each deployment's BOM lines and figures, and the site's load by cooling, fabric and supply."""
    load = _SiteLoad()
    for d in sorted(deployments):
        eff = option_efficiency(catalog, scenario, d.form, d.scale_up_switch)
        opt = make_option(catalog, d.form, d.cooling, d.scale_up_switch, eff.value, d.site)
        with_job = scenario.workload is not None and catalog.workloads[scenario.workload].job is not None
        n = d.units
        dep_capex = 0.0
        lines = option_lines(catalog, d.form, d.cooling, d.scale_up_switch, d.site)
        for category, item, quantity, unit_usd, life in lines:
            is_kw = category in KW_LINE_CATEGORIES
            raw_lines.append(
                (d.site, category, item, quantity * n, unit_usd, quantity * n if is_kw else None, life)
            )
            dep_capex += cents(quantity * n * unit_usd) / 100
        load.figures.append(
            DeploymentFigures(
                d,
                opt.racks * n,
                opt.chips * n,
                opt.domains * n,
                opt.it_kw * n,
                opt.fp8_pflops * n,
                opt.hbm_tb * n,
                dep_capex,
                opt.efficiency,
                opt.effective_fp8_pflops * n,
                eff.source if with_job else None,
                eff.mfu,
                eff.goodput,
            )
        )
        load.kw_by_cooling[d.cooling] += opt.it_kw * n
        load.gbps += opt.scale_out_gbps * n
        load.endpoint_optics += opt.endpoint_optics * n
        load.copper_links += opt.copper_links * n
        load.copper_kw += opt.copper_kw * n
        load.compute_racks += opt.racks * n
        load.capex_usd += dep_capex
        supply[opt.chip] += opt.chips * n
        supply[d.form] += n
        if d.scale_up_switch != NO_SWITCH:
            supply[d.scale_up_switch] += opt.scale_up_switches * n
    return load


def _add_fabric(
    catalog: Catalog,
    scenario: Scenario,
    site_id: str,
    switch_id: str,
    load: _SiteLoad,
    raw_lines: list[RawLine],
) -> tuple[FabricSize, float]:
    """Size the site's fabric on its load; add its lines (switches, optics, network rack kits, the capex
    per kW of their cooling and each cooling type's one-off fit-out) and return it with its capex."""
    site = catalog.sites[site_id]
    fabric = scenario.fabric
    switch = catalog.switches[switch_id]
    rack_limit = network_rack_limit_kw(catalog, scenario, site_id)
    copper = (load.copper_links, load.copper_kw)
    fab = size_fabric(
        switch_id, switch, load.gbps, load.endpoint_optics, rack_limit, fabric.oversubscription, copper
    )
    fabric_capex = 0.0
    life = switch.life_years
    fabric_lines: list[RawLine] = [
        (
            site_id,
            "scale_out",
            f"{switch.name or switch_id} ({switch_id})",
            fab.switches,
            switch.unit_usd,
            None,
            life,
        ),
        (site_id, "optics", f"scale-out optics ({switch_id})", fab.optics, switch.optic_usd, None, life),
    ]
    if fabric.rack_usd:
        kit = (site_id, "network", "network rack kit", fab.network_racks, fabric.rack_usd, None, None)
        fabric_lines.append(kit)
    fabric_lines.extend(
        (site_id, category, item, fab.it_power_kw, unit, fab.it_power_kw, kw_life)
        for category, item, unit, kw_life in kw_lines(catalog, site_id, fabric.cooling)
    )
    for line in fabric_lines:
        raw_lines.append(line)
        fabric_capex += line[3] * line[4]
    load.kw_by_cooling[fabric.cooling] += fab.it_power_kw
    for q in sorted(q for q, kw in load.kw_by_cooling.items() if kw > 0):
        fixed = site.cooling_fixed_usd.get(q, 0.0)
        if fixed:
            raw_lines.append((site_id, "site", f"{q} cooling fit-out, one-off", 1, fixed, None, None))
            fabric_capex += fixed
    return fab, fabric_capex


def _share(used: float, limit: float) -> float:
    """used / limit; a closed hall (limit 0: a schedule before its first entry) holding anything reads as
    the amount itself, finite, and its constraint row reports the violation."""
    return used / limit if limit > 0 else float(used)


def _site_figures(
    catalog: Catalog,
    scenario: Scenario,
    site_id: str,
    load: _SiteLoad,
    fab: FabricSize,
    fabric_capex: float,
) -> SiteFigures:
    """A site's power, opex categories and use of its limits."""
    site = catalog.sites[site_id]
    kw_by_cooling = load.kw_by_cooling
    site_capex = load.capex_usd + fabric_capex
    it_kw = sum(kw_by_cooling.values())
    facility_kw = sum(kw * catalog.cooling[q].pue for q, kw in kw_by_cooling.items())
    opex_figures = site_opex_usd_per_year(
        site, scenario, [(kw, catalog.cooling[q].pue, q) for q, kw in kw_by_cooling.items()]
    )
    positions = load.compute_racks + fab.network_racks
    utilization = {
        "it_power": _share(it_kw, catalog.usable_it_power_mw(site) * 1000),
        "rack_positions": _share(positions, site.rack_positions),
    }
    if site.grid_power_mw is not None:
        utilization["grid_power"] = _share(facility_kw, site.grid_power_mw * 1000)
    return SiteFigures(
        site=site_id,
        deployments=load.figures,
        fabric=fab,
        fabric_capex_usd=fabric_capex,
        cooling_used=sorted(q for q, kw in kw_by_cooling.items() if kw > 0),
        compute_racks=load.compute_racks,
        it_power_kw=it_kw,
        facility_power_kw=facility_kw,
        capex_usd=site_capex,
        opex_usd_per_year=opex_usd_per_year(scenario, opex_figures.values(), site_capex),
        utilization=utilization,
        opex_figures=opex_figures,
        kw_by_cooling=dict(sorted(kw_by_cooling.items())),
    )


def price_sites(sites: dict[str, SiteFigures], bom: list[BomLine], scenario: Scenario) -> None:
    """A site's capex is the sum of its own BOM lines, to the cent (maintenance follows it), and its
    residual category that of its lines with lives of their own (`rates.residual_usd_per_year`)."""
    site_cents: dict[str, int] = defaultdict(int)
    lives: dict[str, list[tuple[float | None, float]]] = defaultdict(list)
    for line in bom:
        site_cents[line.site] += cents(line.extended_usd)
        if line.life_years is not None:
            lives[line.site].append((line.life_years, line.extended_usd))
    for site_id, fig in list(sites.items()):
        site_capex = site_cents[site_id] / 100
        residual = residual_usd_per_year(scenario, lives[site_id])
        figures = {**fig.opex_figures, "residual_usd_per_year": residual}
        opex = opex_usd_per_year(scenario, figures.values(), site_capex)
        sites[site_id] = replace(fig, capex_usd=site_capex, opex_usd_per_year=opex, opex_figures=figures)


def _totals(scenario: Scenario, sites: dict[str, SiteFigures], capex: float) -> Totals:
    """Totals of the installed base: sums over sites, opex per year, and held over the scenario's horizon
    (one period), TCO = horizon x (capex x CRF + opex) and the per-hour costs."""
    by_figure = {name: sum(s.opex_figure(name) for s in sites.values()) for name in OPEX_FIGURES}
    maintenance = maintenance_usd_per_year(scenario, capex)
    opex = opex_usd_per_year(scenario, by_figure.values(), capex)
    years = scenario.horizon_years
    tco = window_tco_usd(scenario, [(years, capex, opex)])
    all_deps = [f for s in sites.values() for f in s.deployments]
    chips = sum(f.chips for f in all_deps)
    pflops = sum(f.fp8_pflops for f in all_deps)
    return Totals(
        chips=chips,
        units=sum(f.deployment.units for f in all_deps),
        domains=sum(f.domains for f in all_deps),
        racks=sum(s.compute_racks for s in sites.values()),
        network_racks=sum(s.fabric.network_racks for s in sites.values() if s.fabric),
        fp8_pflops=pflops,
        hbm_tb=sum(f.hbm_tb for f in all_deps),
        it_power_kw=sum(s.it_power_kw for s in sites.values()),
        facility_power_kw=sum(s.facility_power_kw for s in sites.values()),
        capex_usd=capex,
        opex_usd_per_year=opex,
        maintenance_usd_per_year=maintenance,
        tco_usd=tco,
        usd_per_pflop_hour=usd_per_hour(tco, [(years, pflops)]),
        usd_per_chip_hour=usd_per_hour(tco, [(years, chips)]),
        **stated_opex(by_figure),
        **_effective_totals(scenario, all_deps, tco),
    )


def _effective_totals(scenario: Scenario, deps: list[DeploymentFigures], tco: float) -> dict[str, float]:
    """Effective FP8 PFLOPs and $/effective-PFLOP-hour, stated only when the scenario names a workload."""
    if scenario.workload is None:
        return {}
    effective = sum(f.effective_fp8_pflops for f in deps)
    return {
        "effective_fp8_pflops": effective,
        "usd_per_effective_pflop_hour": usd_per_hour(tco, [(scenario.horizon_years, effective)]),
    }


def evaluate(
    catalog: Catalog, scenario: Scenario, deployments: Iterable[Deployment], scale_out: Mapping[str, str]
) -> Evaluation:
    """Compute every figure of a plan from its deployments and each site's scale-out switch."""
    by_site: dict[str, list[Deployment]] = defaultdict(list)
    for d in deployments:
        if d.units > 0:
            by_site[d.site].append(d)
    raw_lines: list[RawLine] = []
    sites: dict[str, SiteFigures] = {}
    supply: dict[str, int] = defaultdict(int)
    for site_id in sorted(by_site):
        load = _add_deployments(catalog, scenario, by_site[site_id], raw_lines, supply)
        fab, fabric_capex = _add_fabric(catalog, scenario, site_id, scale_out[site_id], load, raw_lines)
        supply[fab.switch] += fab.switches
        sites[site_id] = _site_figures(catalog, scenario, site_id, load, fab, fabric_capex)
    bom = _merge_lines(raw_lines)
    capex = sum(cents(line.extended_usd) for line in bom) / 100
    price_sites(sites, bom, scenario)
    return Evaluation(sites=sites, bom=bom, totals=_totals(scenario, sites, capex), supply_used=dict(supply))
