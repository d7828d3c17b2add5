"""The MILP: its variables, the options each site may use, the model built from `define_*` constraint families
(`trnplan.optimize.constraints`), and its objectives.

Variables, per site s:
  n[s,i]    integer units of option i = (form, cooling, scale-up switch)
  y[s,o,t]  binary: scale-out switch o at t tiers serves the site
  N[s,o,t]  endpoint ports served at tier t (N <= cap_t y); continuous where ports per unit are whole
  S[s,o]    scale-out switches of type o: continuous, zero unless o is chosen, and summing to
  T[s]      the site's integer switch count (one integer per site, not one per switch type)
  E[s,o]    rack-side optics priced at switch o
  R[s]      network racks: continuous (integer in elastic mode); z[s,q] binary: cooling q used (only where
            it has a one-off cost)

Why few wide integers: at the root, HiGHS keeps up to 1,024 "lurking" reduced-cost bounds per general
integer column with a wide domain, at a cost quadratic in their number (HighsRedcostFixing::addRootRedcost,
82% of the root time of a 50-site portfolio before). Integer variables that the model does not need are
therefore continuous where integrality is implied: S[s,o] (through T[s]) and R[s] (through the integer
rack positions row).
Elastic mode adds non-negative slacks to capacity rows and lets blocked options in behind unlock binaries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pulp

from trnplan.catalog import Catalog, Scenario
from trnplan.costs import (
    Option,
    Reason,
    all_options,
    form_efficiency,
    make_option,
    option_problems,
    scale_out_switches,
)

MONEY_SCALE = 1e-6  # the objective is in millions of USD: coefficients near 1, to the dollar at gap 0


def lin(pairs: Iterable[tuple[Any, float]], constant: float = 0.0) -> pulp.LpAffineExpression:
    """A linear expression from (variable, coefficient) pairs, built in one go."""
    expr = pulp.LpAffineExpression(constant=constant)
    for var, coef in pairs:
        if coef:
            expr[var] = expr.get(var, 0.0) + coef
    return expr


@dataclass(frozen=True)
class Slack:
    """Elastic mode: how far a capacity row was exceeded (or demand fell short), in the row's units."""

    var: Any
    label: str  # "iad-a IT power"
    unit: str  # what the report speaks in: MW, positions, units, USD, chips...
    per: float  # row units per report unit (kW per MW = 1000)
    limit: float
    shortfall: bool = False


@dataclass
class SiteModel:
    """One site's options and variables."""

    site: str
    index: int
    options: list[Option]
    blocked: dict[int, list[Reason]]  # option index -> why it is blocked (elastic mode only)
    upper: list[int]
    n: list[Any] = field(default_factory=list)
    y: dict[tuple[str, int], Any] = field(default_factory=dict)
    ports: dict[tuple[str, int], Any] = field(default_factory=dict)
    switches: dict[str, Any] = field(default_factory=dict)
    optics: dict[str, Any] = field(default_factory=dict)
    racks: Any = None
    total: Any = None  # T[s]
    cooling_on: dict[str, Any] = field(default_factory=dict)
    compute_kw: list[tuple[Any, float]] = field(default_factory=list)
    network_kw: list[tuple[Any, float]] = field(default_factory=list)
    network_rack_kw: list[tuple[Any, float]] = field(default_factory=list)  # switches + switch-side optics
    capex: list[tuple[Any, float]] = field(default_factory=list)
    kw_by_cooling: dict[str, list[tuple[Any, float]]] = field(default_factory=dict)
    tag: str = ""  # what its rows and variables are named by: the index, and a period's tag in a phased model
    when: str = ""  # what its labels start with: "" or a period's "in 2026-07 "
    extras: list[Any] = field(default_factory=list)  # fabric extensions' variables: uplinks U, copper K

    def __post_init__(self) -> None:
        if not self.tag:
            self.tag = str(self.index)


@dataclass
class Model:
    """The PuLP problem and what the extractor needs to read a solution back."""

    prob: pulp.LpProblem
    catalog: Catalog
    scenario: Scenario
    scenario_id: str
    sites: list[SiteModel]
    out_switches: list[str]
    capex: pulp.LpAffineExpression
    tco: pulp.LpAffineExpression
    perf: pulp.LpAffineExpression
    elastic: bool = False
    slacks: dict[str, Slack] = field(default_factory=dict)
    unlocks: dict[str, tuple[Any, str]] = field(default_factory=dict)  # name -> (binary, reason)
    coupling: list[str] = field(default_factory=list)  # rows across sites: demand, supply, budgets
    use_start: bool = False  # solve with a MIP start from `trnplan.optimize.start`
    tag: str = ""  # suffix of the scenario-wide rows' names: a period's "_p1" in a phased model
    when: str = ""  # prefix of their labels: a period's "in 2026-07 "
    periods: list[Any] = field(default_factory=list)  # a phased model's `PeriodModel`s (`optimize.phased`)
    window: list[dict[str, Any]] = field(default_factory=list)  # phased: per site, scale-out type -> x[s,o]


