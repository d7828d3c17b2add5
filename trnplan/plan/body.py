"""A plan's parts from the cost model's evaluation, for one period or many: totals to the cent, site
sections, a phased plan's periods, its money terms and its workload. The plan builder writes them and the
checker compares a plan's own with them."""

from __future__ import annotations

from trnplan.catalog import Catalog, Scenario
from trnplan.costs import (
    OPEX_FIGURES,
    PeriodFigures,
    SiteFigures,
    WindowEvaluation,
    form_efficiency,
    option_efficiency,
    scale_up_choices,
    stated_opex,
    tco_per_capex_usd,
    window_crf,
)
from trnplan.errors import InputError
from trnplan.numbers import usd
from trnplan.plan.model import (
    DeploymentRow,
    Economics,
    PeriodDeployment,
    PeriodSite,
    PeriodTotals,
    PlanPeriod,
    ScaleOut,
    SiteSection,
    Totals,
    Utilization,
    WorkloadPart,
)

MAX_PLAN_USD = 1e13
"""Largest capex or TCO a plan may state. Money is kept to the cent in binary floating point, which is
exact to about 9e13 USD; and a ten-trillion-dollar deployment is a unit slip, not a plan."""

COUNT_TOTALS = ("chips", "units", "racks", "domains", "network_racks")
"""The totals that are whole numbers."""
MONEY_TOTALS = ("capex_usd", "opex_usd_per_year", *OPEX_FIGURES, "maintenance_usd_per_year", "tco_usd")


def economics(scenario: Scenario) -> Economics:
    """The scenario's money terms, so a plan alone can attribute its TCO: TCO = capex x tco_per_capex_usd
    + horizon_years x (energy + colocation) per year."""
    return Economics(
        horizon_years=scenario.horizon_years,
        cost_of_capital=scenario.cost_of_capital,
        crf=window_crf(scenario),
        maintenance_rate=scenario.maintenance_rate,
        utilization=scenario.utilization,
        tco_per_capex_usd=tco_per_capex_usd(scenario),
    )


def check_money_range(evaluation: WindowEvaluation) -> None:
    """Refuse a plan whose capex or TCO is beyond MAX_PLAN_USD (InputError, exit 3): each spec value can be
    plausible while their product is not (100 million chips at 10 million USD), and past it the plan's
    BOM no longer adds up to its capex to the cent. The largest BOM line points at the likely slip."""
    totals = evaluation.totals
    key = max(("capex_usd", "tco_usd"), key=lambda k: abs(getattr(totals, k)))
    value = getattr(totals, key)
    if abs(value) <= MAX_PLAN_USD:
        return
    what = "capex" if key == "capex_usd" else "TCO"
    hint = ""
    if evaluation.bom:
        top = max(evaluation.bom, key=lambda line: abs(line.extended_usd))
        hint = (
            f"; its largest BOM line is {top.site}: {top.item} ({top.category}), "
            f"{top.quantity:,.6g} x ${top.unit_usd:,.6g} = ${top.extended_usd:.3g}"
        )
    raise InputError(
        f"the best plan's {what} is ${value:.3g}, beyond the ${MAX_PLAN_USD:.0e} a plan can account for to "
        f"the cent: a spec value is likely in the wrong unit, or the demand too large{hint}"
    )


def site_section(s: SiteFigures, workload: bool) -> SiteSection:
    """A site's section; with a workload, each deployment states its efficiency and effective PFLOPs."""
    fab = s.fabric
    assert fab is not None
    return SiteSection(
        cooling_used=s.cooling_used,
        scale_out=ScaleOut(
            switch=fab.switch,
            tiers=fab.tiers,
            ports=fab.ports,
            switches=fab.switches,
            optics=fab.optics,
            network_racks=fab.network_racks,
            it_power_kw=fab.it_power_kw,
            capex_usd=usd(s.fabric_capex_usd),
        ),
        deployments=[
            DeploymentRow(
                form=f.deployment.form,
                cooling=f.deployment.cooling,
                scale_up_switch=f.deployment.scale_up_switch,
                units=f.deployment.units,
                racks=f.racks,
                chips=f.chips,
                domains=f.domains,
                fp8_pflops=f.fp8_pflops,
                it_power_kw=f.it_power_kw,
                capex_usd=usd(f.capex_usd),
                efficiency=f.efficiency if workload else None,
                effective_fp8_pflops=f.effective_fp8_pflops if workload else None,
                efficiency_source=f.efficiency_source if workload else None,
                mfu=f.mfu if workload else None,
                goodput=f.goodput if workload else None,
            )
            for f in s.deployments
        ],
        racks=s.compute_racks,
        it_power_kw=s.it_power_kw,
        facility_power_kw=s.facility_power_kw,
        capex_usd=usd(s.capex_usd),
        opex_usd_per_year=usd(s.opex_usd_per_year),
        **{name: usd(amount) for name, amount in stated_opex(s.opex_figures).items()},
        utilization=Utilization(**s.utilization),
    )


