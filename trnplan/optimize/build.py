"""One builder for one or many periods, as PyPSA's `create_model`: a scenario without periods is one period.

Per period p, each site gets the rows of `trnplan.optimize.constraints` on what is *installed* then, read
against that period's site figures, prices, demand and available switches (`catalog_at`). Only a scenario
with periods (`Model.multi`) adds what links them: n[s,i,p] >= n[s,i,p-1] (nothing is retired), nothing
before it can be bought, and x[s,o] binary: one scale-out switch type per site for the whole window. Money
(`define_money`): TCO = sum_p L_p [(CRF + m) C_p + opex_p] (C_p the capex of what is installed in p),
performance in PFLOP-years; one period is the whole horizon and its PFLOPs. Supply caps and the capex
budget hold on the last period; the model's `sites` are the last period's, so alternatives, cuts and
unlocks that bound them bound every period (installed units only grow).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pulp

from trnplan.catalog import Catalog
from trnplan.catalog.periods import Period, catalog_at, periods_of, scenario_at, single_view
from trnplan.costs import option_month, scale_out_switches
from trnplan.optimize.accelerate import add_capacity_cuts
from trnplan.optimize.accelerate.blocks import rows_by_period
from trnplan.optimize.constraints import (
    define_demand,
    define_money,
    define_site,
    define_supply,
    define_unlocks,
    define_window,
)
from trnplan.optimize.highs import Total
from trnplan.optimize.model import Model, PeriodModel, SiteModel, lin
from trnplan.optimize.options import prepare_sites, widest_view
from trnplan.optimize.progress import check_time

START_MIN_SITES = 20
"""From this many sites on, a solve starts from the primal heuristic's plan (below it costs more than it
saves; bench/README.md); a start never changes what is proven."""

START_MIN_SITES_PHASED = 100
"""The same for a model with periods, whose heuristic prices each site over the whole window: at 25 sites
over 8 quarters it took 78 s of a 135 s solve to 1e-4 that HiGHS alone made in 52 s; at 50 x 8, once wide
integer columns went to HiGHS split (`highs.SPLIT_MIN_WORK`), HiGHS alone was 0.016% off after 240 s and
with the start 0.045% (bench/README.md, issue 35, third and fifth rounds). Not measured above 50 sites."""

TIER_LIMITS_MIN_SITES_PHASED = 10
"""From this many sites on, a model with periods holds each fabric tier's ports within what the site allows
at that tier (`network.tier_port_limit`): the same plans, a tighter LP. At 25 sites over 16 quarters HiGHS
was 0.10% off after 240 s with them and 0.93% without; at 10 x 8, 0.0016% against 0.0031% short of a proof.
On the shipped scenarios (3 sites) and single-period portfolios they only moved the search: trn3-life-moe
took 2.7-3.0 s to 1e-4 with them and 1.7-2.3 s without over HiGHS seeds 1-5 (bench/README.md, issue 35,
fourth round)."""


def build_model(
    catalog: Catalog,
    scenario_id: str,
    *,
    elastic: bool = False,
    cuts: bool = True,
    start: bool | None = None,
    tier_limits: bool | None = None,
    prune: bool = True,
) -> Model:
    """The MILP of a scenario; the objective is set by the caller (see `set_objective`).

    `elastic`: capacity rows take slacks and blocked options come in behind unlock binaries (the
    explanation of an infeasible scenario). `cuts` adds the per-site capacity cuts (never in elastic
    mode): the same plans, a tighter LP. `start` hands HiGHS a MIP start; None: from START_MIN_SITES
    sites on (START_MIN_SITES_PHASED with periods). `cuts=False, start=False` is the first version's
    model, kept for bench/. `tier_limits` holds each fabric tier's ports within what the site allows
    (never in elastic mode, nor without `cuts`); None: with periods, from TIER_LIMITS_MIN_SITES_PHASED
    sites on. `prune=False`
    keeps the options another one dominates (dominance depends on prices: a plan across futures, whose
    futures price options differently, needs the same options in each)."""
    scenario = catalog.scenarios[scenario_id]
    multi = scenario.periods is not None
    periods = periods_of(scenario)
    views, wide = period_views(catalog, scenario_id, periods)
    wide_scenario = wide.scenarios[scenario_id]

    def when(opt: Any) -> str:
        return option_month(catalog, opt)

    base = prepare_sites(wide, wide_scenario, elastic, when if multi else None, prune=prune)
    tier_limits = _held(tier_limits, multi, len(base), cuts, elastic)
    out_switches = scale_out_switches(wide, wide_scenario)
    last = views[-1]
    sense = pulp.LpMinimize if scenario.objective == "min_tco" or elastic else pulp.LpMaximize
    prob = pulp.LpProblem(f"trnplan_{scenario_id}".replace("-", "_").replace(".", "_"), sense)
    model = Model(
        prob, last, last.scenarios[scenario_id], scenario_id, [], out_switches, lin([]), lin([]), lin([]),
        elastic, multi=multi,
    )
    demanding = any(not v.scenarios[scenario_id].demand.empty for v in views)
    for p, view in zip(periods, views, strict=True):
        pm = _period(model, p, view, base)
        for sm in pm.sites:
            check_time("building the model")
            available = (p.start, when) if multi else None
            define_site(prob, pm.model, sm, out_switches, available, tier_limits=tier_limits)
        if not pm.model.scenario.demand.empty or (p is periods[-1] and not demanding):
            define_demand(prob, pm.model)
        model.periods.append(pm)
    if multi:
        model.window = define_window(prob, model.periods, out_switches)
    model.sites = model.periods[-1].sites
    define_supply(prob, model)
    define_money(prob, model)
    if elastic:
        define_unlocks(prob, model)
    elif cuts:
        # a period's blocks: the rows linking periods are left out (each period reads only its own rows:
        # reading all of them per period grew with the square of the periods)
        groups = rows_by_period(model) if multi else [None]
        for pm, rows in zip(model.periods, groups, strict=True):
            add_capacity_cuts(pm.model, rows)
    least = START_MIN_SITES_PHASED if multi else START_MIN_SITES
    model.use_start = not elastic and (len(model.sites) >= least if start is None else start)
    return model


def _held(tier_limits: bool | None, multi: bool, sites: int, cuts: bool, elastic: bool) -> bool:
    """Whether a model holds each fabric tier's ports within what its site allows (`tier_limits`; never
    in elastic mode or the first version's model)."""
    if elastic or not cuts:
        return False
    if tier_limits is None:
        return multi and sites >= TIER_LIMITS_MIN_SITES_PHASED
    return tier_limits


