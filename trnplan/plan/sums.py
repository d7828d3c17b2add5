"""Sums a plan states, for its sites, its totals and its periods (a plan's own or one future's): racks, IT
power and counts add up over deployments and sites, and a period's `bought` is its units' growth."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trnplan.costs import OPEX_FIGURES
from trnplan.errors import KeyPath
from trnplan.plan.mismatch import Mismatch, deployment_paths, each, relation, site_paths, sum_mismatch
from trnplan.plan.model import PeriodSite, PlanPeriod, SiteSection

Installed = dict[tuple[str, str], tuple[int, KeyPath]]
"""What a period has installed: (site, option key) -> (units, key path of its units)."""


def site_sums(at: KeyPath, s: SiteSection | PeriodSite) -> list[Mismatch]:
    """A site's racks and IT power are those of its deployments and fabric (a site of the plan or of one of
    its periods)."""
    deps, fabric = s.deployments, s.scale_out
    rows = [(*at, "deployments", j) for j in range(len(deps))]
    problems = sum_mismatch(
        at + ("racks",),
        s.racks,
        sum(d.racks for d in deps),
        "is not the sum of its deployments' racks",
        0,
        each(rows, "racks"),
    )
    problems += sum_mismatch(
        at + ("it_power_kw",),
        s.it_power_kw,
        sum(d.it_power_kw for d in deps) + fabric.it_power_kw,
        "is not the sum of its deployments' and scale-out fabric's it_power_kw",
        0.011,
        [*each(rows, "it_power_kw"), (*at, "scale_out", "it_power_kw")],
    )
    return problems


_SUMS: dict[str, tuple[str, float | None]] = {
    "chips": ("deployments'", 0),
    "units": ("deployments'", 0),
    "racks": ("sites'", 0),
    "fp8_pflops": ("deployments'", 0.001),
    "it_power_kw": ("sites'", 0.011),
    "facility_power_kw": ("sites'", 0.011),
    "domains": ("deployments'", 0),
    "network_racks": ("sites' scale-out", 0),
    **{name: ("sites'", None) for name in OPEX_FIGURES},
}
"""Totals that are sums, of what, with what slack (None: a cent a site and one more, for money rounded
site by site)."""
PLAN_SUMS = tuple(_SUMS)
PERIOD_SUMS = ("chips", "units", "racks", "network_racks", "it_power_kw", "facility_power_kw")


def totals_sums(
    at: KeyPath, totals: object, sites: Mapping[str, SiteSection | PeriodSite], keys: Sequence[str]
) -> list[Mismatch]:
    """The totals at `at` (the plan's, or a period's) are sums over its sites and deployments; a total the
    plan does not state is not checked."""
    deps = [d for s in sites.values() for d in s.deployments]
    dep_rows, site_rows = deployment_paths(sites, at), site_paths(sites, at)
    problems = []
    for key in keys:
        stated = getattr(totals, key, None)
        if stated is None:
            continue
        whose, tol = _SUMS[key]
        if whose == "deployments'":
            parts, where = sum(getattr(d, key) for d in deps), each(dep_rows, key)
        elif whose == "sites'":
            parts, where = sum(getattr(s, key) or 0.0 for s in sites.values()), each(site_rows, key)
        else:
            parts = sum(s.scale_out.network_racks for s in sites.values())
            where = [(*r, "scale_out", "network_racks") for r in site_rows]
        slack = 0.01 * (len(sites) + 1) if tol is None else tol
        problems += sum_mismatch(
            (*at, "totals", key), float(stated), parts, f"is not the sum of its {whose} {key}", slack, where
        )
    return problems


def growth_problems(
    i: int, p: PlanPeriod, before: Installed, prefix: KeyPath = ()
) -> tuple[list[Mismatch], Installed]:
    """In period i, `bought` is each option's growth of units over the period before, and nothing installed
    before is gone; with what is installed now (`prefix`: where the periods are, the plan's by default)."""
    problems = []
    now: Installed = {}
    for site, s in sorted(p.sites.items()):
        for j, d in enumerate(s.deployments):
            at: KeyPath = (*prefix, "periods", i, "sites", site, "deployments", j)
            now[(site, d.key)] = (d.units, (*at, "units"))
            had, where = before.get((site, d.key), (0, None))
            grew = d.units - had
            if d.bought != grew:
                problems.append(
                    relation(
                        (*at, "bought"),
                        f"{d.bought:,}",
                        f"is not the growth of {site} {d.key}'s units over the period before",
                        f"{d.units:,} - {had:,} = {grew:,}",
                        [(*at, "units")] + ([where] if where else []),
                    )
                )
    for key in sorted(set(before) - set(now)):
        label = ".".join(str(k) for k in (*prefix, "periods", i))
        gone = f"{label}: {key[0]} {key[1]} was installed before and is gone"
        problems.append(Mismatch((*prefix, "periods", i, "sites"), gone))
    return problems, now


def period_sums(i: int, p: PlanPeriod, prefix: KeyPath = ()) -> list[Mismatch]:
    """A period's sites add up to their deployments and fabric, and its totals to its sites."""
    at: KeyPath = (*prefix, "periods", i)
    problems = []
    for site, s in sorted(p.sites.items()):
        where: KeyPath = (*at, "sites", site)
        racks = [(*where, "deployments", j, "racks") for j in range(len(s.deployments))]
        problems += site_sums(where, s)
        problems += sum_mismatch(
            (*where, "positions"),
            s.positions,
            sum(d.racks for d in s.deployments) + s.scale_out.network_racks,
            "is not its deployments' racks + its scale-out network_racks",
            0,
            [*racks, (*where, "scale_out", "network_racks")],
        )
    return problems + totals_sums(at, p.totals, p.sites, PERIOD_SUMS)
