"""The cost model: the one place that turns deployment decisions into money, power and space.

The optimizer takes its coefficients from here (`Option`, `tco_per_capex_usd`, `opex_usd_per_kw_year`),
and `evaluate` computes a whole plan from decisions alone, for the plan file, `check_plan`, the BOM
and the tests' brute-force oracle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from trnplan.catalog import HOURS_PER_YEAR, Catalog, Scenario, Site, month_leq, rack_it_kw
from trnplan.fabric import FabricSize, size_fabric

NO_SWITCH = "none"  # scale-up "switch" of torus forms


def crf(rate: float, years: int) -> float:
    """Capital recovery factor r(1+r)^n / ((1+r)^n - 1); 1/n when r = 0."""
    if rate == 0:
        return 1.0 / years
    growth = (1 + rate) ** years
    return rate * growth / (growth - 1)


def tco_per_capex_usd(scenario: Scenario) -> float:
    """TCO per USD of capex: horizon x (CRF + maintenance_rate)."""
    return scenario.horizon_years * (
        crf(scenario.cost_of_capital, scenario.horizon_years) + scenario.maintenance_rate
    )


def energy_usd_per_kw_year(site: Site, pue: float, scenario: Scenario) -> float:
    """Energy per IT kW-year: utilization x PUE x 8760 x $/kWh."""
    return scenario.utilization * pue * HOURS_PER_YEAR * site.electricity_usd_per_kwh


def colocation_usd_per_kw_year(site: Site) -> float:
    """Colocation per IT kW-year: $/kW-month x 12."""
    return site.colocation_usd_per_kw_month * 12


def opex_usd_per_kw_year(site: Site, pue: float, scenario: Scenario) -> float:
    """Energy plus colocation per IT kW-year (maintenance is a share of capex, not per kW)."""
    return energy_usd_per_kw_year(site, pue, scenario) + colocation_usd_per_kw_year(site)


def cents(usd: float) -> int:
    return round(usd * 100)


@dataclass(frozen=True, order=True)
class Deployment:
    """n units of a form with a cooling and a scale-up switch at a site: the decision the MILP makes."""

    site: str
    form: str
    cooling: str
    scale_up_switch: str
    units: int


@dataclass(frozen=True)
class Option:
    """Per-unit figures of one (form, cooling, scale-up switch) choice: the MILP's coefficients."""

    form: str
    cooling: str
    scale_up_switch: str
    chip: str
    racks: int
    chips: int
    domains: int
    rack_it_kw: float
    it_kw: float
    fp8_pflops: float
    hbm_tb: float
    scale_out_gbps: float
    endpoint_optics: int
    scale_up_switches: int
    capex_usd: float  # chips, rack kits, scale-up switches and cooling capacity; not the fabric

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.form, self.cooling, self.scale_up_switch)


def option_lines(
    catalog: Catalog, form_id: str, cooling_id: str, switch_id: str
) -> list[tuple[str, str, float, float]]:
    """Per-unit BOM lines (category, item, quantity, unit_usd) of an option, fabric excluded."""
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    racks = form.racks_per_unit
    lines: list[tuple[str, str, float, float]] = [
        ("chips", f"{chip.name} ({form.chip})", form.unit_chips, chip.unit_usd)
    ]
    for item in form.rack_bom:
        lines.append((item.category, f"{item.item} ({form_id})", item.qty * racks, item.unit_usd))
    if switch_id != NO_SWITCH:
        per_rack = next(o.per_rack for o in form.scale_up if o.switch == switch_id)
        switch = catalog.switches[switch_id]
        if per_rack:
            lines.append(
                ("scale_up", f"{switch.name or switch_id} ({switch_id})", per_rack * racks, switch.unit_usd)
            )
    cooling = catalog.cooling[cooling_id]
    kw = racks * option_rack_kw(catalog, form_id, switch_id)
    lines.append(
        (
            "cooling",
            f"{cooling.name or cooling_id} cooling capacity, kW ({cooling_id})",
            kw,
            cooling.capex_usd_per_kw,
        )
    )
    return lines


def option_rack_kw(catalog: Catalog, form_id: str, switch_id: str) -> float:
    form = catalog.forms[form_id]
    if switch_id == NO_SWITCH:
        return rack_it_kw(form, catalog.chips[form.chip], None, 0)
    per_rack = next(o.per_rack for o in form.scale_up if o.switch == switch_id)
    return rack_it_kw(form, catalog.chips[form.chip], catalog.switches[switch_id], per_rack)