def option_upper_bound(catalog: Catalog, scenario: Scenario, site_id: str, opt: Option) -> int:
    """Units of an option a site could hold on its own: power, grid, positions and supply caps."""
    site = catalog.sites[site_id]
    bounds = [site.it_power_kw / opt.it_kw, site.rack_positions / opt.racks]
    if site.grid_power_mw is not None:
        bounds.append(site.grid_power_mw * 1000 / (opt.it_kw * catalog.cooling[opt.cooling].pue))
    for key, per_unit in ((opt.chip, opt.chips), (opt.form, 1), (opt.scale_up_switch, opt.scale_up_switches)):
        if key in scenario.supply and per_unit:
            bounds.append(scenario.supply[key] / per_unit)
    return max(0, math.floor(min(bounds) + 1e-9))


DEMANDED = ("chips", "fp8_pflops", "hbm_tb", "effective_fp8_pflops")
"""Demand keys, each also the name of the per-unit figure of an `Option`."""


def demand_units(scenario: Scenario, opt: Option) -> int:
    """Units of an option that alone meet every demand given."""
    need = 0
    for key in DEMANDED:
        per_unit = getattr(opt, key)
        amount = getattr(scenario.demand, key)
        if amount is not None and per_unit > 0:
            need = max(need, math.ceil(amount / per_unit - 1e-9))
    return need


def supply_use(opt: Option, key: str) -> int:
    """Units of a supply-capped item one unit of the option consumes (scale-out switches aside)."""
    return (
        (opt.chips if opt.chip == key else 0)
        + (1 if opt.form == key else 0)
        + (opt.scale_up_switches if opt.scale_up_switch == key else 0)
    )


def dominates(a: Option, b: Option, scenario: Scenario, when: Callable[[Option], str] | None = None) -> bool:
    """Swapping each unit of b for a unit of a never hurts: same cooling, no more capex, power, racks,
    fabric load, capped supply or capped demand (`at_most`), and no less of anything demanded or maximised;
    with `when` (a phased model: the month an option can first be bought), a is available no later than b."""
    if a.cooling != b.cooling or (when is not None and when(a) > when(b)):
        return False
    le = [
        a.capex_usd <= b.capex_usd,
        a.it_kw <= b.it_kw,
        a.racks <= b.racks,
        a.scale_out_gbps <= b.scale_out_gbps,
        a.endpoint_optics <= b.endpoint_optics,
        a.copper_links == b.copper_links,  # a copper link saves a leaf optic: more of them is no worse
        a.copper_kw <= b.copper_kw,
    ]
    le += [supply_use(a, key) <= supply_use(b, key) for key in scenario.supply]
    capped = [k for k in ("chips", "fp8_pflops", "hbm_tb") if scenario.demand.cap(k) is not None]
    le += [getattr(a, k) <= getattr(b, k) for k in capped]
    ge = [a.fp8_pflops >= b.fp8_pflops, a.effective_fp8_pflops >= b.effective_fp8_pflops]
    for key in ("chips", "hbm_tb"):
        if getattr(scenario.demand, key) is not None:
            ge.append(getattr(a, key) >= getattr(b, key))
    if not all(le) or not all(ge):
        return False
    strictly = (a.capex_usd, a.it_kw, a.racks) != (
        b.capex_usd,
        b.it_kw,
        b.racks,
    ) or (a.fp8_pflops, a.effective_fp8_pflops) != (b.fp8_pflops, b.effective_fp8_pflops)
    return strictly or a.key < b.key


def undominated(
    options: list[Option], scenario: Scenario, when: Callable[[Option], str] | None = None
) -> list[Option]:
    """Options no other option dominates (the optimum never needs a dominated one)."""
    return [b for b in options if not any(a is not b and dominates(a, b, scenario, when) for a in options)]


def prepare_sites(
    catalog: Catalog, scenario: Scenario, elastic: bool, when: Callable[[Option], str] | None = None
) -> list[SiteModel]:
    """Options per site (blocked ones too in elastic mode, unless physics forbids them)."""
    sites = []
    for s_index, site_id in enumerate(sorted(scenario.sites)):
        options: list[Option] = []
        blocked: dict[int, list[Reason]] = {}
        upper: list[int] = []
        candidates = []
        for form_id, cooling_id, switch_id in all_options(catalog):
            why = option_problems(catalog, scenario, site_id, form_id, cooling_id, switch_id)
            if why and (not elastic or any(reason.hard for reason in why)):
                continue
            efficiency = form_efficiency(catalog, scenario, form_id)
            option = make_option(catalog, form_id, cooling_id, switch_id, efficiency, site_id)
            candidates.append((option, why))
        if not elastic:
            keep = {id(o) for o in undominated([o for o, _ in candidates], scenario, when)}
            candidates = [(o, why) for o, why in candidates if id(o) in keep]
        for opt, why in candidates:
            if elastic:
                # enough units to meet the whole demand alone, whatever the limits say
                bound = max(
                    option_upper_bound(catalog, scenario, site_id, opt), demand_units(scenario, opt), 1
                )
            else:
                bound = option_upper_bound(catalog, scenario, site_id, opt)
            if bound <= 0:
                continue
            if why:
                blocked[len(options)] = why
            options.append(opt)
            upper.append(bound)
        sites.append(SiteModel(site_id, s_index, options, blocked, upper))
    return sites


