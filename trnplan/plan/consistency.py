"""The plan against itself (`self_check`, run on every plan read): every figure it states that can be
recomputed from its own parts (BOM lines, deployments, sites, money terms) without the specs.

A mismatch of a sum or product names its parts' key paths, so the reader of a file can give the line of
the figure and of each part (`Mismatch.located`), and a deployment's counts are checked against each other
(racks = units x racks per unit, chips = racks x chips per rack), so an edited `units` is refused at its
own line rather than only at the total it enters.

`bom_capex_problem` is the one "BOM lines sum to capex, to the cent" check every reader relies on.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trnplan.catalog import HOURS_PER_YEAR
from trnplan.costs import objective_unit, objective_value
from trnplan.errors import KeyPath
from trnplan.numbers import PLAN_DIGITS, cents, plain
from trnplan.plan.model import BomLine, DeploymentRow, PeriodDeployment, PeriodSite, Plan, SiteSection

REL_TOL = 1e-6
"""Relative tolerance of `check_plan`'s comparisons with the cost model."""
MAX_FIGURE = 1e15
"""Largest magnitude of any number a plan file may state: far above every real figure (a plan's money
stops at 1e13 USD, where a cent is still exact) and far below where a sum of figures could overflow."""
SUM_REL = 1e-12
"""Relative slack of a sum here, for floating point only: rounding (figures to 6 decimals, money to the
cent) is allowed for in each check's absolute slack."""
MAX_LINES = 12
"""Lines of parts a message lists one by one; beyond it, the first few and the last."""



def bom_capex_problem(bom: list[BomLine], capex_usd: float) -> str | None:
    """'BOM lines sum to $X but capex_usd is $Y' when the lines do not add up to capex to the cent."""
    bom_cents = sum(cents(line.extended_usd) for line in bom)
    if bom_cents == cents(capex_usd):
        return None
    return f"BOM lines sum to ${bom_cents / 100:,.2f} but capex_usd is ${capex_usd:,.2f}"


def lines_text(lines: Iterable[int]) -> str:
    """`line 12`, `lines 12, 25` or, past MAX_LINES, the first ten and the last: `lines 12, 25, ... 400 (40
    lines)`."""
    shown = sorted(set(lines))
    if len(shown) == 1:
        return f"line {shown[0]}"
    if len(shown) <= MAX_LINES:
        return "lines " + ", ".join(map(str, shown))
    head = ", ".join(map(str, shown[: MAX_LINES - 2]))
    return f"lines {head}, ... {shown[-1]} ({len(shown)} lines)"


def _name(path: KeyPath) -> str:
    return ".".join(str(p) for p in path)


@dataclass(frozen=True)
class Mismatch:
    """A figure a plan states that the plan's own parts contradict: `path` is the figure's key path in
    the file (where a reader points), `message` says what it is and what the parts give.

    A mismatch of a relation (a sum, a product) also names its figure's value (`stated`), the relation
    (`claim`), what the parts give (`result`) and the key paths of those parts (`parts`), so that a reader
    with the file's lines can say where each is (`located`): an edited part is found from its sum's line.
    """

    path: KeyPath
    message: str
    parts: tuple[KeyPath, ...] = ()
    stated: str = ""
    claim: str = ""
    result: str = ""

    def __str__(self) -> str:
        return self.message

    def located(self, line_of: Callable[[KeyPath], int | None]) -> str:
        """The message with the line of the figure and of its parts: `totals.units 1,350 at line 405 is
        not the sum of its deployments' units (1,356: lines 289, 322, 357, 367)`."""
        if not self.claim:
            return self.message
        at = line_of(self.path)
        lines = [n for n in (line_of(p) for p in self.parts) if n]
        where = f" at line {at}" if at else ""
        detail = f"{self.result}: {lines_text(lines)}" if lines else self.result
        return f"{_name(self.path)} {self.stated}{where} {self.claim} ({detail})"


def relation(path: KeyPath, stated: str, claim: str, result: str, parts: Iterable[KeyPath] = ()) -> Mismatch:
    """A figure that does not stand in its relation to its parts: `NAME STATED CLAIM (RESULT)`, e.g.
    `totals.units 1,350 is not the sum of its deployments' units (1,356)`."""
    return Mismatch(path, f"{_name(path)} {stated} {claim} ({result})", tuple(parts), stated, claim, result)


