"""Bill of materials of a plan: its priced line items, by site and category, totalling its capex to the cent.

Pure functions of a plan file (the lines are embedded in it by the cost model's `evaluate`); no catalog.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from trnplan.costs import BomLine, cents
from trnplan.errors import InputError
from trnplan.plan import Plan, canon

BOM_FORMAT = "trnplan-bom/1"
CSV_FIELDS = ("site", "category", "item", "quantity", "unit_usd", "extended_usd", "share", "it_kw")


@dataclass(frozen=True)
class Bom:
    """A plan's lines sorted by site, category, item; total_usd equals capex_usd to the cent."""

    scenario: str
    lines: list[BomLine]
    total_usd: float
    capex_usd: float

    def by_site(self) -> dict[str, float]:
        """Subtotal per site, summed in cents."""
        return _subtotals(self.lines, lambda line: line.site)

    def by_category(self) -> dict[str, float]:
        """Subtotal per category over all sites, summed in cents."""
        return _subtotals(self.lines, lambda line: line.category)


def _subtotals(lines: list[BomLine], key: Any) -> dict[str, float]:
    acc: dict[str, int] = defaultdict(int)
    for line in lines:
        acc[key(line)] += cents(line.extended_usd)
    return {k: acc[k] / 100 for k in sorted(acc)}


def _number(line: dict[str, Any], key: str, where: str, optional: bool = False) -> float | None:
    value = line.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: {key} must be a number, got {value!r}")
    return value


def _text(line: dict[str, Any], key: str, where: str) -> str:
    value = line.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def build_bom(plan: Plan) -> Bom:
    """The plan's BOM, checked: every line prices to the cent and the lines sum exactly to totals.capex_usd.

    Raises InputError when the plan is corrupt (a malformed line, a mispriced line, or lines that do not
    sum to the capex).
    """
    where_plan = f"plan '{plan.scenario}'"
    raw: list[tuple[str, str, str, float, float, int, float | None]] = []
    for i, line in enumerate(plan.bom):
        where = f"{where_plan}: bom[{i}]"
        if not isinstance(line, dict):
            raise InputError(f"{where}: not a mapping")
        site, category, item = (_text(line, k, where) for k in ("site", "category", "item"))
        quantity = _number(line, "quantity", where)
        unit_usd = _number(line, "unit_usd", where)
        extended_usd = _number(line, "extended_usd", where)
        it_kw = _number(line, "it_kw", where, optional=True)
        assert quantity is not None and unit_usd is not None and extended_usd is not None
        # Plans store numbers rounded to 6 decimals, so allow that much slack before calling a line mispriced.
        slack = 0.01 + (abs(quantity) + abs(unit_usd)) * 1e-6
        if abs(quantity * unit_usd - extended_usd) > slack:
            raise InputError(
                f"{where} ({item}): {quantity:g} x ${unit_usd:,.2f} is not the extended "
                f"${extended_usd:,.2f}; the plan file is corrupt"
            )
        raw.append((site, category, item, quantity, unit_usd, cents(extended_usd), it_kw))
    raw.sort(key=lambda r: (r[0], r[1], r[2], r[4], r[3]))
    total_cents = sum(r[5] for r in raw)
    capex = plan.totals.get("capex_usd")
    if isinstance(capex, bool) or not isinstance(capex, (int, float)) or not math.isfinite(capex):
        raise InputError(f"{where_plan}: totals.capex_usd must be a number, got {capex!r}")
    capex_cents = cents(capex)
    if total_cents != capex_cents:
        raise InputError(
            f"{where_plan}: BOM lines sum to ${total_cents / 100:,.2f} but totals.capex_usd is "
            f"${capex_cents / 100:,.2f}; the plan file is corrupt or was edited by hand (re-plan it)"
        )
    lines = [
        BomLine(
            site=site,
            category=category,
            item=item,
            quantity=quantity,
            unit_usd=unit_usd,
            extended_usd=ext_cents / 100,
            share=round(ext_cents / capex_cents, 6) if capex_cents else 0.0,
            it_kw=it_kw,
        )
        for site, category, item, quantity, unit_usd, ext_cents, it_kw in raw
    ]
    return Bom(scenario=plan.scenario, lines=lines, total_usd=total_cents / 100, capex_usd=capex_cents / 100)


