"""The plan against itself (`self_check`, run on every plan read): every figure it states that can be
recomputed from its own parts (BOM lines, deployments, sites, periods, money terms) without the specs, for
a plan of one period or many.

A mismatch of a sum or product names its parts' key paths, so the reader of a file can give the line of
the figure and of each part (`Mismatch.located`), and a deployment's counts are checked against each other
(racks = units x racks per unit, chips = racks x chips per rack), so an edited `units` is refused at its
own line rather than only at the total it enters. The money (TCO, per-hour figures, objective) is checked
in `trnplan.plan.money`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from trnplan.costs import OPEX_FIGURES, maintenance_usd_per_year, opex_usd_per_year, opex_words
from trnplan.errors import KeyPath
from trnplan.numbers import PLAN_DIGITS, cents
from trnplan.plan.across import futures_self_problems
from trnplan.plan.counts import deployment_count_problems
from trnplan.plan.mismatch import (
    MAX_FIGURE,
    REL_TOL,
    Mismatch,
    bom_capex_problem,
    deployment_paths,
    each,
    lines_text,
    num,
    relation,
    sum_mismatch,
    usd_text,
)
from trnplan.plan.model import Economics, Plan, SiteSection
from trnplan.plan.money import economics_problems, objective_problems, window_problems, years_problems
from trnplan.plan.sums import (
    PLAN_SUMS,
    Installed,
    growth_problems,
    period_sums,
    site_sums,
    totals_sums,
)

__all__ = ["REL_TOL", "Mismatch", "bom_capex_problem", "lines_text", "relation", "self_check"]

def _bom_self_problems(plan: Plan) -> list[Mismatch]:
    """Each BOM line is quantity x unit price to the cent and belongs to a site of the plan; the lines sum
    to the plan's capex (not across futures: its totals are the expected figures, its lines the shared
    purchases) and, site by site, to each site's capex, to the cent."""
    problems = []
    site_cents: dict[str, int] = {site: 0 for site in plan.sites}
    site_lines: dict[str, list[KeyPath]] = defaultdict(list)
    for i, line in enumerate(plan.bom):
        slack = 0.01 + line.quantity * 10.0**-PLAN_DIGITS + 1e-9 * line.extended_usd
        product = line.quantity * line.unit_usd
        if abs(line.extended_usd - product) > slack:
            problems.append(
                relation(
                    ("bom", i, "extended_usd"),
                    num(line.extended_usd),
                    f"is not quantity x unit_usd of {line.item!r}",
                    f"{num(line.quantity)} x {num(line.unit_usd)} = {num(product)}",
                    [("bom", i, "quantity"), ("bom", i, "unit_usd")],
                )
            )
        if line.site not in site_cents:
            problems.append(
                Mismatch(
                    ("bom", i, "site"),
                    f"bom line {i + 1} is for site {line.site}, which the plan's sites do not include",
                )
            )
            continue
        site_cents[line.site] += cents(line.extended_usd)
        site_lines[line.site].append(("bom", i, "extended_usd"))
    if plan.futures is None and bom_capex_problem(plan.bom, plan.totals.capex_usd):
        problems.append(
            relation(
                ("totals", "capex_usd"),
                usd_text(plan.totals.capex_usd),
                "is not what the BOM lines sum to",
                usd_text(sum(cents(line.extended_usd) for line in plan.bom) / 100),
                [("bom", i, "extended_usd") for i in range(len(plan.bom))],
            )
        )
    for site_id, total in sorted(site_cents.items()):
        stated = plan.sites[site_id].capex_usd
        if total != cents(stated):
            problems.append(
                relation(
                    ("sites", site_id, "capex_usd"),
                    usd_text(stated),
                    "is not what the site's BOM lines sum to",
                    usd_text(total / 100),
                    site_lines[site_id],
                )
            )
    return problems