def _num(value: float) -> str:
    return plain(value, 6)


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _sum_mismatch(
    path: KeyPath,
    stated: float,
    parts: float,
    claim: str,
    tol: float,
    where: Iterable[KeyPath] = (),
    money: bool = False,
) -> list[Mismatch]:
    """[Mismatch] when `stated` differs from what its parts give (`parts`, the figures at `where`) by more
    than `tol` (plus SUM_REL of it); `claim` says how ("is not the sum of its sites' racks")."""
    if abs(stated - parts) <= tol + SUM_REL * max(abs(stated), abs(parts)):
        return []
    text = _usd if money else _num
    return [relation(path, text(stated), claim, text(parts), where)]


def _each(items: Iterable[KeyPath], key: str) -> list[KeyPath]:
    return [(*at, key) for at in items]


def _deployment_paths(sites: Mapping[str, SiteSection | PeriodSite], at: KeyPath = ()) -> list[KeyPath]:
    return [
        (*at, "sites", site_id, "deployments", i)
        for site_id, s in sites.items()
        for i in range(len(s.deployments))
    ]


def _site_paths(sites: Mapping[str, Any], at: KeyPath = ()) -> list[KeyPath]:
    return [(*at, "sites", site_id) for site_id in sites]


def _bom_self_problems(plan: Plan) -> list[Mismatch]:
    """Each BOM line is quantity x unit price to the cent and belongs to a site of the plan; the lines sum
    to the plan's capex and, site by site, to each site's capex, to the cent."""
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
                    _num(line.extended_usd),
                    f"is not quantity x unit_usd of {line.item!r}",
                    f"{_num(line.quantity)} x {_num(line.unit_usd)} = {_num(product)}",
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
    if bom_capex_problem(plan.bom, plan.totals.capex_usd):
        problems.append(
            relation(
                ("totals", "capex_usd"),
                _usd(plan.totals.capex_usd),
                "is not what the BOM lines sum to",
                _usd(sum(cents(line.extended_usd) for line in plan.bom) / 100),
                [("bom", i, "extended_usd") for i in range(len(plan.bom))],
            )
        )
    for site_id, total in sorted(site_cents.items()):
        stated = plan.sites[site_id].capex_usd
        if total != cents(stated):
            problems.append(
                relation(
                    ("sites", site_id, "capex_usd"),
                    _usd(stated),
                    "is not what the site's BOM lines sum to",
                    _usd(total / 100),
                    site_lines[site_id],
                )
            )
    return problems


def _site_self_problems(
    site_id: str, s: SiteSection, maintenance_rate: float | None, bom_lines: int
) -> list[Mismatch]:
    """A site's racks, IT power and capex are those of its deployments and fabric; its facility power is at
    least its IT power (PUE >= 1); its opex is energy + colocation + maintenance."""
    at: KeyPath = ("sites", site_id)
    deps, fabric = s.deployments, s.scale_out
    rows = _deployment_paths({site_id: s})
    problems = _sum_mismatch(
        at + ("racks",),
        s.racks,
        sum(d.racks for d in deps),
        "is not the sum of its deployments' racks",
        0,
        _each(rows, "racks"),
    )
    problems += _sum_mismatch(
        at + ("it_power_kw",),
        s.it_power_kw,
        sum(d.it_power_kw for d in deps) + fabric.it_power_kw,
        "is not the sum of its deployments' and scale-out fabric's it_power_kw",
        0.011,
        [*_each(rows, "it_power_kw"), (*at, "scale_out", "it_power_kw")],
    )
    rounding = 0.01 * (bom_lines + len(deps) + 2)  # the parts are rounded to the cent line by line
    problems += _sum_mismatch(
        at + ("capex_usd",),
        s.capex_usd,
        sum(d.capex_usd for d in deps) + fabric.capex_usd,
        "is not the sum of its deployments' and scale-out fabric's capex_usd",
        rounding,
        [*_each(rows, "capex_usd"), (*at, "scale_out", "capex_usd")],
        money=True,
    )
    if s.facility_power_kw < s.it_power_kw * (1 - REL_TOL) - 0.011:
        problems.append(
            relation(
                at + ("facility_power_kw",),
                _num(s.facility_power_kw),
                "is less than its IT power (facility power is IT power x a PUE of at least 1)",
                f"it_power_kw {_num(s.it_power_kw)}",
                [at + ("it_power_kw",)],
            )
        )
    if maintenance_rate is not None:
        opex = s.energy_usd_per_year + s.colocation_usd_per_year + s.capex_usd * maintenance_rate
        problems += _sum_mismatch(
            at + ("opex_usd_per_year",),
            s.opex_usd_per_year,
            opex,
            "is not its energy + colocation + capex x the maintenance rate",
            0.03,
            [
                at + ("energy_usd_per_year",),
                at + ("colocation_usd_per_year",),
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
                _each(rows, "cooling"),
            )
        )
    return problems


