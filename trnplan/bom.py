"""Bill of materials of a plan: its priced line items, by site and category, totalling its capex to the cent.

Pure functions of a plan (the lines are embedded in it by the cost model's `evaluate`); no catalog.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trnplan.errors import InputError
from trnplan.numbers import canon, cents, quantity_text, usd_text
from trnplan.plan.mismatch import bom_capex_problem
from trnplan.plan.model import BomLine, Plan
from trnplan.safetext import csv_text, md_code, md_text

BOM_FORMAT = "trnplan-bom/1"
CSV_FIELDS = ("site", "form", "racks", "category", "item", "quantity", "unit_usd", "extended_usd", "share",
              "it_kw")


@dataclass(frozen=True)
class Bom:
    """A plan's lines sorted by site, category, item; total_usd equals capex_usd to the cent."""

    scenario: str
    lines: list[BomLine]
    total_usd: float
    capex_usd: float
    periods: list[str] | None = None
    """A phased plan's period starts: its BOM is the purchase schedule, lines sorted by period first."""
    parts: dict[tuple[str, str], list[Part]] = field(default_factory=dict)
    """(period or "", site) -> the deployments the lines price (bought in the period, for a purchase
    schedule): what `form_of` and `racks_of` read."""

    @property
    def phased(self) -> bool:
        return self.periods is not None

    def share(self, line: BomLine) -> float:
        """The line's share of capex, to six decimals: extended_usd / capex_usd (0 when capex is 0)."""
        capex_cents = cents(self.capex_usd)
        return round(cents(line.extended_usd) / capex_cents, 6) if capex_cents else 0.0

    def by_site(self) -> dict[str, float]:
        """Subtotal per site, summed in cents."""
        return _subtotals(self.lines, lambda line: line.site)

    def by_category(self) -> dict[str, float]:
        """Subtotal per category over all sites, summed in cents."""
        return _subtotals(self.lines, lambda line: line.category)

    def by_period(self) -> dict[str, float]:
        """A purchase schedule's subtotal per period (each period of the plan, 0 when it buys nothing)."""
        bought = _subtotals(self.lines, lambda line: line.period or "")
        return {**dict.fromkeys(self.periods or [], 0.0), **bought}

    def _users(self, line: BomLine) -> list[Part]:
        """The deployments at the line's site (and period) that line is for: those of the form its item
        names; of its chip (at a site of one form); of its scale-up switch; of its cooling, when their IT kW
        is the whole line's (the network's share is not in it)."""
        parts = self.parts.get((line.period or "", line.site), [])
        named = [p for p in parts if line.item.endswith(f"({p.form})")]
        if named:
            return named
        if line.category == "chips":
            return parts if len({p.form for p in parts}) == 1 else []
        if line.category == "scale_up":
            return [p for p in parts if line.item.endswith(f"({p.scale_up_switch})")]
        if line.category == "cooling" and line.it_kw is not None:
            users = [p for p in parts if line.item.endswith(f"({p.cooling})")]
            if abs(sum(p.it_kw for p in users) - line.it_kw) <= 1e-3 * max(1.0, line.it_kw):
                return users
        return []

    def form_of(self, line: BomLine) -> str | None:
        """The one form a line is for (`_users`); None for the site's fabric, for cooling shared with the
        network and for lines several forms share."""
        forms = {p.form for p in self._users(line)}
        return forms.pop() if len(forms) == 1 else None

    def racks_of(self, line: BomLine) -> int | None:
        """The compute racks of the line's form at its site (in its period) that the line is for; None when
        the line is for no one form."""
        if self.form_of(line) is None:
            return None
        return sum(p.racks for p in self._users(line))


@dataclass(frozen=True)
class Part:
    """A deployment as the BOM reads it: its option, compute racks and IT kW (bought, in a schedule)."""

    form: str
    cooling: str
    scale_up_switch: str
    racks: int
    it_kw: float


def _subtotals(lines: list[BomLine], key: Callable[[BomLine], str]) -> dict[str, float]:
    acc: dict[str, int] = defaultdict(int)
    for line in lines:
        acc[key(line)] += cents(line.extended_usd)
    return {k: acc[k] / 100 for k in sorted(acc)}


def _mispriced(line: BomLine) -> bool:
    """Whether quantity x unit_usd misses extended_usd by more than a cent (plus the plan's 6-decimal
    rounding of the two factors)."""
    slack = 0.01 + (abs(line.quantity) + abs(line.unit_usd)) * 1e-6
    return abs(line.quantity * line.unit_usd - line.extended_usd) > slack


