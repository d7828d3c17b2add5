"""The plan against itself (`self_check`, run on every plan read): every figure it states that can be
recomputed from its own parts (BOM lines, deployments, sites, money terms) without the specs.

`bom_capex_problem` is the one "BOM lines sum to capex, to the cent" check every reader relies on.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from trnplan.catalog import HOURS_PER_YEAR
from trnplan.costs import objective_unit, objective_value
from trnplan.numbers import PLAN_DIGITS, cents, plain
from trnplan.plan.model import BomLine, Plan, SiteSection

REL_TOL = 1e-6
"""Relative tolerance of `check_plan`'s comparisons with the cost model."""
MAX_FIGURE = 1e15
"""Largest magnitude of any number a plan file may state: far above every real figure (a plan's money
stops at 1e13 USD, where a cent is still exact) and far below where a sum of figures could overflow."""
SUM_REL = 1e-12
"""Relative slack of a sum here, for floating point only: rounding (figures to 6 decimals, money to the
cent) is allowed for in each check's absolute slack."""


def bom_capex_problem(bom: list[BomLine], capex_usd: float) -> str | None:
    """'BOM lines sum to $X but capex_usd is $Y' when the lines do not add up to capex to the cent."""
    bom_cents = sum(cents(line.extended_usd) for line in bom)
    if bom_cents == cents(capex_usd):
        return None
    return f"BOM lines sum to ${bom_cents / 100:,.2f} but capex_usd is ${capex_usd:,.2f}"


@dataclass(frozen=True)
class Mismatch:
    """A figure a plan states that the plan's own parts contradict: `path` is the figure's key path in
    the file (where a reader points), `message` says what it is and what the parts give."""

    path: tuple[str | int, ...]
    message: str

    def __str__(self) -> str:
        return self.message


def _num(value: float) -> str:
    return plain(value, 6)


def _sum_mismatch(
    path: tuple[str | int, ...], stated: float, parts: float, what: str, tol: float
) -> list[Mismatch]:
    """[Mismatch] when `stated` differs from the sum of `parts` by more than `tol` (plus SUM_REL of it)."""
    if abs(stated - parts) <= tol + SUM_REL * max(abs(stated), abs(parts)):
        return []
    name = ".".join(str(p) for p in path)
    return [Mismatch(path, f"{name} is {_num(stated)} but {what} give {_num(parts)}")]


