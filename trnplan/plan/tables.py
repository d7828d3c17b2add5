"""A plan's tables for spreadsheets (`optimize --format csv`): its deployments, its timeline and its
purchases, one table a document, each row led by its scenario so the plans of `--all` stack into one
sheet. A plan without periods is one period: its timeline is a row per site and its purchases are its
deployments, with an empty `period`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from trnplan.numbers import cents, fmt
from trnplan.plan.model import Alternative, Plan
from trnplan.safetext import CsvCell, csv_text

CSV_TABLES: dict[str, tuple[str, ...]] = {
    "deployments": ("scenario", "site", "form", "cooling", "scale_up_switch", "units", "racks", "chips",
                    "domains", "fp8_pflops", "effective_fp8_pflops", "efficiency", "it_power_kw",
                    "capex_usd"),
    "timeline": ("scenario", "period", "site", "units_bought", "chips_installed", "it_power_kw",
                 "rack_positions_used", "scale_out_switch", "tiers", "capex_bought_usd"),
    "purchases": ("scenario", "period", "site", "form", "cooling", "scale_up_switch", "units_bought",
                  "units_installed", "chips_bought"),
}
"""Each table's header: `deployments` the installed base (a phased plan's last period), `timeline` per
period and site what is bought and installed, `purchases` per period what each option buys."""

Row = list[CsvCell]


def bought_capex(plan: Plan) -> dict[tuple[str, str], int]:
    """(period start, site) -> cents bought there then, from the BOM lines."""
    out: dict[tuple[str, str], int] = {}
    for line in plan.bom:
        key = (line.period or "", line.site)
        out[key] = out.get(key, 0) + cents(line.extended_usd)
    return out


def _deployments(plan: Plan) -> Iterator[Row]:
    for site, s in sorted(plan.sites.items()):
        for d in s.deployments:
            yield [plan.scenario, site, d.form, d.cooling, d.scale_up_switch, d.units, d.racks, d.chips,
                   d.domains, d.fp8_pflops, d.effective_fp8_pflops, d.efficiency, d.it_power_kw, d.capex_usd]


def _timeline(plan: Plan) -> Iterator[Row]:
    if plan.periods is None:
        for site, s in sorted(plan.sites.items()):
            f = s.scale_out
            yield [plan.scenario, "", site, sum(d.units for d in s.deployments),
                   sum(d.chips for d in s.deployments), s.it_power_kw, s.racks + f.network_racks, f.switch,
                   f.tiers, s.capex_usd]
        return
    bought = bought_capex(plan)
    for period in plan.periods:
        for site, ps in sorted(period.sites.items()):
            yield [plan.scenario, period.start, site, sum(d.bought for d in ps.deployments),
                   sum(d.chips for d in ps.deployments), ps.it_power_kw, ps.positions, ps.scale_out.switch,
                   ps.scale_out.tiers, bought.get((period.start, site), 0) / 100]


def _purchases(plan: Plan) -> Iterator[Row]:
    if plan.periods is None:
        for site, s in sorted(plan.sites.items()):
            for d in s.deployments:
                yield [plan.scenario, "", site, d.form, d.cooling, d.scale_up_switch, d.units, d.units,
                       d.chips]
        return
    for period in plan.periods:
        for site, ps in sorted(period.sites.items()):
            for pd in ps.deployments:
                if pd.bought:
                    per_unit = pd.chips // pd.units
                    yield [plan.scenario, period.start, site, pd.form, pd.cooling, pd.scale_up_switch,
                           pd.bought, pd.units, pd.bought * per_unit]


_ROWS = {"deployments": _deployments, "timeline": _timeline, "purchases": _purchases}


def plans_to_csv(plans: Sequence[Plan], table: str) -> str:
    """One of `CSV_TABLES` for the plans, in their order, as CSV text (`safetext.csv_text`)."""
    return csv_text(CSV_TABLES[table], (row for plan in plans for row in _ROWS[table](plan)))


# --- alternatives: one row per distinct plan, and the plan's small choices ---------------------------


def alternative_rows(plan: Plan) -> list[tuple[list[str], Alternative]]:
    """The plan's alternatives with identical ones merged: the same plan found as the best without each of
    several choices (without cooling liquid and without the only liquid form, say) is one row naming all
    of them, in the order of the first. Plans that do not exist stay a row each: each alone is infeasible;
    so does one a limit stopped before its proof (its row says so: `stopped_text`)."""
    rows: list[tuple[list[str], Alternative]] = []
    for alt in plan.alternatives:
        same = next((r for r in rows if alt.feasible and r[1].feasible and r[1].choice == alt.choice
                     and cents(r[1].tco_usd or 0) == cents(alt.tco_usd or 0)
                     and not alt.stopped and not r[1].stopped), None)  # each unproven one: a row
        if same is not None:
            same[0].append(alt.without)
        else:
            rows.append(([alt.without], alt))
    return rows


def stopped_text(alt: Alternative) -> str:
    """Why an alternative is not proven, in words: 'stopped at the node limit, within 0.038% of its bound'
    (a Ctrl-C: 'interrupted, ...'); '' for one that was proven."""
    if not alt.stopped:
        return ""
    how = "interrupted" if alt.stopped == "interrupted" else f"stopped at the {alt.stopped}"
    gap = "gap unknown" if alt.mip_gap is None else f"within {fmt(alt.mip_gap, 'pct')} of its bound"
    return f"{how}, {gap}"


SMALL_SHARE = 0.1
"""A choice that holds less than this share of a plan's chips is a small choice: it is said why it is made."""


@dataclass(frozen=True)
class SmallChoice:
    """A form, cooling or scale-up switch holding a small share of the plan's chips, and what the best plan
    without it costs more (from the alternatives): why it is in the plan."""

    without: str
    units: int
    chips: int
    share: float
    delta_usd: float | None
    delta_pct: float | None
    stopped: str = ""  # its alternative's search stopped before its proof, in words (`stopped_text`)


def small_choices(plan: Plan) -> list[SmallChoice]:
    """The plan's choices (form, cooling, scale-up switch) that hold under SMALL_SHARE of its chips and have
    an alternative without them, each with that alternative's extra TCO (USD for min_tco) and change."""
    total = plan.totals.chips
    deployments = [d for s in plan.sites.values() for d in s.deployments]
    out = []
    for alt in plan.alternatives:
        kind, _, item = alt.without.rpartition(" ")
        field = {"form": "form", "cooling": "cooling", "scale-up switch": "scale_up_switch"}.get(kind)
        if field is None or not total:
            continue
        using = [d for d in deployments if getattr(d, field) == item]
        chips = sum(d.chips for d in using)
        if not using or chips / total >= SMALL_SHARE:
            continue
        minimising = plan.objective is not None and plan.objective.kind == "min_tco"
        priced = alt.tco_usd is not None and minimising
        delta = alt.tco_usd - plan.totals.tco_usd if priced and alt.tco_usd is not None else None
        out.append(SmallChoice(alt.without, sum(d.units for d in using), chips, chips / total, delta,
                               alt.delta_pct if alt.feasible else None, stopped_text(alt)))
    return out
