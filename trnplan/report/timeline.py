"""A phased plan's timeline as rows: per period and site, what is installed and what scale-up switches are
bought. A plan without periods (`trnplan-plan/1`) has no timeline: `timeline_rows` gives [].

The rows are read with getattr from the phased plan's documented shape (design.md, "Phased plans":
`periods[].start`, `periods[].sites[SITE].deployments[]` with `units`, `bought`, `chips`, `racks`,
`it_power_kw`, `scale_up_switch`, and `.scale_out.network_racks`), so a plan type that lacks a part
simply gives less; the charts and the page only ever see `TimelineRow`s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TimelineRow:
    """One site in one period: the installed base at the period's start (IT kW, chips, rack positions
    used by compute and network racks) and the scale-up switches bought in the period, by switch id."""

    start: str
    """The period's start month, `YYYY-MM`."""
    site: str
    it_power_kw: float
    chips: int
    rack_positions_used: int
    switches_bought: dict[str, int] = field(default_factory=dict)


def _number(part: Any, name: str) -> float:
    value = getattr(part, name, None)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _items(value: Any) -> Iterable[tuple[str, Any]]:
    return sorted(value.items()) if isinstance(value, Mapping) else ()


def _switches_bought(deployments: Iterable[Any], site_part: Any) -> dict[str, int]:
    """Scale-up switches bought in the period by switch id: the site part's own count when it states one
    (`scale_up_switches_bought: {ID: N}`), else each deployment's `scale_up_switches_bought`, else the
    units bought with that switch."""
    stated = getattr(site_part, "scale_up_switches_bought", None)
    if isinstance(stated, Mapping):
        return {str(k): int(v) for k, v in sorted(stated.items()) if int(v)}
    out: dict[str, int] = defaultdict(int)
    for d in deployments:
        switch = getattr(d, "scale_up_switch", None)
        count = getattr(d, "scale_up_switches_bought", None)
        if count is None:
            count = getattr(d, "bought", 0)
        if isinstance(switch, str) and isinstance(count, int) and count:
            out[switch] += count
    return dict(sorted(out.items()))


def _site_row(start: str, site: str, part: Any) -> TimelineRow:
    deployments = list(getattr(part, "deployments", None) or [])
    network_racks = _number(getattr(part, "scale_out", None), "network_racks")
    it_kw = _number(part, "it_power_kw") or sum(_number(d, "it_power_kw") for d in deployments)
    return TimelineRow(
        start=start,
        site=site,
        it_power_kw=it_kw,
        chips=int(sum(_number(d, "chips") for d in deployments)),
        rack_positions_used=int(sum(_number(d, "racks") for d in deployments) + network_racks),
        switches_bought=_switches_bought(deployments, part),
    )


def timeline_rows(plan: Any) -> list[TimelineRow]:
    """The plan's timeline, period by period and site by site (sorted); [] for a plan without periods."""
    periods = getattr(plan, "periods", None)
    if not periods:
        return []
    rows = []
    for period in periods:
        start = str(getattr(period, "start", ""))
        for site, part in _items(getattr(period, "sites", None)):
            rows.append(_site_row(start, str(site), part))
    return rows
