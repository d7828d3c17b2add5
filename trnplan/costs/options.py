"""Options: the per-unit figures of each (form, cooling, scale-up switch) choice, the MILP's coefficients,
and why an option may not be used at a site (typed `Reason`s)."""

from __future__ import annotations

from dataclasses import dataclass

from trnplan.catalog import Catalog, Scenario, month_leq, rack_it_kw
from trnplan.perf import option_performance

NO_SWITCH = "none"  # scale-up "switch" of torus forms


@dataclass(frozen=True, order=True)
class Reason:
    """Why an option may not be used, in words; `hard` when no relaxation of the scenario or the site
    could allow it (the form does not support the cooling, the rack draws more than the cooling can
    take, the scenario excludes the form or chip), so infeasibility explanations never offer to lift it."""

    text: str
    hard: bool = False

    def __str__(self) -> str:
        return self.text


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
    efficiency: float = 1.0  # share of dense FP8 peak the scenario's workload delivers on this form
    effective_fp8_pflops: float = 0.0  # fp8_pflops x efficiency (set by make_option)
    copper_links: int = 0  # rack-to-leaf copper links (their price is in capex_usd)
    copper_kw: float = 0.0  # their power, counted with the network
    capex_lives: tuple[tuple[float, float], ...] = ()  # (life_years, USD) of capex_usd with a life of its own

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.form, self.cooling, self.scale_up_switch)


KW_LINE_CATEGORIES = ("cooling", "hall", "power_chain")
"""BOM categories whose lines count IT kW (their quantity is kW)."""

KwLine = tuple[str, str, float, float | None]
"""(category, item, USD per IT kW, life_years: None for the horizon's)."""
Line = tuple[str, str, float, float, float | None]
"""(category, item, quantity, unit_usd, life_years: None for the horizon's)."""


def kw_lines(catalog: Catalog, site_id: str | None, cooling_id: str) -> list[KwLine]:
    """What each IT kW of a cooling costs at a site, as (category, item, USD per kW, life): the cooling's
    fit-out everywhere; at an owned site also its plant, the hall's build and its power chain (a leased
    site's rent pays all three), each over the hall's facility_life_years."""
    cooling = catalog.cooling[cooling_id]
    name = cooling.name or cooling_id
    fit_out = ("cooling", f"{name} cooling capacity, kW ({cooling_id})", cooling.capex_usd_per_kw, None)
    lines: list[KwLine] = [fit_out]
    site = catalog.sites[site_id] if site_id is not None else None
    if site is not None and site.owned:
        life = site.facility_life_years
        if cooling.plant_usd_per_kw:
            plant = f"{name} cooling plant, kW ({cooling_id})"
            lines.append(("cooling", plant, cooling.plant_usd_per_kw, life))
        if site.build_usd_per_mw:
            lines.append(("hall", f"hall build, kW ({site_id})", site.build_usd_per_mw / 1000, life))
        chain = catalog.power_chains.get(site.redundancy or "")
        if chain is not None and chain.usd_per_mw:
            item = f"power chain {site.redundancy}, kW ({site_id})"
            lines.append(("power_chain", item, chain.usd_per_mw / 1000, life))
    return lines


def kw_capex_usd(catalog: Catalog, site_id: str | None, cooling_id: str) -> float:
    """Capex per IT kW of a cooling at a site: the sum of its `kw_lines`."""
    return sum(unit for _, _, unit, _ in kw_lines(catalog, site_id, cooling_id))


def kw_capex_lives(catalog: Catalog, site_id: str | None, cooling_id: str) -> list[tuple[float, float]]:
    """(life_years, USD per IT kW) of a cooling's `kw_lines` at a site that have a life of their own."""
    return [(life, unit) for _, _, unit, life in kw_lines(catalog, site_id, cooling_id) if life is not None]


def option_lines(
    catalog: Catalog, form_id: str, cooling_id: str, switch_id: str, site_id: str | None = None
) -> list[Line]:
    """Per-unit BOM lines (category, item, quantity, unit_usd, life) of an option at a site, fabric
    excluded; a chip's and a switch's life_years are their lines' lives."""
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    racks = form.racks_per_unit
    lines: list[Line] = [
        ("chips", f"{chip.name} ({form.chip})", form.unit_chips, chip.unit_usd, chip.life_years)
    ]
    for item in form.rack_bom:
        lines.append((item.category, f"{item.item} ({form_id})", item.qty * racks, item.unit_usd, None))
    if switch_id != NO_SWITCH:
        per_rack = next(o.per_rack for o in form.scale_up if o.switch == switch_id)
        switch = catalog.switches[switch_id]
        if per_rack:
            item_name = f"{switch.name or switch_id} ({switch_id})"
            lines.append(("scale_up", item_name, per_rack * racks, switch.unit_usd, switch.life_years))
    if form.endpoint_links == "copper" and form.optics_per_rack:
        links = racks * form.optics_per_rack
        lines.append(("copper", f"rack-to-leaf copper links ({form_id})", links, form.copper_usd, None))
    kw = racks * option_rack_kw(catalog, form_id, switch_id)
    lines.extend((c, item, kw, unit, life) for c, item, unit, life in kw_lines(catalog, site_id, cooling_id))
    return lines


