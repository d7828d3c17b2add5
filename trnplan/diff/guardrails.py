"""Guardrails: rules on a summary metric's change (`tco>+5%`, `it_power>+2MW`) that turn a plan diff into
a pass or a fail, each breach explained in one line."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from trnplan.diff.markdown import format_delta, format_metric, format_pct
from trnplan.diff.model import METRIC_ALIASES, PlanDiff, metric_names
from trnplan.errors import UsageError, did_you_mean


@dataclass(frozen=True)
class Guardrail:
    """A rule on a summary metric's change: `tco>+5%` is breached when TCO rises by more than 5%."""

    metric: str
    op: str
    amount: float
    percent: bool
    text: str = ""


_GUARDRAIL = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|>|<)\s*(?P<num>[+-]?\s*\$?[0-9][0-9_,]*(?:\.[0-9]+)?)"
    r"\s*(?P<suffix>[kKMB]?)\s*(?P<unit>MW|kW|mw|kw)?\s*(?P<pct>%?)\s*$"
)
_SUFFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}
_POWER_UNIT_KW = {"kw": 1, "mw": 1000}


def _valid_names() -> str:
    aliases: dict[str, list[str]] = defaultdict(list)
    for alias, metric in METRIC_ALIASES.items():
        aliases[metric].append(alias)
    return ", ".join(f"{m} ({', '.join(aliases[m])})" if m in aliases else m for m in metric_names())


def _check_units(text: str, metric: str, match: re.Match[str]) -> None:
    """A percentage takes no suffix or unit; kW and MW only on power metrics, and not with a k/M/B."""
    if match["pct"] and (match["suffix"] or match["unit"]):
        raise UsageError(f"guardrail '{text}': a percentage takes no k/M/B suffix or unit")
    if match["unit"] and match["suffix"]:
        raise UsageError(f"guardrail '{text}': write the power as kW or MW, without a k/M/B multiplier")
    if match["unit"] and not metric.endswith("_kw"):
        raise UsageError(
            f"guardrail '{text}': {metric} is not a power; kW and MW apply to it_power_kw, facility_power_kw"
        )


def parse_guardrail(text: str) -> Guardrail:
    """`METRIC OP [+|-]NUMBER[k|M|B][%]`, OP one of > >= < <=: `tco>+5%`, `it_power_kw>+500`,
    `capex_usd>+1000000`, `capex>1.5M`, `chips<-10%`; power metrics also take kW or MW
    (`it_power>+2MW`). Raises UsageError naming the valid metrics."""
    m = _GUARDRAIL.match(text)
    if not m:
        raise UsageError(
            f"guardrail '{text}': expected METRIC OP [+|-]NUMBER[%], e.g. 'tco>+5%' or 'it_power_kw>+500'; "
            f"metrics: {_valid_names()}"
        )
    name = m["metric"].lower()
    metric = METRIC_ALIASES.get(name, name)
    if metric not in metric_names():
        hint = did_you_mean(name, [*metric_names(), *METRIC_ALIASES])
        raise UsageError(
            f"guardrail '{text}': unknown metric '{m['metric']}'{hint}; metrics: {_valid_names()}"
        )
    _check_units(text, metric, m)
    number = m["num"].replace(" ", "").replace("$", "").replace("_", "").replace(",", "")
    amount = float(number) * _SUFFIX[m["suffix"]] * _POWER_UNIT_KW.get((m["unit"] or "kw").lower(), 1)
    return Guardrail(metric=metric, op=m["op"], amount=amount, percent=bool(m["pct"]), text=text.strip())


def _compare(value: float, op: str, amount: float) -> bool:
    return {">": value > amount, ">=": value >= amount, "<": value < amount, "<=": value <= amount}[op]


def _is_breached(d: PlanDiff, g: Guardrail) -> bool:
    """A percentage rule on a metric that was 0 in base counts the change as infinitely large in its
    direction."""
    m = d.metric(g.metric)
    if not g.percent:
        return _compare(m.delta, g.op, g.amount)
    if m.pct is not None:
        return _compare(m.pct, g.op, g.amount)
    return m.delta != 0 and _compare(math.copysign(math.inf, m.delta), g.op, g.amount)


def breached(d: PlanDiff, guardrails: Iterable[Guardrail]) -> list[str]:
    """A message per breached rule, e.g. `tco_usd rose 35.0% (+$970M, ...): breaches tco>+5%`
    (the verb says the direction, so the percentage carries no sign).

    A percentage rule on a metric that was 0 in base counts the change as infinitely large in its
    direction (a new scenario breaches `tco>+5%`).
    """
    out = []
    for g in guardrails:
        if not _is_breached(d, g):
            continue
        m = d.metric(g.metric)
        verb = "rose" if m.delta > 0 else "fell" if m.delta < 0 else "did not change"
        pct = (format_pct(m) or "n/a").lstrip("+-")
        rule = g.text or f"{g.metric}{g.op}{g.amount:+g}{'%' if g.percent else ''}"
        out.append(
            f"{m.metric} {verb} {pct} ({format_delta(m.metric, m.delta)}, "
            f"{format_metric(m.metric, m.old)} → {format_metric(m.metric, m.new)}): breaches {rule}"
        )
    return out
