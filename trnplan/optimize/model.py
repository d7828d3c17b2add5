"""The MILP's data: the model, its periods and sites (what `trnplan.optimize.build` registers on them), the
names of its variables and rows (`name`), and its objectives.

Variables, per site s:
  n[s,i]    integer units of option i = (form, cooling, scale-up switch)
  y[s,o,t]  binary: scale-out switch o at t tiers serves the site
  N[s,o,t]  endpoint ports served at tier t (N <= cap_t y); continuous where ports per unit are whole
  S[s,o]    scale-out switches of type o: continuous, zero unless o is chosen, and summing to
  T[s]      the site's integer switch count (one integer per site, not one per switch type)
  E[s,o]    rack-side optics priced at switch o
  R[s]      network racks: continuous (integer in elastic mode); z[s,q] binary: cooling q used (only where
            it has a one-off cost)

Few wide integers: HiGHS's root work grows quadratically with the reduced-cost bounds it keeps per wide
general integer column (bench/README.md), so variables whose integrality is implied are continuous:
S[s,o] (through T[s]) and R[s] (through the integer rack positions row); the wide ones left (n, T) go to
HiGHS split in two narrow ones where that work is large and a gap is asked, or at gap 0 beside unit
totals of few members (`highs.split_pays`). A model with periods solved to gap 0 gets, in HiGHS's copy
alone, each period's count of each kind of unit over its sites as an integer column to branch on
(`build.unit_totals`, `highs.TOTALS_MAX_GAP`).
Elastic mode adds non-negative slacks to capacity rows and lets blocked options in behind unlock binaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pulp

from trnplan.catalog import Catalog, Scenario
from trnplan.catalog.periods import Period
from trnplan.costs import Option, Reason

MONEY_SCALE = 1e-6  # the objective is in millions of USD: coefficients near 1, to the dollar at gap 0


def lin(pairs: Iterable[tuple[Any, float]], constant: float = 0.0) -> pulp.LpAffineExpression:
    """A linear expression from (variable, coefficient) pairs, built in one go."""
    expr = pulp.LpAffineExpression(constant=constant)
    for var, coef in pairs:
        if coef:
            expr[var] = expr.get(var, 0.0) + coef
    return expr


def name(*parts: object, suffix: str = "") -> str:
    """A variable's or row's name: its parts joined by "_" ("-" read as "_", "." as "p"), then `suffix`."""
    return "_".join(str(part) for part in parts).replace("-", "_").replace(".", "p") + suffix


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
    """One site in one period: its options and bounds, then what `constraints.define_site` registers (its
    variables, its capex terms and IT kW by cooling), read by the money rows, the extractor and the
    acceleration."""

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
    capex: list[tuple[Any, float]] = field(default_factory=list)
    lives: list[tuple[Any, float, float]] = field(default_factory=list)  # (var, life_years, USD) of capex
    kw_by_cooling: dict[str, list[tuple[Any, float]]] = field(default_factory=dict)
    tag: str = ""  # what its rows and variables are named by: the index, and a period's tag (multi)
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
    demand_rows: list[tuple[str, str]] = field(default_factory=list)  # (row name, Option field summed)
    use_start: bool = False  # solve with a MIP start from `trnplan.optimize.accelerate.start`
    tag: str = ""  # suffix of the scenario-wide rows' names: a period's "_p1" in a model with periods
    when: str = ""  # prefix of their labels: a period's "in 2026-07 "
    multi: bool = False  # the scenario has periods: installed units grow, one switch type over the window
    periods: list[PeriodModel] = field(default_factory=list)  # each period's view (one without periods)
    window: list[dict[str, Any]] = field(default_factory=list)  # multi: per site, scale-out type -> x[s,o]

    @property
    def site_periods(self) -> int:
        """Sites x periods (a model without periods has one): the size the phased search's choices go by."""
        return len(self.sites) * len(self.periods)


@dataclass
class PeriodModel:
    """One period: its figures (a single-period view of the catalog) and its site models. `model` shares
    the problem, slacks and coupling rows with the whole model; its catalog and scenario are the period's."""

    period: Period
    model: Model
    sites: list[SiteModel]


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