def build_bom(plan: Plan) -> Bom:
    """The plan's BOM, checked: every line prices to the cent and the lines sum exactly to totals.capex_usd.

    Raises InputError when the plan is corrupt (a mispriced line, or lines that do not sum to the capex).
    """
    where_plan = f"plan '{plan.scenario}'"
    for i, line in enumerate(plan.bom):
        if _mispriced(line):
            raise InputError(
                f"{where_plan}: bom[{i}] ({line.item}): {line.quantity:g} x ${line.unit_usd:,.2f} is not the "
                f"extended ${line.extended_usd:,.2f}; the plan file is corrupt"
            )
    lines = sorted(plan.bom, key=lambda ln: (ln.period or "", ln.site, ln.category, ln.item, ln.unit_usd,
                                             ln.quantity))
    total_cents = sum(cents(line.extended_usd) for line in lines)
    capex_cents = cents(plan.bom_capex_usd)
    if bom_capex_problem(lines, plan.bom_capex_usd) is not None:
        what = "totals.capex_usd" if plan.futures is None else "the shared purchases' capex_usd"
        raise InputError(
            f"{where_plan}: BOM lines sum to ${total_cents / 100:,.2f} but {what} is "
            f"${capex_cents / 100:,.2f}; the plan file is corrupt or was edited by hand (re-plan it)"
        )
    periods = [p.start for p in plan.periods] if plan.periods is not None else None
    return Bom(scenario=plan.scenario, lines=lines, total_usd=total_cents / 100, capex_usd=capex_cents / 100,
               periods=periods, parts=_parts(plan))