def make_option(catalog: Catalog, form_id: str, cooling_id: str, switch_id: str) -> Option:
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    racks = form.racks_per_unit
    rack_kw = option_rack_kw(catalog, form_id, switch_id)
    per_rack = (
        0 if switch_id == NO_SWITCH else next(o.per_rack for o in form.scale_up if o.switch == switch_id)
    )
    capex = sum(qty * unit for _, _, qty, unit in option_lines(catalog, form_id, cooling_id, switch_id))
    return Option(
        form=form_id,
        cooling=cooling_id,
        scale_up_switch=switch_id,
        chip=form.chip,
        racks=racks,
        chips=form.unit_chips,
        domains=form.unit_chips // form.domain_chips,
        rack_it_kw=rack_kw,
        it_kw=racks * rack_kw,
        fp8_pflops=form.unit_chips * chip.fp8_tflops / 1000,
        hbm_tb=form.unit_chips * chip.hbm_capacity_gb / 1000,
        scale_out_gbps=form.unit_chips * chip.scale_out_gbps,
        endpoint_optics=racks * form.optics_per_rack,
        scale_up_switches=per_rack * racks,
        capex_usd=capex,
    )


def option_problems(
    catalog: Catalog, scenario: Scenario, site_id: str, form_id: str, cooling_id: str, switch_id: str
) -> list[str]:
    """Why an option may not be used at a site under a scenario, in words; [] when it may."""
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    site = catalog.sites[site_id]
    cooling = catalog.cooling[cooling_id]
    why = []
    if scenario.forms is not None and form_id not in scenario.forms:
        why.append(f"form {form_id} is not among the scenario's forms")
    if scenario.chips is not None and form.chip not in scenario.chips:
        why.append(f"chip {form.chip} is not among the scenario's chips")
    if not month_leq(chip.available_from, scenario.as_of):
        why.append(f"chip {form.chip} is available from {chip.available_from}, after as_of {scenario.as_of}")
    if cooling_id not in form.cooling:
        why.append(f"form {form_id} does not support {cooling_id} cooling")
    if cooling_id not in site.cooling:
        why.append(f"site {site_id} has no {cooling_id} cooling")
    if scenario.fabric.cooling not in site.cooling:
        why.append(
            f"site {site_id} has no {scenario.fabric.cooling} cooling "
            "for the scale-out network (fabric.cooling)"
        )
    if form.domain_chips < scenario.min_domain_chips:
        why.append(
            f"form {form_id} has {form.domain_chips}-chip domains, "
            f"under min_domain_chips {scenario.min_domain_chips}"
        )
    if switch_id != NO_SWITCH:
        switch = catalog.switches[switch_id]
        if not month_leq(switch.available_from, scenario.as_of):
            why.append(
                f"switch {switch_id} is available from {switch.available_from}, after as_of {scenario.as_of}"
            )
    kw = option_rack_kw(catalog, form_id, switch_id)
    if kw > cooling.max_rack_kw + 1e-9:
        why.append(
            f"a {form_id} rack draws {kw:g} kW, over {cooling_id} cooling's {cooling.max_rack_kw:g} kW"
        )
    if site.max_rack_kw is not None and kw > site.max_rack_kw + 1e-9:
        why.append(
            f"a {form_id} rack draws {kw:g} kW, over site {site_id}'s {site.max_rack_kw:g} kW per rack"
        )
    return why


def network_rack_limit_kw(catalog: Catalog, scenario: Scenario, site_id: str) -> float:
    """kW a network rack may draw: the fabric cooling's rack limit, and the site's where it has one."""
    limit = catalog.cooling[scenario.fabric.cooling].max_rack_kw
    site_limit = catalog.sites[site_id].max_rack_kw
    return min(limit, site_limit) if site_limit is not None else limit


def scale_up_choices(catalog: Catalog, form_id: str) -> list[str]:
    form = catalog.forms[form_id]
    return sorted(o.switch for o in form.scale_up) if form.scale_up else [NO_SWITCH]


def all_options(catalog: Catalog) -> list[tuple[str, str, str]]:
    """Every (form, cooling, scale-up switch) the catalog describes, sorted."""
    return [
        (f, q, u)
        for f in sorted(catalog.forms)
        for q in sorted(catalog.forms[f].cooling)
        for u in scale_up_choices(catalog, f)
    ]


def site_options(catalog: Catalog, scenario: Scenario, site_id: str) -> list[Option]:
    """The options a site may use under a scenario, sorted by key."""
    return [
        make_option(catalog, f, q, u)
        for f, q, u in all_options(catalog)
        if not option_problems(catalog, scenario, site_id, f, q, u)
    ]


def scale_out_problems(catalog: Catalog, scenario: Scenario, switch_id: str) -> list[str]:
    switch = catalog.switches[switch_id]
    if switch.role != "scale_out":
        return [f"switch {switch_id} is not a scale-out switch"]
    if not month_leq(switch.available_from, scenario.as_of):
        return [f"switch {switch_id} is available from {switch.available_from}, after as_of {scenario.as_of}"]
    return []