def period_views(catalog: Catalog, scenario_id: str, periods: list[Period]) -> tuple[list[Catalog], Catalog]:
    """Each period's single-period view of the catalog, and the widest of them (the options' view)."""
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is None:
        view = single_view(catalog, scenario_id)
        return [view], view
    views = [catalog_at(catalog, scenario_id, p.start, scenario_at(scenario, p)) for p in periods]
    return views, widest_view(catalog, scenario_id, views)


def _period(model: Model, p: Period, view: Catalog, base: list[SiteModel]) -> PeriodModel:
    """One period's view of the model (sharing its problem, slacks and coupling rows) and site models,
    named by the period's tag when the model has periods."""
    tag, label = (f"_{p.tag}", f"in {p.start} ") if model.multi else ("", "")
    sub = replace(model, catalog=view, scenario=view.scenarios[model.scenario_id], sites=[], periods=[],
                  tag=tag, when=label, multi=False, demand_rows=[])
    sub.sites = [
        SiteModel(b.site, b.index, b.options, b.blocked, b.upper,
                  tag=f"{b.index}{p.tag}" if model.multi else "", when=label)
        for b in base
    ]
    return PeriodModel(p, sub, sub.sites)


def unit_totals(model: Model) -> list[Total]:
    """A model with periods: per period, the units of each kind summed over the sites (a kind: what one
    unit adds to each of the period's demand rows), each total following the period before's of the same
    kind when that one's units all grow into it (`highs.Total`, `highs.TOTALS_MAX_GAP`). None without
    periods or demand rows."""
    if not model.multi:
        return []
    totals: list[Total] = []
    before: dict[tuple[float, ...], tuple[int, frozenset[tuple[int, int]]]] = {}
    for pm in model.periods:
        rows = pm.model.demand_rows
        kinds: dict[tuple[float, ...], list[tuple[tuple[int, int], str]]] = {}
        for s_index, sm in enumerate(pm.sites):
            for i, (v, o) in enumerate(zip(sm.n, sm.options, strict=True)):
                key = tuple(float(getattr(o, field)) for _row, field in rows)
                if any(key):
                    kinds.setdefault(key, []).append(((s_index, i), v.name))
        now: dict[tuple[float, ...], tuple[int, frozenset[tuple[int, int]]]] = {}
        for key, members in sorted(kinds.items()):
            if len(members) < 2:
                continue
            ids = frozenset(m for m, _name in members)
            prior = before.get(key)
            follows = prior[0] if prior is not None and prior[1] <= ids else None
            now[key] = (len(totals), ids)
            totals.append(Total(tuple(name for _m, name in members),
                                tuple((row, c) for (row, _field), c in zip(rows, key, strict=True) if c),
                                follows))
        before = now
    return totals
