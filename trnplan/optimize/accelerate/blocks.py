"""The model seen site by site: each site's variables and own rows as a small HiGHS model.

Sites couple only through the rows `Model.coupling` names (demand, supply caps, budgets). A `SiteBlock`
holds one site's columns and the rows that mention only them, plus every coupling `<=` row projected
onto the site (the other sites' terms dropped: valid because every variable is >= 0 and those terms
have non-negative coefficients). Any plan of the whole model restricted to the site is feasible for the
block, so what a block's LP or MILP proves about the site holds in the whole model.

Used by `cuts` (capacity LPs) and `start` (pricing MILPs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from trnplan.optimize.highs import new_highs
from trnplan.optimize.model import Model, SiteModel
from trnplan.optimize.progress import check_time


def site_variables(sm: SiteModel) -> list[Any]:
    """Every variable of one site, in a fixed order."""
    out: list[Any] = list(sm.n)
    out += [sm.y[key] for key in sorted(sm.y)]
    out += [sm.ports[key] for key in sorted(sm.ports)]
    out += [sm.switches[key] for key in sorted(sm.switches)]
    out += [sm.optics[key] for key in sorted(sm.optics)]
    out += [sm.cooling_on[key] for key in sorted(sm.cooling_on)]
    out += [v for v in (sm.racks, sm.total) if v is not None]
    out += sm.extras
    return out


@dataclass
class Row:
    lower: float
    upper: float
    index: list[int]
    value: list[float]


@dataclass
class SiteBlock:
    """One site's columns (bounds, integrality) and rows, indexed as `columns`."""

    site: SiteModel
    columns: list[Any]
    position: dict[str, int]
    modes: dict[Any, Any]  # the site's fabric modes, each a binary: y[s,o,t] (phased: x[s,o])
    rows: list[Row] = field(default_factory=list)

    def lower(self) -> list[float]:
        return [float(v.lowBound if v.lowBound is not None else -math.inf) for v in self.columns]

    def upper(self) -> list[float]:
        return [float(v.upBound if v.upBound is not None else math.inf) for v in self.columns]

    def integer(self) -> list[int]:
        return [i for i, v in enumerate(self.columns) if v.cat == "Integer"]


def _row_bounds(constraint: Any) -> tuple[float, float]:
    rhs = -float(constraint.constant)
    if constraint.sense == -1:  # <=
        return -math.inf, rhs
    if constraint.sense == 1:  # >=
        return rhs, math.inf
    return rhs, rhs


def site_blocks(model: Model, rows: Iterable[Any] | None = None) -> list[SiteBlock]:
    """Each site's block; sites without variables get an empty one. A phased model's block is the site
    over the whole window: every period's variables, the rows linking them and its x[s,o]; its modes are
    the scale-out switch types (the tiers may grow from period to period). `rows`: the problem's rows to
    place (default all; a row mentioning a variable of no block is never placed, so a caller that knows
    which rows can be placed saves reading the others)."""
    blocks = []
    owner: dict[str, int] = {}
    known = {v.name for v in model.prob.variables()} if model.multi else set()
    for s, sm in enumerate(model.sites):
        check_time("splitting the model by site")
        modes: dict[Any, Any]
        if model.multi:  # a variable no row mentions (a period's unused option) is left out
            columns = [v for pm in model.periods for v in site_variables(pm.sites[s]) if v.name in known]
            modes = {o: model.window[s][o] for o in sorted(model.window[s])}
            columns += list(modes.values())
        else:
            columns, modes = site_variables(sm), {m: sm.y[m] for m in sorted(sm.y)}
        blocks.append(SiteBlock(sm, columns, {v.name: i for i, v in enumerate(columns)}, modes))
        owner.update((v.name, s) for v in columns)
    coupling = set(model.coupling)
    for i, constraint in enumerate(model.prob.constraints() if rows is None else rows):
        if i % 1024 == 0:
            check_time("splitting the model by site")
        _place_row(blocks, owner, constraint.name in coupling, constraint)
    return blocks


def rows_by_period(model: Model) -> list[list[Any]]:
    """A phased model's rows grouped by the one period all their variables belong to (rows that mention
    none, or several periods, in no group): what each period's blocks can hold, read in one pass."""
    period_of = {
        v.name: p for p, pm in enumerate(model.periods) for sm in pm.sites for v in site_variables(sm)
    }
    groups: list[list[Any]] = [[] for _ in model.periods]
    for i, constraint in enumerate(model.prob.constraints()):
        if i % 1024 == 0:
            check_time("grouping the model's rows by period")
        periods = {period_of.get(var.name, -1) for var, coef in constraint.items() if coef}
        if len(periods) == 1:
            p = periods.pop()
            if p >= 0:
                groups[p].append(constraint)
    return groups


def _place_row(blocks: list[SiteBlock], owner: dict[str, int], coupling: bool, constraint: Any) -> None:
    """A site's own row goes to its block; a coupling <= row with non-negative terms goes, projected, to
    every site it mentions; anything else (demand rows, equalities across sites) to none."""
    lo, hi = _row_bounds(constraint)
    terms = [(var, float(coef)) for var, coef in constraint.items() if coef]
    sites = {owner.get(var.name, -1) for var, _ in terms}
    if -1 in sites:
        return
    if not coupling and len(sites) == 1:
        block = blocks[sites.pop()]
        block.rows.append(Row(lo, hi, [block.position[v.name] for v, _ in terms], [c for _, c in terms]))
        return
    if not coupling or hi == math.inf or lo > -math.inf or any(c < 0 for _, c in terms):
        return  # projecting drops terms: only sound for <= rows whose dropped terms are all >= 0
    for s in sites:
        block = blocks[s]
        own = [(block.position[v.name], c) for v, c in terms if owner[v.name] == s]
        block.rows.append(Row(lo, hi, [i for i, _ in own], [c for _, c in own]))


SMALL_MIP_OPTIONS: dict[str, bool | float] = {
    "mip_allow_restart": False,
    "mip_detect_symmetry": False,
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_heuristic_effort": 0.0,
}
"""A site's block as a MILP is small and solved thousands of times (pricing, `frontier`'s walk), nearly
always at the root, where HiGHS's whole-model machinery (restarts, symmetry detection, its primal
heuristics) costs more than it finds (bench/README.md). What a MILP proves does not depend on them. A
model with periods keeps HiGHS's defaults for its window-long blocks."""


def block_highs(block: SiteBlock, *, integer: bool, lean: bool = False) -> Any:
    """The block as a HiGHS model (objective left at zero for the caller to set); a `lean` MILP with
    SMALL_MIP_OPTIONS."""
    import highspy
    import numpy as np

    h = new_highs()
    if integer and lean:
        for name, value in SMALL_MIP_OPTIONS.items():
            h.setOptionValue(name, value)
    inf = highspy.kHighsInf
    n = len(block.columns)
    lower = [max(-inf, b) for b in block.lower()]
    upper = [min(inf, b) for b in block.upper()]
    h.addVars(n, np.array(lower, dtype=float), np.array(upper, dtype=float))
    for row in block.rows:
        h.addRow(
            max(-inf, row.lower),
            min(inf, row.upper),
            len(row.index),
            np.array(row.index, dtype=np.int32),
            np.array(row.value, dtype=float),
        )
    if integer:
        for i in block.integer():
            h.changeColIntegrality(i, highspy.HighsVarType.kInteger)
    return h