START_MIN_SITES = 20
"""From this many sites on, a solve starts from the primal heuristic's plan (below, it costs more than it
saves; a start never changes what is proven). Phased models too, their site blocks spanning the window:
50 sites x 4 quarters proved in 68 s with it, not in 120 s without; 25 x 4 took 16.0 s against 13.3."""


def _use_start(n_sites: int, elastic: bool, start: bool | None) -> bool:
    return not elastic and (n_sites >= START_MIN_SITES if start is None else start)


def build_model(
    catalog: Catalog,
    scenario_id: str,
    *,
    elastic: bool = False,
    cuts: bool = True,
    start: bool | None = None,
) -> Model:
    """The MILP of a scenario; the objective is set by the caller (see `set_objective`).

    `cuts` adds the per-site capacity cuts (`trnplan.optimize.cuts`; never in elastic mode): the same
    plans, a tighter LP. `start` hands HiGHS a MIP start (`trnplan.optimize.start`); None: from
    START_MIN_SITES sites on. `cuts=False, start=False` is the first version's model, kept for bench/."""
    scenario = catalog.scenarios[scenario_id]
    if scenario.periods is not None:
        from trnplan.optimize.phased import build_phased_model

        phased = build_phased_model(catalog, scenario_id, elastic=elastic, cuts=cuts)
        phased.use_start = _use_start(len(phased.sites), elastic, start)
        return phased
    from trnplan.catalog.periods import single_view

    catalog = single_view(catalog, scenario_id)
    sense = pulp.LpMinimize if scenario.objective == "min_tco" or elastic else pulp.LpMaximize
    prob = pulp.LpProblem(f"trnplan_{scenario_id}".replace("-", "_").replace(".", "_"), sense)
    out_switches = scale_out_switches(catalog, scenario)
    sites = prepare_sites(catalog, scenario, elastic)
    model = Model(
        prob, catalog, scenario, scenario_id, sites, out_switches, lin([]), lin([]), lin([]), elastic
    )
    from trnplan.optimize.constraints import (
        define_cooling_fixed,
        define_demand,
        define_fabric,
        define_objective,
        define_site_costs,
        define_site_limits,
        define_supply,
        define_units,
        define_unlocks,
    )

    for sm in sites:
        define_units(prob, sm)
        define_fabric(prob, catalog, sm, out_switches, scenario.fabric)
        define_site_costs(catalog, scenario, sm)
        define_cooling_fixed(prob, catalog, scenario, sm)
        define_site_limits(prob, model, sm)
    define_demand(prob, model)
    define_supply(prob, model)
    define_objective(prob, model)
    if elastic:
        define_unlocks(prob, model)
    elif cuts:
        from trnplan.optimize.cuts import add_capacity_cuts

        add_capacity_cuts(model)
    model.use_start = _use_start(len(sites), elastic, start)
    return model


def set_objective(model: Model, kind: str, ratio: float = 0.0) -> None:
    """min TCO, max PFLOPs, or max PFLOPs - ratio x TCO (a Dinkelbach step; ratio in PFLOPs per USD)."""
    if kind == "min_tco":
        model.prob.sense = pulp.LpMinimize
        model.prob.setObjective(model.tco * MONEY_SCALE)
    elif kind == "max_perf":
        model.prob.sense = pulp.LpMaximize
        model.prob.setObjective(model.perf * 1.0)
    elif kind == "dinkelbach":
        model.prob.sense = pulp.LpMaximize
        model.prob.setObjective(model.perf - model.tco * ratio)
    else:
        raise ValueError(kind)


def set_elastic_objective(model: Model, unlock_weight: float, slack_weight: float) -> None:
    """Minimise relaxations: slacks relative to their limits, unlocks by count; demand shortfall last."""
    pairs: list[tuple[Any, float]] = []
    for _name, slack in sorted(model.slacks.items()):
        weight = 1e6 if slack.shortfall else slack_weight  # unmet demand: only when nothing else can give
        pairs.append((slack.var, weight / max(slack.limit, 1.0)))
    pairs.extend((var, unlock_weight) for var, _ in model.unlocks.values())
    model.prob.sense = pulp.LpMinimize
    model.prob.setObjective(lin(pairs) + model.tco * 1e-9 * MONEY_SCALE)