def _bom_self_problems(plan: Plan) -> list[Mismatch]:
    """Each BOM line is quantity x unit price to the cent and belongs to a site of the plan; the lines sum
    to the plan's capex and, site by site, to each site's capex, to the cent."""
    problems = []
    site_cents: dict[str, int] = {site: 0 for site in plan.sites}
    for i, line in enumerate(plan.bom):
        slack = 0.01 + line.quantity * 10.0**-PLAN_DIGITS + 1e-9 * line.extended_usd
        if abs(line.extended_usd - line.quantity * line.unit_usd) > slack:
            problems.append(
                Mismatch(
                    ("bom", i, "extended_usd"),
                    f"bom line {i + 1} ({line.item}): extended_usd is {_num(line.extended_usd)} but "
                    f"{_num(line.quantity)} x {_num(line.unit_usd)} is {_num(line.quantity * line.unit_usd)}",
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
    mismatch = bom_capex_problem(plan.bom, plan.totals.capex_usd)
    if mismatch:
        problems.append(Mismatch(("totals", "capex_usd"), mismatch))
    for site_id, total in sorted(site_cents.items()):
        stated = plan.sites[site_id].capex_usd
        if total != cents(stated):
            problems.append(
                Mismatch(
                    ("sites", site_id, "capex_usd"),
                    f"sites.{site_id}.capex_usd is "
                    f"${stated:,.2f} but the site's BOM lines sum to ${total / 100:,.2f}",
                )
            )
    return problems


def _site_self_problems(
    site_id: str, s: SiteSection, maintenance_rate: float | None, bom_lines: int
) -> list[Mismatch]:
    """A site's racks, IT power and capex are those of its deployments and fabric; its facility power is at
    least its IT power (PUE >= 1); its opex is energy + colocation + maintenance."""
    at: tuple[str | int, ...] = ("sites", site_id)
    deps, fabric = s.deployments, s.scale_out
    parts = "its deployments"
    problems = _sum_mismatch(at + ("racks",), s.racks, sum(d.racks for d in deps), parts, 0)
    problems += _sum_mismatch(
        at + ("it_power_kw",),
        s.it_power_kw,
        sum(d.it_power_kw for d in deps) + fabric.it_power_kw,
        "its deployments and scale-out fabric",
        0.011,
    )
    rounding = 0.01 * (bom_lines + len(deps) + 2)  # the parts are rounded to the cent line by line
    problems += _sum_mismatch(
        at + ("capex_usd",),
        s.capex_usd,
        sum(d.capex_usd for d in deps) + fabric.capex_usd,
        "its deployments and scale-out fabric",
        rounding,
    )
    if s.facility_power_kw < s.it_power_kw * (1 - REL_TOL) - 0.011:
        problems.append(
            Mismatch(
                at + ("facility_power_kw",),
                f"sites.{site_id}.facility_power_kw is "
                f"{_num(s.facility_power_kw)}, less than its IT power {_num(s.it_power_kw)}",
            )
        )
    if maintenance_rate is not None:
        opex = s.energy_usd_per_year + s.colocation_usd_per_year + s.capex_usd * maintenance_rate
        problems += _sum_mismatch(
            at + ("opex_usd_per_year",),
            s.opex_usd_per_year,
            opex,
            "its energy, colocation and maintenance",
            0.03,
        )
    missing = sorted({d.cooling for d in deps} - set(s.cooling_used))
    if missing or s.cooling_used != sorted(set(s.cooling_used)):
        problems.append(
            Mismatch(
                at + ("cooling_used",),
                f"sites.{site_id}.cooling_used is {s.cooling_used} "
                "but its deployments use " + ", ".join(sorted({d.cooling for d in deps})),
            )
        )
    return problems


def _totals_self_problems(plan: Plan) -> list[Mismatch]:
    """The totals are sums over the plan's sites and deployments."""
    t, sites = plan.totals, plan.sites.values()
    deps = [d for s in sites for d in s.deployments]
    sums: list[tuple[str, float, str, float]] = [
        ("chips", sum(d.chips for d in deps), "deployments", 0),
        ("units", sum(d.units for d in deps), "deployments", 0),
        ("racks", sum(s.racks for s in sites), "sites", 0),
        ("fp8_pflops", sum(d.fp8_pflops for d in deps), "deployments", 0.001),
        ("it_power_kw", sum(s.it_power_kw for s in sites), "sites", 0.011),
        ("facility_power_kw", sum(s.facility_power_kw for s in sites), "sites", 0.011),
    ]
    if t.domains is not None:
        sums.append(("domains", sum(d.domains for d in deps), "deployments", 0))
    if t.network_racks is not None:
        sums.append(("network_racks", sum(s.scale_out.network_racks for s in sites), "sites", 0))
    money = 0.01 * (len(plan.sites) + 1)
    for key in ("energy_usd_per_year", "colocation_usd_per_year"):
        if getattr(t, key) is not None:
            sums.append((key, sum(getattr(s, key) for s in sites), "sites", money))
    problems = []
    for key, parts, what, tol in sums:
        problems += _sum_mismatch(("totals", key), t.figure(key), parts, f"its {what}", tol)
    if plan.economics is not None and t.maintenance_usd_per_year is not None:
        maintenance = t.capex_usd * plan.economics.maintenance_rate
        problems += _sum_mismatch(
            ("totals", "maintenance_usd_per_year"),
            t.maintenance_usd_per_year,
            maintenance,
            "capex and the maintenance rate",
            0.011,
        )
    if None not in (t.energy_usd_per_year, t.colocation_usd_per_year, t.maintenance_usd_per_year):
        opex = t.figure("energy_usd_per_year") + t.figure("colocation_usd_per_year")
        opex += t.figure("maintenance_usd_per_year")
        problems += _sum_mismatch(
            ("totals", "opex_usd_per_year"),
            t.opex_usd_per_year,
            opex,
            "energy, colocation and maintenance",
            0.03,
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
    for site_id, s in sorted(plan.sites.items()):
        for i, d in enumerate(s.deployments):
            at: tuple[str | int, ...] = ("sites", site_id, "deployments", i)
            if d.efficiency is not None and d.form in shares and d.efficiency != shares[d.form]:
                problems.append(
                    Mismatch(
                        (*at, "efficiency"),
                        f"sites.{site_id}.deployments.{i}.efficiency is {d.efficiency} but the plan's "
                        f"workload gives {d.form} {shares[d.form]}",
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
                problems += _sum_mismatch(
                    (*at, "effective_fp8_pflops"),
                    d.effective_fp8_pflops,
                    d.fp8_pflops * d.efficiency,
                    "its FP8 PFLOPs x efficiency",
                    0.001,
                )
    if workload:
        deps = sum(len(s.deployments) for s in plan.sites.values())
        problems += _sum_mismatch(
            ("totals", "effective_fp8_pflops"), t.figure("effective_fp8_pflops"), total,
            "its deployments", 0.001 * max(1, deps),
        )
    return problems


def _economics_self_problems(plan: Plan) -> list[Mismatch]:
    """The money terms agree with each other, and the TCO and per-hour figures with them."""
    totals, economics = plan.totals, plan.economics
    if economics is None:
        return []
    problems = []
    years, rate = economics.horizon_years, economics.cost_of_capital
    growth = (1 + rate) ** years
    expected_crf = 1 / years if rate == 0 else rate * growth / (growth - 1)
    if not math.isclose(economics.crf, expected_crf, rel_tol=1e-9):
        problems.append(
            Mismatch(
                ("economics", "crf"),
                f"economics.crf is {economics.crf} but cost_of_capital and horizon_years give {expected_crf}",
            )
        )
    per_capex = years * (economics.crf + economics.maintenance_rate)
    if not math.isclose(economics.tco_per_capex_usd, per_capex, rel_tol=1e-9):
        problems.append(
            Mismatch(
                ("economics", "tco_per_capex_usd"),
                f"economics.tco_per_capex_usd is "
                f"{economics.tco_per_capex_usd} but horizon x (crf + maintenance) is {per_capex}",
            )
        )
    if plan.periods is not None:
        return problems  # the window's TCO and per-hour figures: `phased_self_problems`
    tco = totals.tco_usd
    if totals.energy_usd_per_year is not None and totals.colocation_usd_per_year is not None:
        expected = totals.capex_usd * economics.tco_per_capex_usd + years * (
            totals.energy_usd_per_year + totals.colocation_usd_per_year
        )
        if abs(tco - expected) > 1.0 + 1e-9 * abs(tco):
            problems.append(
                Mismatch(
                    ("totals", "tco_usd"), f"tco_usd is ${tco:,.2f} but capex and opex give ${expected:,.2f}"
                )
            )
    hours = HOURS_PER_YEAR * years
    per_hour = [("usd_per_pflop_hour", "fp8_pflops"), ("usd_per_chip_hour", "chips")]
    if totals.effective_fp8_pflops is not None and totals.usd_per_effective_pflop_hour is not None:
        per_hour.append(("usd_per_effective_pflop_hour", "effective_fp8_pflops"))
    for key, per in per_hour:
        amount = totals.figure(per)
        expected = tco / (amount * hours) if amount > 0 else 0.0
        stated = totals.figure(key)
        if not math.isclose(stated, expected, rel_tol=1e-5, abs_tol=2e-6):
            problems.append(
                Mismatch(("totals", key), f"{key} is {getattr(totals, key)} but the TCO gives {expected:.6f}")
            )
    return problems


def _objective_self_problems(plan: Plan) -> list[Mismatch]:
    """The objective is the plan's own figure of its kind, in its unit; alternatives' deltas follow it."""
    objective = plan.objective
    if objective is None:
        return []
    problems = []
    unit = objective_unit(objective.kind, plan.totals)
    if objective.unit != unit:
        problems.append(
            Mismatch(
                ("objective", "unit"),
                f"objective.unit is {objective.unit!r} but a {objective.kind} objective is in {unit!r}",
            )
        )
    if objective.kind != "max_perf_per_tco" or plan.totals.tco_usd > 0:
        expected = objective_value(objective.kind, plan.totals)
        problems += _sum_mismatch(("objective", "value"), objective.value, expected, "the totals", 0.011)
    best = objective.value
    for i, alt in enumerate(plan.alternatives):
        if alt.objective is None or alt.delta_pct is None or not best:
            continue
        delta = (alt.objective - best) / best * 100
        if abs(alt.delta_pct - delta) > 2e-4 + 1e-6 * abs(delta):
            problems.append(
                Mismatch(
                    ("alternatives", i, "delta_pct"),
                    f"alternatives.{i}.delta_pct is {alt.delta_pct} but its objective gives {delta:.4f}",
                )
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
    deployments; TCO = capex x tco_per_capex_usd + horizon x (energy + colocation); the per-hour figures,
    the objective and the alternatives' deltas follow from the TCO and totals.

    It makes a hand edit show (cut one figure and its sums no longer agree); a forgery consistent in every
    part is what `check_plan` against the specs (`trnplan optimize --check`) finds.
    """
    out_of_range = _range_problems(plan.model_dump())
    if out_of_range:
        return out_of_range
    maintenance = plan.economics.maintenance_rate if plan.economics else None
    problems = _bom_self_problems(plan)
    lines = Counter(line.site for line in plan.bom)
    for site_id, section in sorted(plan.sites.items()):
        problems += _site_self_problems(site_id, section, maintenance, lines[site_id])
    problems += _totals_self_problems(plan)
    problems += _effective_self_problems(plan)
    problems += _economics_self_problems(plan)
    if plan.periods is not None:
        from trnplan.plan.phased import phased_self_problems

        problems += phased_self_problems(plan)
    problems += _objective_self_problems(plan)
    return problems