def scale_out_switches(catalog: Catalog, scenario: Scenario) -> list[str]:
    return [s for s in sorted(catalog.switches) if not scale_out_problems(catalog, scenario, s)]


@dataclass(frozen=True)
class BomLine:
    """One priced line: quantity x unit_usd = extended_usd, to the cent; the BOM report sets `share`."""

    site: str
    category: str
    item: str
    quantity: float
    unit_usd: float
    extended_usd: float
    it_kw: float | None = None
    share: float = 0.0


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
    energy_usd_per_year: float = 0.0
    colocation_usd_per_year: float = 0.0


@dataclass(frozen=True)
class Evaluation:
    """Everything a plan states, computed from decisions alone."""

    sites: dict[str, SiteFigures]
    bom: list[BomLine]
    totals: dict[str, float]
    supply_used: dict[str, int] = field(default_factory=dict)


def _merge_lines(raw: Iterable[tuple[str, str, str, float, float, float | None]]) -> list[BomLine]:
    """Merge equal (site, category, item, unit price) lines, then price each merged line to the cent."""
    qty: dict[tuple[str, str, str, float], float] = defaultdict(float)
    kw: dict[tuple[str, str, str, float], float] = defaultdict(float)
    has_kw: set[tuple[str, str, str, float]] = set()
    for site, category, item, quantity, unit_usd, it_kw in raw:
        key = (site, category, item, unit_usd)
        qty[key] += quantity
        if it_kw is not None:
            kw[key] += it_kw
            has_kw.add(key)
    lines = []
    for key in sorted(qty):
        site, category, item, unit_usd = key
        q = round(qty[key], 6)
        if q == 0:
            continue
        lines.append(
            BomLine(
                site,
                category,
                item,
                q,
                unit_usd,
                cents(q * unit_usd) / 100,
                round(kw[key], 6) if key in has_kw else None,
            )
        )
    return lines