def option_rack_kw(catalog: Catalog, form_id: str, switch_id: str) -> float:
    form = catalog.forms[form_id]
    if switch_id == NO_SWITCH:
        return rack_it_kw(form, catalog.chips[form.chip], None, 0)
    per_rack = next(o.per_rack for o in form.scale_up if o.switch == switch_id)
    return rack_it_kw(form, catalog.chips[form.chip], catalog.switches[switch_id], per_rack)


@dataclass(frozen=True)
class Efficiency:
    """What a scenario's workload delivers on an option and where that comes from: `rule N` (the
    workload's N-th rule, from 0), `model` (`trnplan.perf`, with its MFU and goodput) or `peak` (no
    workload, or no rule and no job). `fits` is false when the job fits no layout on the form."""

    value: float = 1.0
    source: str = "peak"
    mfu: float | None = None
    goodput: float | None = None
    fits: bool = True


def option_efficiency(
    catalog: Catalog, scenario: Scenario | None, form_id: str, switch_id: str | None = None
) -> Efficiency:
    """Share of dense FP8 peak the scenario's workload delivers on a form with a scale-up switch (None:
    the form's first): the value of the workload's first rule whose conditions (`topology`,
    `min_domain_chips`, `forms`) the form meets; else, when the workload has a job, what the performance
    model computes (at the scenario's fabric oversubscription); else 1 (peak)."""
    if scenario is None or scenario.workload is None:
        return Efficiency()
    form = catalog.forms[form_id]
    workload = catalog.workloads[scenario.workload]
    for i, rule in enumerate(workload.efficiency):
        if (
            (rule.topology is None or form.topology == rule.topology)
            and (rule.min_domain_chips is None or form.domain_chips >= rule.min_domain_chips)
            and (rule.forms is None or form_id in rule.forms)
        ):
            return Efficiency(rule.value, f"rule {i}")
    if workload.job is None:
        return Efficiency()
    switch = switch_id or (form.scale_up[0].switch if form.scale_up else NO_SWITCH)
    perf = option_performance(catalog, workload.job, form_id, switch, scenario.fabric.oversubscription)
    if perf is None:
        return Efficiency(1.0, "model", fits=False)
    # to 4 digits, as a plan states it: effective PFLOPs = PFLOPs x this very number, in plan and MILP
    return Efficiency(
        max(round(perf.efficiency, 4), 1e-4), "model", max(round(perf.mfu, 4), 1e-4), round(perf.goodput, 4)
    )


def form_efficiency(
    catalog: Catalog, scenario: Scenario | None, form_id: str, switch_id: str | None = None
) -> float:
    """The value of `option_efficiency`."""
    return option_efficiency(catalog, scenario, form_id, switch_id).value


def make_option(
    catalog: Catalog,
    form_id: str,
    cooling_id: str,
    switch_id: str,
    efficiency: float = 1.0,
    site_id: str | None = None,
) -> Option:
    """The per-unit figures of a (form, cooling, switch) choice at a site (`site_id` None: what every site
    pays); `efficiency` from `form_efficiency`."""
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    racks = form.racks_per_unit
    rack_kw = option_rack_kw(catalog, form_id, switch_id)
    per_rack = (
        0 if switch_id == NO_SWITCH else next(o.per_rack for o in form.scale_up if o.switch == switch_id)
    )
    lines = option_lines(catalog, form_id, cooling_id, switch_id, site_id)
    capex = sum(qty * unit for _, _, qty, unit, _ in lines)
    lives = tuple((life, qty * unit) for _, _, qty, unit, life in lines if life is not None and qty * unit)
    pflops = form.unit_chips * chip.fp8_tflops / 1000
    copper = form.endpoint_links == "copper"
    links = racks * form.optics_per_rack if copper else 0
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
        fp8_pflops=pflops,
        hbm_tb=form.unit_chips * chip.hbm_capacity_gb / 1000,
        scale_out_gbps=form.unit_chips * chip.scale_out_gbps,
        endpoint_optics=0 if copper else racks * form.optics_per_rack,
        scale_up_switches=per_rack * racks,
        capex_usd=capex,
        efficiency=efficiency,
        effective_fp8_pflops=pflops * efficiency,
        copper_links=links,
        copper_kw=links * form.copper_w / 1000,
        capex_lives=lives,
    )