# --- output --------------------------------------------------------------------------------------


def _csv_number(value: float | None) -> str:
    """Shortest text that reads back as the same float: 64, 72.5, 0.992248; '' for none."""
    if value is None:
        return ""
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def bom_to_csv(bom: Bom) -> str:
    """One row per line, header `site,category,item,quantity,unit_usd,extended_usd,share,it_kw`, no total row
    (the total is the plan's capex; summing extended_usd gives it). Numbers read back exactly with float()."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for line in bom.lines:
        writer.writerow(
            [
                line.site,
                line.category,
                line.item,
                _csv_number(line.quantity),
                _csv_number(line.unit_usd),
                _csv_number(line.extended_usd),
                _csv_number(line.share),
                _csv_number(line.it_kw),
            ]
        )
    return out.getvalue()


def bom_to_dict(bom: Bom) -> dict[str, Any]:
    """The JSON form: format, scenario, lines, total_usd, capex_usd and subtotals by site and category."""
    return {
        "format": BOM_FORMAT,
        "scenario": bom.scenario,
        "lines": [asdict(line) for line in bom.lines],
        "total_usd": bom.total_usd,
        "capex_usd": bom.capex_usd,
        "by_site": bom.by_site(),
        "by_category": bom.by_category(),
    }


def bom_to_json(bom: Bom) -> str:
    return (
        json.dumps(canon(bom_to_dict(bom)), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
        + "\n"
    )


def usd_text(value: float) -> str:
    """$1,234.56, with the sign before the dollar."""
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.2f}"


def quantity_text(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.6f}".rstrip("0").rstrip(".")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _share_text(part_usd: float, total_usd: float) -> str:
    return f"{part_usd / total_usd * 100:.1f}%" if total_usd else ""


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def bom_to_markdown(bom: Bom) -> str:
    """A GFM table of the lines with a subtotal per site and category (when it has several lines), per site,
    and the total; then a table by category over all sites."""
    total = bom.total_usd
    out = [
        f"### Bill of materials: `{bom.scenario}`",
        "",
        _row("Site", "Category", "Item", "Quantity", "Unit USD", "Extended USD", "Share"),
        "|---|---|---|--:|--:|--:|--:|",
    ]
    by_site: dict[str, list[BomLine]] = defaultdict(list)
    for line in bom.lines:
        by_site[line.site].append(line)
    for site in sorted(by_site):
        site_lines = by_site[site]
        by_category: dict[str, list[BomLine]] = defaultdict(list)
        for line in site_lines:
            by_category[line.category].append(line)
        for category in sorted(by_category):
            cat_lines = by_category[category]
            for line in cat_lines:
                out.append(
                    _row(
                        _cell(site),
                        _cell(category),
                        _cell(line.item),
                        quantity_text(line.quantity),
                        usd_text(line.unit_usd),
                        usd_text(line.extended_usd),
                        _share_text(line.extended_usd, total),
                    )
                )
            if len(cat_lines) > 1:
                sub = sum(cents(line.extended_usd) for line in cat_lines) / 100
                out.append(
                    _row(
                        _cell(site),
                        _cell(category),
                        "*subtotal*",
                        "",
                        "",
                        f"*{usd_text(sub)}*",
                        _share_text(sub, total),
                    )
                )
        sub = sum(cents(line.extended_usd) for line in site_lines) / 100
        out.append(
            _row(
                f"**{_cell(site)}**",
                "",
                "**site subtotal**",
                "",
                "",
                f"**{usd_text(sub)}**",
                _share_text(sub, total),
            )
        )
    all_share = "100.0%" if total else ""
    out.append(_row("**total**", "", "", "", "", f"**{usd_text(total)}**", all_share))
    out += ["", _row("Category", "USD", "Share"), "|---|--:|--:|"]
    for category, usd in bom.by_category().items():
        out.append(_row(_cell(category), usd_text(usd), _share_text(usd, total)))
    out.append(_row("**total**", f"**{usd_text(total)}**", all_share))
    out += ["", f"Total equals the plan's capex: {usd_text(bom.capex_usd)}."]
    return "\n".join(out) + "\n"