def _site_self_problems(
    site_id: str, s: SiteSection, economics: Economics | None, bom_lines: int
) -> list[Mismatch]:
    """A site's racks, IT power and capex are those of its deployments and fabric; its facility power is at
    least its IT power (PUE >= 1); its opex is its opex categories (energy + colocation) + maintenance."""
    at: KeyPath = ("sites", site_id)
    deps, fabric = s.deployments, s.scale_out
    rows = deployment_paths({site_id: s})
    problems = site_sums(at, s)
    rounding = 0.01 * (bom_lines + len(deps) + 2)  # the parts are rounded to the cent line by line
    problems += sum_mismatch(
        at + ("capex_usd",),
        s.capex_usd,
        sum(d.capex_usd for d in deps) + fabric.capex_usd,
        "is not the sum of its deployments' and scale-out fabric's capex_usd",
        rounding,
        [*each(rows, "capex_usd"), (*at, "scale_out", "capex_usd")],
        money=True,
    )
    if s.facility_power_kw < s.it_power_kw * (1 - REL_TOL) - 0.011:
        problems.append(
            relation(
                at + ("facility_power_kw",),
                num(s.facility_power_kw),
                "is less than its IT power (facility power is IT power x a PUE of at least 1)",
                f"it_power_kw {num(s.it_power_kw)}",
                [at + ("it_power_kw",)],
            )
        )
    if economics is not None:
        amounts = (float(getattr(s, name) or 0.0) for name in OPEX_FIGURES)
        opex = opex_usd_per_year(economics, amounts, s.capex_usd)
        problems += sum_mismatch(
            at + ("opex_usd_per_year",),
            s.opex_usd_per_year,
            opex,
            f"is not its {opex_words()} + capex x the maintenance rate",
            0.03,
            [
                *(at + (name,) for name in OPEX_FIGURES),
                at + ("capex_usd",),
                ("economics", "maintenance_rate"),
            ],
            money=True,
        )
    used = sorted({d.cooling for d in deps})
    if set(used) - set(s.cooling_used) or s.cooling_used != sorted(set(s.cooling_used)):
        problems.append(
            relation(
                at + ("cooling_used",),
                str(s.cooling_used),
                "does not list, sorted and once each, every cooling its deployments use",
                ", ".join(used) or "nothing",
                each(rows, "cooling"),
            )
        )
    return problems


def _totals_money_problems(plan: Plan) -> list[Mismatch]:
    """Maintenance is capex x the maintenance rate, and opex its opex categories + maintenance."""
    t = plan.totals
    problems = []
    if plan.economics is not None and t.maintenance_usd_per_year is not None:
        problems += sum_mismatch(
            ("totals", "maintenance_usd_per_year"),
            t.maintenance_usd_per_year,
            maintenance_usd_per_year(plan.economics, t.capex_usd),
            "is not capex_usd x the maintenance rate",
            0.011,
            [("totals", "capex_usd"), ("economics", "maintenance_rate")],
            money=True,
        )
    stated = [name for name, always in OPEX_FIGURES.items() if always] + ["maintenance_usd_per_year"]
    if all(getattr(t, name) is not None for name in stated):
        opex = sum(t.figure(name) for name in OPEX_FIGURES) + t.figure("maintenance_usd_per_year")
        problems += sum_mismatch(
            ("totals", "opex_usd_per_year"),
            t.opex_usd_per_year,
            opex,
            f"is not its {opex_words()} + maintenance per year",
            0.03,
            [("totals", k) for k in (*OPEX_FIGURES, "maintenance_usd_per_year")],
            money=True,
        )
    return problems


