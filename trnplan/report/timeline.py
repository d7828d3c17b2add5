"""A phased plan's timeline as rows: per period and site, what is installed and which scale-up switch
generations are bought. A plan without periods (`trnplan-plan/1`) has no timeline: `timeline_rows` gives [].
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from trnplan.plan.model import Plan


@dataclass(frozen=True)
class TimelineRow:
    """One site in one period: the installed base (IT kW, chips, rack positions used by compute and network
    racks) and the units bought in the period, by their scale-up switch id."""

    start: str
    """The period's start month, `YYYY-MM`."""
    site: str
    it_power_kw: float
    chips: int
    rack_positions_used: int
    switches_bought: dict[str, int] = field(default_factory=dict)


def timeline_rows(plan: Plan) -> list[TimelineRow]:
    """The plan's timeline, period by period and site by site (sorted); [] for a plan without periods."""
    rows = []
    for period in plan.periods or []:
        for site, part in sorted(period.sites.items()):
            bought: dict[str, int] = defaultdict(int)
            for d in part.deployments:
                if d.bought:
                    bought[d.scale_up_switch] += d.bought
            rows.append(
                TimelineRow(
                    start=period.start,
                    site=site,
                    it_power_kw=part.it_power_kw,
                    chips=sum(d.chips for d in part.deployments),
                    rack_positions_used=part.positions,
                    switches_bought=dict(sorted(bought.items())),
                )
            )
    return rows