def option_problems(
    catalog: Catalog, scenario: Scenario, site_id: str, form_id: str, cooling_id: str, switch_id: str
) -> list[Reason]:
    """Why an option may not be used at a site under a scenario; [] when it may."""
    return [
        *_scenario_problems(catalog, scenario, form_id),
        *_cooling_problems(catalog, scenario, site_id, form_id, cooling_id),
        *_domain_problems(catalog, scenario, form_id),
        *_switch_problems(catalog, scenario, switch_id),
        *_rack_kw_problems(catalog, site_id, form_id, cooling_id, switch_id),
        *_job_problems(catalog, scenario, form_id, switch_id),
    ]


def _job_problems(catalog: Catalog, scenario: Scenario, form_id: str, switch_id: str) -> list[Reason]:
    """The workload's job must fit in the form's HBM in some layout."""
    if option_efficiency(catalog, scenario, form_id, switch_id).fits:
        return []
    return [Reason(f"workload {scenario.workload}'s job fits no layout in {form_id}'s HBM", hard=True)]


def _scenario_problems(catalog: Catalog, scenario: Scenario, form_id: str) -> list[Reason]:
    """The scenario's own filters: forms, chips, availability of the chip."""
    form = catalog.forms[form_id]
    chip = catalog.chips[form.chip]
    why = []
    if scenario.forms is not None and form_id not in scenario.forms:
        why.append(Reason(f"form {form_id} is not among the scenario's forms", hard=True))
    if scenario.chips is not None and form.chip not in scenario.chips:
        why.append(Reason(f"chip {form.chip} is not among the scenario's chips", hard=True))
    if not month_leq(chip.available_from, scenario.as_of):
        why.append(
            Reason(f"chip {form.chip} is available from {chip.available_from}, after as_of {scenario.as_of}")
        )
    return why


def _domain_problems(catalog: Catalog, scenario: Scenario, form_id: str) -> list[Reason]:
    """The scale-up domain must be at least min_domain_chips."""
    form = catalog.forms[form_id]
    if form.domain_chips >= scenario.min_domain_chips:
        return []
    return [
        Reason(
            f"form {form_id} has {form.domain_chips}-chip domains, "
            f"under min_domain_chips {scenario.min_domain_chips}"
        )
    ]


def _cooling_problems(
    catalog: Catalog, scenario: Scenario, site_id: str, form_id: str, cooling_id: str
) -> list[Reason]:
    """Cooling the form supports and the site serves, for the racks and for the network."""
    site = catalog.sites[site_id]
    why = []
    if cooling_id not in catalog.forms[form_id].cooling:
        why.append(Reason(f"form {form_id} does not support {cooling_id} cooling", hard=True))
    if cooling_id not in site.cooling:
        why.append(Reason(f"site {site_id} has no {cooling_id} cooling"))
    if scenario.fabric.cooling not in site.cooling:
        why.append(
            Reason(
                f"site {site_id} has no {scenario.fabric.cooling} cooling "
                "for the scale-out network (fabric.cooling)"
            )
        )
    return why


def _switch_problems(catalog: Catalog, scenario: Scenario, switch_id: str) -> list[Reason]:
    """A scale-up switch must be available by as_of."""
    if switch_id == NO_SWITCH:
        return []
    switch = catalog.switches[switch_id]
    if month_leq(switch.available_from, scenario.as_of):
        return []
    return [
        Reason(f"switch {switch_id} is available from {switch.available_from}, after as_of {scenario.as_of}")
    ]


def _rack_kw_problems(
    catalog: Catalog, site_id: str, form_id: str, cooling_id: str, switch_id: str
) -> list[Reason]:
    """A rack may draw no more than its cooling (hard: physics) and the site (soft: a busway) allow."""
    site = catalog.sites[site_id]
    cooling = catalog.cooling[cooling_id]
    kw = option_rack_kw(catalog, form_id, switch_id)
    why = []
    if kw > cooling.max_rack_kw + 1e-9:
        why.append(
            Reason(
                f"a {form_id} rack draws {kw:g} kW, over {cooling_id} cooling's {cooling.max_rack_kw:g} kW",
                hard=True,
            )
        )
    if site.max_rack_kw is not None and kw > site.max_rack_kw + 1e-9:
        why.append(
            Reason(
                f"a {form_id} rack draws {kw:g} kW, over site {site_id}'s {site.max_rack_kw:g} kW per rack"
            )
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
        make_option(catalog, f, q, u, form_efficiency(catalog, scenario, f, u), site_id)
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


def option_month(catalog: Catalog, opt: Option) -> str:
    """The first month an option can be bought: its chip's and scale-up switch's `available_from` ("" when
    neither has one)."""
    chip = catalog.chips[catalog.forms[opt.form].chip]
    switch = catalog.switches.get(opt.scale_up_switch)
    months = [m for m in (chip.available_from, switch.available_from if switch else None) if m]
    return max(months, default="")