def _totals_self_problems(plan: Plan) -> list[Mismatch]:
    """The totals are sums over the plan's sites and deployments."""
    t, sites = plan.totals, plan.sites.values()
    deps = [d for s in sites for d in s.deployments]
    rows, site_rows = _deployment_paths(plan.sites), _site_paths(plan.sites)
    sums: list[tuple[str, float, str, float, list[KeyPath]]] = [
        ("chips", sum(d.chips for d in deps), "deployments'", 0, _each(rows, "chips")),
        ("units", sum(d.units for d in deps), "deployments'", 0, _each(rows, "units")),
        ("racks", sum(s.racks for s in sites), "sites'", 0, _each(site_rows, "racks")),
        ("fp8_pflops", sum(d.fp8_pflops for d in deps), "deployments'", 0.001, _each(rows, "fp8_pflops")),
        ("it_power_kw", sum(s.it_power_kw for s in sites), "sites'", 0.011, _each(site_rows, "it_power_kw")),
        (
            "facility_power_kw",
            sum(s.facility_power_kw for s in sites),
            "sites'",
            0.011,
            _each(site_rows, "facility_power_kw"),
        ),
    ]
    if t.domains is not None:
        sums.append(("domains", sum(d.domains for d in deps), "deployments'", 0, _each(rows, "domains")))
    if t.network_racks is not None:
        sums.append(
            (
                "network_racks",
                sum(s.scale_out.network_racks for s in sites),
                "sites' scale-out",
                0,
                [(*at, "scale_out", "network_racks") for at in site_rows],
            )
        )
    money = 0.01 * (len(plan.sites) + 1)
    for key in ("energy_usd_per_year", "colocation_usd_per_year"):
        if getattr(t, key) is not None:
            sums.append((key, sum(getattr(s, key) for s in sites), "sites'", money, _each(site_rows, key)))
    problems = []
    for key, parts, whose, tol, where in sums:
        problems += _sum_mismatch(
            ("totals", key), t.figure(key), parts, f"is not the sum of its {whose} {key}", tol, where
        )
    if plan.economics is not None and t.maintenance_usd_per_year is not None:
        maintenance = t.capex_usd * plan.economics.maintenance_rate
        problems += _sum_mismatch(
            ("totals", "maintenance_usd_per_year"),
            t.maintenance_usd_per_year,
            maintenance,
            "is not capex_usd x the maintenance rate",
            0.011,
            [("totals", "capex_usd"), ("economics", "maintenance_rate")],
            money=True,
        )
    if None not in (t.energy_usd_per_year, t.colocation_usd_per_year, t.maintenance_usd_per_year):
        opex = t.figure("energy_usd_per_year") + t.figure("colocation_usd_per_year")
        opex += t.figure("maintenance_usd_per_year")
        problems += _sum_mismatch(
            ("totals", "opex_usd_per_year"),
            t.opex_usd_per_year,
            opex,
            "is not its energy + colocation + maintenance per year",
            0.03,
            _each([("totals",)], "energy_usd_per_year")
            + _each([("totals",)], "colocation_usd_per_year")
            + _each([("totals",)], "maintenance_usd_per_year"),
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
            if d.efficiency is not None and d.form in shares and d.efficiency != shares[d.form]:
                problems.append(
                    relation(
                        (*at, "efficiency"),
                        _num(d.efficiency),
                        f"is not what the plan's workload gives {d.form}",
                        _num(shares[d.form]),
                        [("workload", "efficiency", d.form)],
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
                problems += _sum_mismatch(
                    (*at, "effective_fp8_pflops"),
                    d.effective_fp8_pflops,
                    d.fp8_pflops * d.efficiency,
                    "is not its fp8_pflops x efficiency",
                    0.001,
                    [(*at, "fp8_pflops"), (*at, "efficiency")],
                )
    if workload:
        deps = sum(len(s.deployments) for s in plan.sites.values())
        problems += _sum_mismatch(
            ("totals", "effective_fp8_pflops"),
            t.figure("effective_fp8_pflops"),
            total,
            "is not the sum of its deployments' effective_fp8_pflops",
            0.001 * max(1, deps),
            stated,
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
            relation(
                ("economics", "crf"),
                repr(economics.crf),
                "is not the capital recovery factor of cost_of_capital over horizon_years",
                repr(expected_crf),
                [("economics", "cost_of_capital"), ("economics", "horizon_years")],
            )
        )
    per_capex = years * (economics.crf + economics.maintenance_rate)
    if not math.isclose(economics.tco_per_capex_usd, per_capex, rel_tol=1e-9):
        problems.append(
            relation(
                ("economics", "tco_per_capex_usd"),
                repr(economics.tco_per_capex_usd),
                "is not horizon_years x (crf + maintenance_rate)",
                repr(per_capex),
                [("economics", k) for k in ("horizon_years", "crf", "maintenance_rate")],
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
                relation(
                    ("totals", "tco_usd"),
                    _usd(tco),
                    "is not capex_usd x tco_per_capex_usd + horizon_years x (energy + colocation per year)",
                    _usd(expected),
                    [
                        ("totals", "capex_usd"),
                        ("economics", "tco_per_capex_usd"),
                        ("economics", "horizon_years"),
                        ("totals", "energy_usd_per_year"),
                        ("totals", "colocation_usd_per_year"),
                    ],
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
                relation(
                    ("totals", key),
                    str(getattr(totals, key)),
                    f"is not tco_usd / ({per} x {HOURS_PER_YEAR:,} hours x horizon_years)",
                    f"{expected:.6f}",
                    [("totals", "tco_usd"), ("totals", per), ("economics", "horizon_years")],
                )
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
            relation(
                ("objective", "unit"),
                repr(objective.unit),
                f"is not the unit of a {objective.kind} objective",
                repr(unit),
                [("objective", "kind")],
            )
        )
    if objective.kind != "max_perf_per_tco" or plan.totals.tco_usd > 0:
        expected = objective_value(objective.kind, plan.totals)
        perf = "effective_fp8_pflops" if plan.totals.effective_fp8_pflops is not None else "fp8_pflops"
        figures = {"min_tco": ["tco_usd"], "max_perf": [perf]}.get(objective.kind, [perf, "tco_usd"])
        problems += _sum_mismatch(
            ("objective", "value"),
            objective.value,
            expected,
            f"is not the {objective.kind} objective of the totals",
            0.011,
            [("totals", f) for f in figures],
        )
    best = objective.value
    for i, alt in enumerate(plan.alternatives):
        if alt.objective is None or alt.delta_pct is None or not best:
            continue
        delta = (alt.objective - best) / best * 100
        if abs(alt.delta_pct - delta) > 2e-4 + 1e-6 * abs(delta):
            problems.append(
                relation(
                    ("alternatives", i, "delta_pct"),
                    str(alt.delta_pct),
                    "is not the change from the plan's objective to the alternative's, in percent",
                    f"{delta:.4f}",
                    [("alternatives", i, "objective"), ("objective", "value")],
                )
            )
    return problems


_PER = (("units", "racks", "racks per unit"), ("racks", "chips", "chips per rack"))
"""A deployment's figures that are whole multiples of one another, by a number that is its form's."""


@dataclass(frozen=True)
class _Row:
    """One deployment's counts, and which of them the plan's sums agree with."""

    at: KeyPath
    form: str
    counts: dict[str, int]
    summed: frozenset[str]


def _rows(plan: Plan) -> list[_Row]:
    """Every deployment of the plan (its sites and each period's); a count is `summed` when the sum it
    enters agrees (units and chips: the totals; racks: the site's)."""
    rows = []

    def add(at: KeyPath, sites: Mapping[str, SiteSection | PeriodSite], units: int, chips: int) -> None:
        deps = [d for s in sites.values() for d in s.deployments]
        agree = {"units": units == sum(d.units for d in deps), "chips": chips == sum(d.chips for d in deps)}
        for site_id, s in sorted(sites.items()):
            racks = s.racks == sum(d.racks for d in s.deployments)
            mine: Sequence[DeploymentRow | PeriodDeployment] = s.deployments
            for j, d in enumerate(mine):
                summed = frozenset(k for k, ok in {**agree, "racks": racks}.items() if ok)
                counts = {"units": d.units, "racks": d.racks, "chips": d.chips}
                rows.append(_Row((*at, "sites", site_id, "deployments", j), d.form, counts, summed))

    add((), plan.sites, plan.totals.units, plan.totals.chips)
    for i, p in enumerate(plan.periods or []):
        add(("periods", i), p.sites, p.totals.units, p.totals.chips)
    return rows


def _usual(ratios: Counter[int]) -> int | None:
    """The ratio most deployments of a form have; None when none is more common than every other."""
    ranked = ratios.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _deployment_self_problems(plan: Plan) -> list[Mismatch]:
    """A deployment's racks are its units x its form's racks per unit and its chips its racks x chips per
    rack: whole numbers, the same in every deployment of the form. The figure blamed is the one whose sum
    disagrees (an edited `units` shows here at its own line, not only in `totals.units`)."""
    rows = _rows(plan)
    problems: list[Mismatch] = []
    blamed: set[KeyPath] = set()
    for small, big, per in _PER:
        ratios: dict[str, Counter[int]] = defaultdict(Counter)
        for r in rows:
            a, b = r.counts[small], r.counts[big]
            if a > 0 and b > 0 and b % a == 0:
                ratios[r.form][b // a] += 1
        for r in rows:
            a, b = r.counts[small], r.counts[big]
            usual = _usual(ratios[r.form])
            if a <= 0 or b <= 0 or (b % a == 0 and usual in (None, b // a)):
                continue  # a count not stated (0) is for the sums to find
            others = [
                o.at
                for o in rows
                if o.form == r.form
                and o.at != r.at
                and o.counts[small] > 0
                and o.counts[big] % o.counts[small] == 0
                and o.counts[big] // o.counts[small] == usual
            ]
            if small in r.summed and big not in r.summed:  # the small count agrees with its sum: blame big
                path, parts = (*r.at, big), [(*r.at, small), *_each(others, big)]
                if usual is None:
                    claim, result = f"is not its {small} x a whole number of {per}", f"{a:,} {small}"
                else:
                    claim = f"is not its {small} x {usual}, the {per} of {r.form} in its other deployments"
                    result = f"{a:,} x {usual} = {a * usual:,}"
                stated = b
            else:
                path, parts = (*r.at, small), [(*r.at, big), *_each(others, small)]
                if usual is None:
                    claim, result = f"does not divide its {big} into a whole number of {per}", f"{b:,} {big}"
                else:
                    claim = f"is not its {big} / {usual}, the {per} of {r.form} in its other deployments"
                    result = f"{b:,} / {usual} = {_num(b / usual)}"
                stated = a
            if path not in blamed:
                blamed.add(path)
                problems.append(relation(path, f"{stated:,}", claim, result, parts))
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
    form's numbers; TCO = capex x tco_per_capex_usd + horizon x (energy + colocation); the per-hour
    figures, the objective and the alternatives' deltas follow from the TCO and totals.

    It makes a hand edit show (cut one figure and its sums no longer agree); a forgery consistent in every
    part is what `check_plan` against the specs (`trnplan optimize --check`) finds.
    """
    out_of_range = _range_problems(plan.model_dump())
    if out_of_range:
        return out_of_range
    maintenance = plan.economics.maintenance_rate if plan.economics else None
    problems = _deployment_self_problems(plan)
    problems += _bom_self_problems(plan)
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