def _parts(plan: Plan) -> dict[tuple[str, str], list[Part]]:
    """The deployments the plan's BOM lines price, by (period or "", site): each site's, or for a purchase
    schedule what each period buys."""
    out: dict[tuple[str, str], list[Part]] = defaultdict(list)
    if plan.periods is None:
        for site, s in plan.sites.items():
            for d in s.deployments:
                out[("", site)].append(Part(d.form, d.cooling, d.scale_up_switch, d.racks, d.it_power_kw))
        return dict(out)
    for period in plan.periods:
        for site, ps in period.sites.items():
            for pd in ps.deployments:
                if pd.bought:
                    share = pd.bought / pd.units
                    out[(period.start, site)].append(Part(pd.form, pd.cooling, pd.scale_up_switch,
                                                          pd.bought * (pd.racks // pd.units),
                                                          pd.it_power_kw * share))
    return dict(out)


# --- output --------------------------------------------------------------------------------------


def bom_to_csv(bom: Bom) -> str:
    """One row per line, header `site,form,racks,category,item,quantity,unit_usd,extended_usd,share,it_kw` (a
    purchase schedule's led by `period`), no total row (the total is the plan's capex; summing extended_usd
    gives it). `form` and `racks`: the form a line is for and its compute racks there (`Bom.form_of`), empty
    for the fabric, cooling and lines several forms share. Numbers read back exactly with float(); text is
    neutralised and quoted (`safetext.csv_text`)."""
    lead = ["period"] if bom.phased else []
    rows = (
        [
            *([line.period or ""] if bom.phased else []),
            line.site,
            bom.form_of(line),
            bom.racks_of(line),
            line.category,
            line.item,
            line.quantity,
            line.unit_usd,
            line.extended_usd,
            bom.share(line),
            line.it_kw,
        ]
        for line in bom.lines
    )
    return csv_text([*lead, *CSV_FIELDS], rows)


def bom_to_dict(bom: Bom) -> dict[str, Any]:
    """The JSON form: format, scenario, lines (each with its share; its life_years where it has its own),
    total_usd, capex_usd and subtotals by site and category; a purchase schedule's lines name their period,
    and it has subtotals by period."""
    def fields(line: BomLine) -> set[str]:
        """Left out: a single-period BOM's period; a life_years a line does not have of its own."""
        period = set() if bom.phased else {"period"}
        return period | ({"life_years"} if line.life_years is None else set())

    lines = [{**line.model_dump(exclude=fields(line)), "share": bom.share(line)} for line in bom.lines]
    data: dict[str, Any] = {
        "format": BOM_FORMAT,
        "scenario": bom.scenario,
        "lines": lines,
        "total_usd": bom.total_usd,
        "capex_usd": bom.capex_usd,
        "by_site": bom.by_site(),
        "by_category": bom.by_category(),
    }
    if bom.phased:
        data["by_period"] = bom.by_period()
    return data


def bom_to_json(bom: Bom) -> str:
    """`bom_to_dict` as stable, indented JSON text ending in a newline."""
    return (
        json.dumps(canon(bom_to_dict(bom)), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
        + "\n"
    )


def _share_text(part_usd: float, total_usd: float) -> str:
    return f"{part_usd / total_usd * 100:.1f}%" if total_usd else ""


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _site_rows(site: str, site_lines: list[BomLine], total: float) -> list[str]:
    """A site's lines by category, a subtotal per category of several lines, then the site subtotal."""
    out = []
    by_category: dict[str, list[BomLine]] = defaultdict(list)
    for line in site_lines:
        by_category[line.category].append(line)
    for category in sorted(by_category):
        cat_lines = by_category[category]
        for line in cat_lines:
            out.append(
                _row(
                    md_text(site),
                    md_text(category),
                    md_text(line.item),
                    quantity_text(line.quantity),
                    usd_text(line.unit_usd),
                    usd_text(line.extended_usd),
                    _share_text(line.extended_usd, total),
                )
            )
        if len(cat_lines) > 1:
            sub = sum(cents(line.extended_usd) for line in cat_lines) / 100
            out.append(
                _row(md_text(site), md_text(category), "*subtotal*", "", "", f"*{usd_text(sub)}*",
                     _share_text(sub, total))
            )
    sub = sum(cents(line.extended_usd) for line in site_lines) / 100
    out.append(
        _row(f"**{md_text(site)}**", "", "**site subtotal**", "", "", f"**{usd_text(sub)}**",
             _share_text(sub, total))
    )
    return out


def bom_to_markdown(bom: Bom) -> str:
    """A GFM table of the lines with a subtotal per site and category (when it has several lines), per site,
    and the total; then a table by category over all sites. Text from the plan goes through
    `safetext.md_text`: a CR or `</details>` in an item cannot end the table."""
    if bom.phased:
        return _schedule_markdown(bom)
    total = bom.total_usd
    out = [
        f"### Bill of materials: {md_code(bom.scenario)}",
        "",
        _row("Site", "Category", "Item", "Quantity", "Unit USD", "Extended USD", "Share"),
        "|---|---|---|--:|--:|--:|--:|",
    ]
    by_site: dict[str, list[BomLine]] = defaultdict(list)
    for line in bom.lines:
        by_site[line.site].append(line)
    for site in sorted(by_site):
        out += _site_rows(site, by_site[site], total)
    all_share = "100.0%" if total else ""
    out.append(_row("**total**", "", "", "", "", f"**{usd_text(total)}**", all_share))
    out += ["", _row("Category", "USD", "Share"), "|---|--:|--:|"]
    for category, usd in bom.by_category().items():
        out.append(_row(md_text(category), usd_text(usd), _share_text(usd, total)))
    out.append(_row("**total**", f"**{usd_text(total)}**", all_share))
    out += ["", f"Total equals the plan's capex: {usd_text(bom.capex_usd)}."]
    return "\n".join(out) + "\n"


def _schedule_markdown(bom: Bom) -> str:
    """A purchase schedule as GFM: the lines by period, site and category with a subtotal per period and
    the total; then what each period buys, and the categories over the window."""
    total = bom.total_usd
    all_share = "100.0%" if total else ""
    out = [
        f"### Purchase schedule: {md_code(bom.scenario)}",
        "",
        _row("Period", "Site", "Category", "Item", "Quantity", "Unit USD", "Extended USD", "Share"),
        "|---|---|---|---|--:|--:|--:|--:|",
    ]
    by_period: dict[str, list[BomLine]] = defaultdict(list)
    for line in bom.lines:
        by_period[line.period or ""].append(line)
    for period in sorted(by_period):
        for line in by_period[period]:
            out.append(
                _row(md_text(period), md_text(line.site), md_text(line.category), md_text(line.item),
                     quantity_text(line.quantity), usd_text(line.unit_usd), usd_text(line.extended_usd),
                     _share_text(line.extended_usd, total))
            )
        sub = sum(cents(line.extended_usd) for line in by_period[period]) / 100
        out.append(_row(f"**{md_text(period)}**", "", "", "**period subtotal**", "", "",
                        f"**{usd_text(sub)}**", _share_text(sub, total)))
    out.append(_row("**total**", "", "", "", "", "", f"**{usd_text(total)}**", all_share))
    out += ["", _row("Period", "Bought USD", "Share"), "|---|--:|--:|"]
    for period, usd in bom.by_period().items():
        out.append(_row(md_text(period), usd_text(usd), _share_text(usd, total)))
    out += ["", _row("Category", "USD", "Share"), "|---|--:|--:|"]
    for category, usd in bom.by_category().items():
        out.append(_row(md_text(category), usd_text(usd), _share_text(usd, total)))
    out.append(_row("**total**", f"**{usd_text(total)}**", all_share))
    out += ["", f"Total equals the plan's capex, everything bought in the window: {usd_text(bom.capex_usd)}."]
    return "\n".join(out) + "\n"