def plan_body(evaluation: WindowEvaluation) -> tuple[Totals, dict[str, SiteSection]]:
    """Totals (money to the cent) and per-site sections of a plan, from the cost model's evaluation."""
    check_money_range(evaluation)
    stated = evaluation.totals
    totals = stated.model_copy(
        update={key: usd(getattr(stated, key)) for key in MONEY_TOTALS if getattr(stated, key) is not None}
    )
    workload = evaluation.totals.effective_fp8_pflops is not None
    sites = {site_id: site_section(s, workload) for site_id, s in evaluation.sites.items()}
    return totals, sites


def workload_part(catalog: Catalog, scenario: Scenario) -> WorkloadPart | None:
    """The scenario's workload and what it delivers on each form the scenario allows; None without one."""
    if scenario.workload is None:
        return None
    forms = [
        f
        for f, form in sorted(catalog.forms.items())
        if (scenario.forms is None or f in scenario.forms)
        and (scenario.chips is None or form.chip in scenario.chips)
    ]
    workload = catalog.workloads[scenario.workload]
    if workload.job is None:
        shares = {f: form_efficiency(catalog, scenario, f) for f in forms}
    else:
        shares = {}
        for f in forms:
            for switch in scale_up_choices(catalog, f):
                eff = option_efficiency(catalog, scenario, f, switch)
                if eff.fits:
                    shares[f"{f}/{switch}"] = eff.value
    return WorkloadPart(id=scenario.workload, name=workload.name, efficiency=shares)


def period_parts(pev: WindowEvaluation) -> list[PlanPeriod]:
    """Each period as the plan states it: installed deployments (with what was bought), fabric, power,
    positions, and the period's totals."""
    parts = []
    before: dict[tuple[str, str], int] = {}
    for pf in pev.periods:
        parts.append(_period_part(pf, before))
        before = {(site, d.key): d.units for site, s in parts[-1].sites.items() for d in s.deployments}
    return parts


def _period_part(pf: PeriodFigures, before: dict[tuple[str, str], int]) -> PlanPeriod:
    ev = pf.evaluation
    sites = {}
    for site_id, figures in sorted(ev.sites.items()):
        s = site_section(figures, workload=False)
        deployments = [
            PeriodDeployment(
                form=d.form,
                cooling=d.cooling,
                scale_up_switch=d.scale_up_switch,
                units=d.units,
                bought=d.units - before.get((site_id, d.key), 0),
                racks=d.racks,
                chips=d.chips,
                it_power_kw=d.it_power_kw,
                capex_usd=d.capex_usd,
            )
            for d in s.deployments
        ]
        sites[site_id] = PeriodSite(
            deployments=deployments,
            scale_out=s.scale_out,
            cooling_used=s.cooling_used,
            racks=s.racks,
            positions=s.racks + s.scale_out.network_racks,
            it_power_kw=s.it_power_kw,
            facility_power_kw=s.facility_power_kw,
            utilization=s.utilization,
        )
    t = ev.totals
    totals = PeriodTotals(
        chips=t.chips,
        units=t.units,
        racks=t.racks,
        network_racks=t.network_racks or 0,
        fp8_pflops=t.fp8_pflops,
        it_power_kw=t.it_power_kw,
        facility_power_kw=t.facility_power_kw,
        capex_bought_usd=usd(pf.capex_bought_usd),
        capex_usd=usd(pf.capex_installed_usd),
        opex_usd_per_year=usd(pf.opex_usd_per_year),
        effective_fp8_pflops=t.effective_fp8_pflops,
    )
    return PlanPeriod(start=pf.period.start, years=pf.period.years, sites=sites, totals=totals)


def expected_totals(each: list[Totals]) -> Totals:
    """A plan across futures' `totals`: every figure the mean over the futures of that future's own (money
    to the cent, counts rounded to whole numbers); a figure some future does not state is left out."""
    values: dict[str, float | int | None] = {}
    for key in Totals.model_fields:
        found = [getattr(t, key) for t in each]
        if any(v is None for v in found):
            values[key] = None
            continue
        mean = sum(float(v) for v in found) / len(found)
        values[key] = round(mean) if key in COUNT_TOTALS else usd(mean) if key in MONEY_TOTALS else mean
    return Totals.model_validate(values)