def evaluate(
    catalog: Catalog, scenario: Scenario, deployments: Iterable[Deployment], scale_out: Mapping[str, str]
) -> Evaluation:
    """Compute every figure of a plan from its deployments and each site's scale-out switch."""
    by_site: dict[str, list[Deployment]] = defaultdict(list)
    for d in deployments:
        if d.units > 0:
            by_site[d.site].append(d)
    fabric_cooling_id = scenario.fabric.cooling
    fabric_cooling = catalog.cooling[fabric_cooling_id]
    raw_lines: list[tuple[str, str, str, float, float, float | None]] = []
    sites: dict[str, SiteFigures] = {}
    supply: dict[str, int] = defaultdict(int)
    opex_rate_capex = scenario.maintenance_rate
    for site_id in sorted(by_site):
        site = catalog.sites[site_id]
        figures = []
        kw_by_cooling: dict[str, float] = defaultdict(float)
        gbps = 0.0
        endpoint_optics = 0
        compute_racks = 0
        site_capex = 0.0
        for d in sorted(by_site[site_id]):
            opt = make_option(catalog, d.form, d.cooling, d.scale_up_switch)
            n = d.units
            dep_capex = 0.0
            for category, item, quantity, unit_usd in option_lines(
                catalog, d.form, d.cooling, d.scale_up_switch
            ):
                is_kw = category == "cooling"
                raw_lines.append(
                    (site_id, category, item, quantity * n, unit_usd, quantity * n if is_kw else None)
                )
                dep_capex += cents(quantity * n * unit_usd) / 100
            figures.append(
                DeploymentFigures(
                    d,
                    opt.racks * n,
                    opt.chips * n,
                    opt.domains * n,
                    opt.it_kw * n,
                    opt.fp8_pflops * n,
                    opt.hbm_tb * n,
                    dep_capex,
                )
            )
            kw_by_cooling[d.cooling] += opt.it_kw * n
            gbps += opt.scale_out_gbps * n
            endpoint_optics += opt.endpoint_optics * n
            compute_racks += opt.racks * n
            site_capex += dep_capex
            supply[opt.chip] += opt.chips * n
            supply[d.form] += n
            if d.scale_up_switch != NO_SWITCH:
                supply[d.scale_up_switch] += opt.scale_up_switches * n
        switch_id = scale_out[site_id]
        switch = catalog.switches[switch_id]
        rack_limit = network_rack_limit_kw(catalog, scenario, site_id)
        fab = size_fabric(switch_id, switch, gbps, endpoint_optics, rack_limit)
        supply[switch_id] += fab.switches
        fabric_capex = 0.0
        fabric_lines = [
            ("scale_out", f"{switch.name or switch_id} ({switch_id})", fab.switches, switch.unit_usd, None),
            ("optics", f"scale-out optics ({switch_id})", fab.optics, switch.optic_usd, None),
            (
                "cooling",
                f"{fabric_cooling.name or fabric_cooling_id} cooling capacity, kW ({fabric_cooling_id})",
                fab.it_power_kw,
                fabric_cooling.capex_usd_per_kw,
                fab.it_power_kw,
            ),
        ]
        for category, item, quantity, unit_usd, it_kw in fabric_lines:
            raw_lines.append((site_id, category, item, quantity, unit_usd, it_kw))
            fabric_capex += quantity * unit_usd
        kw_by_cooling[fabric_cooling_id] += fab.it_power_kw
        cooling_used = sorted(q for q, kw in kw_by_cooling.items() if kw > 0)
        for q in cooling_used:
            fixed = site.cooling_fixed_usd.get(q, 0.0)
            if fixed:
                raw_lines.append((site_id, "site", f"{q} cooling fit-out, one-off", 1, fixed, None))
                fabric_capex += fixed
        site_capex += fabric_capex
        it_kw = sum(kw_by_cooling.values())
        facility_kw = sum(kw * catalog.cooling[q].pue for q, kw in kw_by_cooling.items())
        energy = sum(
            kw * energy_usd_per_kw_year(site, catalog.cooling[q].pue, scenario)
            for q, kw in kw_by_cooling.items()
        )
        colocation = it_kw * colocation_usd_per_kw_year(site)
        positions = compute_racks + fab.network_racks
        utilization = {
            "it_power": it_kw / site.it_power_kw,
            "rack_positions": positions / site.rack_positions,
        }
        if site.grid_power_mw is not None:
            utilization["grid_power"] = facility_kw / (site.grid_power_mw * 1000)
        sites[site_id] = SiteFigures(
            site=site_id,
            deployments=figures,
            fabric=fab,
            fabric_capex_usd=fabric_capex,
            cooling_used=cooling_used,
            compute_racks=compute_racks,
            it_power_kw=it_kw,
            facility_power_kw=facility_kw,
            capex_usd=site_capex,
            opex_usd_per_year=energy + colocation + site_capex * opex_rate_capex,
            utilization=utilization,
            energy_usd_per_year=energy,
            colocation_usd_per_year=colocation,
        )
    bom = _merge_lines(raw_lines)
    capex = sum(cents(line.extended_usd) for line in bom) / 100
    # A site's capex is the sum of its own BOM lines, to the cent (maintenance follows it).
    site_cents: dict[str, int] = defaultdict(int)
    for line in bom:
        site_cents[line.site] += cents(line.extended_usd)
    for site_id, fig in list(sites.items()):
        site_capex = site_cents[site_id] / 100
        sites[site_id] = replace(
            fig,
            capex_usd=site_capex,
            opex_usd_per_year=fig.energy_usd_per_year
            + fig.colocation_usd_per_year
            + site_capex * opex_rate_capex,
        )
    energy = sum(s.energy_usd_per_year for s in sites.values())
    colocation = sum(s.colocation_usd_per_year for s in sites.values())
    maintenance = capex * opex_rate_capex
    opex = energy + colocation + maintenance
    tco = scenario.horizon_years * (capex * crf(scenario.cost_of_capital, scenario.horizon_years) + opex)
    all_deps = [f for s in sites.values() for f in s.deployments]
    chips = sum(f.chips for f in all_deps)
    pflops = sum(f.fp8_pflops for f in all_deps)
    hours = HOURS_PER_YEAR * scenario.horizon_years
    totals = {
        "chips": chips,
        "units": sum(f.deployment.units for f in all_deps),
        "domains": sum(f.domains for f in all_deps),
        "racks": sum(s.compute_racks for s in sites.values()),
        "network_racks": sum(s.fabric.network_racks for s in sites.values() if s.fabric),
        "fp8_pflops": pflops,
        "hbm_tb": sum(f.hbm_tb for f in all_deps),
        "it_power_kw": sum(s.it_power_kw for s in sites.values()),
        "facility_power_kw": sum(s.facility_power_kw for s in sites.values()),
        "capex_usd": capex,
        "opex_usd_per_year": opex,
        "energy_usd_per_year": energy,
        "colocation_usd_per_year": colocation,
        "maintenance_usd_per_year": maintenance,
        "tco_usd": tco,
        "usd_per_pflop_hour": tco / (pflops * hours) if pflops else 0.0,
        "usd_per_chip_hour": tco / (chips * hours) if chips else 0.0,
    }
    return Evaluation(sites=sites, bom=bom, totals=totals, supply_used=dict(supply))
