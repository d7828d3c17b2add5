"""The words of a plan's checks against itself: a `Mismatch` (a figure its parts contradict, with the key
paths of both, so a reader gives their lines), sums with their slack, and the one "BOM lines sum to capex,
to the cent" check every reader relies on (`bom_capex_problem`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trnplan.errors import KeyPath
from trnplan.numbers import cents, plain
from trnplan.plan.model import BomLine, PeriodSite, SiteSection

REL_TOL = 1e-6
"""Relative tolerance of `check_plan`'s comparisons with the cost model."""
MAX_FIGURE = 1e15
"""Largest magnitude of any number a plan file may state: far above every real figure (a plan's money
stops at 1e13 USD, where a cent is still exact) and far below where a sum of figures could overflow."""
SUM_REL = 1e-12
"""Relative slack of a sum here, for floating point only: rounding (figures to 6 decimals, money to the
cent) is allowed for in each check's absolute slack."""
MAX_LINES = 12
"""Lines of parts a message lists one by one; beyond it, the first few and the last."""


def bom_capex_problem(bom: list[BomLine], capex_usd: float) -> str | None:
    """'BOM lines sum to $X but capex_usd is $Y' when the lines do not add up to capex to the cent."""
    bom_cents = sum(cents(line.extended_usd) for line in bom)
    if bom_cents == cents(capex_usd):
        return None
    return f"BOM lines sum to ${bom_cents / 100:,.2f} but capex_usd is ${capex_usd:,.2f}"


def lines_text(lines: Iterable[int]) -> str:
    """`line 12`, `lines 12, 25` or, past MAX_LINES, the first ten and the last: `lines 12, 25, ... 400 (40
    lines)`."""
    shown = sorted(set(lines))
    if len(shown) == 1:
        return f"line {shown[0]}"
    if len(shown) <= MAX_LINES:
        return "lines " + ", ".join(map(str, shown))
    head = ", ".join(map(str, shown[: MAX_LINES - 2]))
    return f"lines {head}, ... {shown[-1]} ({len(shown)} lines)"


def _name(path: KeyPath) -> str:
    return ".".join(str(p) for p in path)


@dataclass(frozen=True)
class Mismatch:
    """A figure a plan states that the plan's own parts contradict: `path` is the figure's key path in
    the file (where a reader points), `message` says what it is and what the parts give.

    A mismatch of a relation (a sum, a product) also names its figure's value (`stated`), the relation
    (`claim`), what the parts give (`result`) and the key paths of those parts (`parts`), so that a reader
    with the file's lines can say where each is (`located`): an edited part is found from its sum's line.
    """

    path: KeyPath
    message: str
    parts: tuple[KeyPath, ...] = ()
    stated: str = ""
    claim: str = ""
    result: str = ""

    def __str__(self) -> str:
        return self.message

    def located(self, line_of: Callable[[KeyPath], int | None]) -> str:
        """The message with the line of the figure and of its parts: `totals.units 1,350 at line 405 is
        not the sum of its deployments' units (1,356: lines 289, 322, 357, 367)`."""
        if not self.claim:
            return self.message
        at = line_of(self.path)
        lines = [n for n in (line_of(p) for p in self.parts) if n]
        where = f" at line {at}" if at else ""
        detail = f"{self.result}: {lines_text(lines)}" if lines else self.result
        return f"{_name(self.path)} {self.stated}{where} {self.claim} ({detail})"


def relation(path: KeyPath, stated: str, claim: str, result: str, parts: Iterable[KeyPath] = ()) -> Mismatch:
    """A figure that does not stand in its relation to its parts: `NAME STATED CLAIM (RESULT)`, e.g.
    `totals.units 1,350 is not the sum of its deployments' units (1,356)`."""
    return Mismatch(path, f"{_name(path)} {stated} {claim} ({result})", tuple(parts), stated, claim, result)


def num(value: float) -> str:
    return plain(value, 6)


def usd_text(value: float) -> str:
    return f"${value:,.2f}"


def sum_mismatch(
    path: KeyPath,
    stated: float,
    parts: float,
    claim: str,
    tol: float,
    where: Iterable[KeyPath] = (),
    money: bool = False,
) -> list[Mismatch]:
    """[Mismatch] when `stated` differs from what its parts give (`parts`, the figures at `where`) by more
    than `tol` (plus SUM_REL of it); `claim` says how ("is not the sum of its sites' racks")."""
    if abs(stated - parts) <= tol + SUM_REL * max(abs(stated), abs(parts)):
        return []
    text = usd_text if money else num
    return [relation(path, text(stated), claim, text(parts), where)]


def each(items: Iterable[KeyPath], key: str) -> list[KeyPath]:
    return [(*at, key) for at in items]


def deployment_paths(sites: Mapping[str, SiteSection | PeriodSite], at: KeyPath = ()) -> list[KeyPath]:
    return [
        (*at, "sites", site_id, "deployments", i)
        for site_id, s in sites.items()
        for i in range(len(s.deployments))
    ]


def site_paths(sites: Mapping[str, Any], at: KeyPath = ()) -> list[KeyPath]:
    return [(*at, "sites", site_id) for site_id in sites]