def _effective_self_problems(plan: Plan) -> list[Mismatch]:
    """Under a workload every deployment states its efficiency and effective FP8 PFLOPs (= its FP8 PFLOPs
    x efficiency) and the totals their sum and $/effective-PFLOP-hour; without one, none of them does."""
    t = plan.totals
    workload = t.effective_fp8_pflops is not None
    problems = []
    if (t.usd_per_effective_pflop_hour is not None) != workload:
        problems.append(
            Mismatch(
                ("totals", "usd_per_effective_pflop_hour"),
                "totals state effective_fp8_pflops and usd_per_effective_pflop_hour together or neither",
            )
        )
    if (plan.workload is not None) != workload:
        problems.append(
            Mismatch(
                ("workload",), "a plan states its workload exactly when its totals state effective PFLOPs"
            )
        )
    shares = plan.workload.efficiency if plan.workload is not None else {}
    total = 0.0
    stated: list[KeyPath] = []
    for site_id, s in sorted(plan.sites.items()):
        for i, d in enumerate(s.deployments):
            at: KeyPath = ("sites", site_id, "deployments", i)
            share_key = d.key.replace(f"/{d.cooling}/", "/")  # form/scale-up switch, with a job
            share_key = share_key if share_key in shares else d.form
            if d.efficiency is not None and share_key in shares and d.efficiency != shares[share_key]:
                problems.append(
                    relation(
                        (*at, "efficiency"),
                        num(d.efficiency),
                        f"is not what the plan's workload gives {share_key}",
                        num(shares[share_key]),
                        [("workload", "efficiency", share_key)],
                    )
                )
            if (d.efficiency is not None, d.effective_fp8_pflops is not None) != (workload, workload):
                state = "state" if workload else "do not state"
                problems.append(
                    Mismatch(
                        at,
                        f"sites.{site_id}.deployments.{i}: the totals {state} effective FP8 PFLOPs, so every "
                        "deployment states efficiency and effective_fp8_pflops only with them",
                    )
                )
                continue
            if d.efficiency is not None and d.effective_fp8_pflops is not None:
                total += d.effective_fp8_pflops
                stated.append((*at, "effective_fp8_pflops"))
                problems += sum_mismatch(
                    (*at, "effective_fp8_pflops"),
                    d.effective_fp8_pflops,
                    d.fp8_pflops * d.efficiency,
                    "is not its fp8_pflops x efficiency",
                    0.001,
                    [(*at, "fp8_pflops"), (*at, "efficiency")],
                )
    if workload and plan.futures is None:  # across futures, the totals are the futures' mean
        deps = sum(len(s.deployments) for s in plan.sites.values())
        problems += sum_mismatch(
            ("totals", "effective_fp8_pflops"),
            t.figure("effective_fp8_pflops"),
            total,
            "is not the sum of its deployments' effective_fp8_pflops",
            0.001 * max(1, deps),
            stated,
        )
    return problems


def _range_problems(value: Any, path: tuple[str | int, ...] = ()) -> list[Mismatch]:
    """Every number in the plan's data beyond MAX_FIGURE (the sums below are taken only without any)."""
    if isinstance(value, dict):
        return [m for key, item in value.items() for m in _range_problems(item, (*path, key))]
    if isinstance(value, list):
        return [m for i, item in enumerate(value) for m in _range_problems(item, (*path, i))]
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_FIGURE:
        name = ".".join(str(p) for p in path)
        return [
            Mismatch(path, f"{name} is {value:.6g}, beyond the {MAX_FIGURE:.0e} any plan figure stays under")
        ]
    return []


def self_check(plan: Plan) -> list[Mismatch]:
    """What a plan states about itself that does not hold, recomputed from its own parts: BOM lines are
    quantity x price and sum to the site and plan capex to the cent; each site's racks, IT power, capex
    and opex are those of its deployments, fabric and money terms; the totals are the sums over sites and
    deployments; each deployment's racks and chips are whole multiples of its units and racks, by its
    form's numbers; a phased plan's periods grow, add up and are priced by its BOM lines; TCO = capex x
    tco_per_capex_usd + horizon x its opex categories (energy + colocation), or over a phased plan's
    periods; the per-hour figures, the objective and the alternatives' deltas follow from the TCO and totals.
    A plan across futures: each future's periods hold on their own, share the top level's purchases, and
    its totals are the futures' mean (`trnplan.plan.futures`).

    It makes a hand edit show (cut one figure and its sums no longer agree); a forgery consistent in every
    part is what `check_plan` against the specs (`trnplan optimize --check`) finds.
    """
    out_of_range = _range_problems(plan.model_dump())
    if out_of_range:
        return out_of_range
    problems = deployment_count_problems(plan)
    problems += _bom_self_problems(plan)
    lines = Counter(line.site for line in plan.bom)
    for site_id, section in sorted(plan.sites.items()):
        problems += _site_self_problems(site_id, section, plan.economics, lines[site_id])
    if plan.futures is None:
        problems += totals_sums((), plan.totals, plan.sites, PLAN_SUMS) + _totals_money_problems(plan)
    problems += _effective_self_problems(plan)
    problems += economics_problems(plan)
    if plan.periods is not None:
        problems += _periods_self_problems(plan)
    if plan.futures is not None:
        problems += futures_self_problems(plan)
    problems += objective_problems(plan)
    return problems


def _periods_self_problems(plan: Plan) -> list[Mismatch]:
    """A phased plan against itself: units never fall and `bought` is their growth; each period adds up;
    one scale-out switch type per site; each period's bought capex is its BOM lines' and its installed
    capex the sum so far; every BOM line is bought in a period of the plan; the plan's sites are its last
    period's, and its money that of its window (`window_problems`)."""
    if not plan.periods:
        return [Mismatch(("periods",), "a phased plan has at least one period")]
    problems: list[Mismatch] = []
    before: Installed = {}
    switch_of: dict[str, str] = {}
    installed = 0
    for i, p in enumerate(plan.periods):
        grew, before = growth_problems(i, p, before)
        problems += grew + period_sums(i, p)
        for site, s_ in sorted(p.sites.items()):
            first = switch_of.setdefault(site, s_.scale_out.switch)
            if s_.scale_out.switch != first:
                problems.append(
                    Mismatch(
                        ("periods", i, "sites", site, "scale_out", "switch"),
                        f"periods.{i}: {site} uses scale-out switch {s_.scale_out.switch}, not {first} as "
                        "before (one type per site over the window)",
                    )
                )
        mine = [k for k, line in enumerate(plan.bom) if line.period == p.start]
        lines = sum(round(plan.bom[k].extended_usd * 100) for k in mine)
        installed += lines
        if round(p.totals.capex_bought_usd * 100) != lines:
            problems.append(
                relation(
                    ("periods", i, "totals", "capex_bought_usd"),
                    f"${p.totals.capex_bought_usd:,.2f}",
                    f"is not what the BOM lines of {p.start} sum to",
                    f"${lines / 100:,.2f}",
                    [("bom", k, "extended_usd") for k in mine],
                )
            )
        if round(p.totals.capex_usd * 100) != installed:
            problems.append(
                relation(
                    ("periods", i, "totals", "capex_usd"),
                    f"${p.totals.capex_usd:,.2f}",
                    "is not the sum of capex_bought_usd up to and in this period",
                    f"${installed / 100:,.2f}",
                    [("periods", k, "totals", "capex_bought_usd") for k in range(i + 1)],
                )
            )
    starts = {p.start for p in plan.periods}
    for k, line in enumerate(plan.bom):
        if line.period not in starts:
            problems.append(
                Mismatch(
                    ("bom", k, "period"),
                    f"bom line {k + 1} is bought in {line.period}, not a period of the plan",
                )
            )
    if plan.futures is None:
        money = window_problems(plan)
    else:  # across futures the money is each future's (`futures_self_problems`)
        money = years_problems(plan, plan.economics) if plan.economics is not None else []
    return problems + _last_is_installed(plan) + money


def _last_is_installed(plan: Plan) -> list[Mismatch]:
    """The plan's `sites` are its last period's installed base."""
    assert plan.periods
    last = plan.periods[-1]
    stated = {(site, d.key): d.units for site, s in plan.sites.items() for d in s.deployments}
    installed = {(site, d.key): d.units for site, s in last.sites.items() for d in s.deployments}
    if stated == installed:
        return []
    return [Mismatch(("sites",), "sites are not the last period's installed base (periods.-1.sites)")]
