"""A plan across futures on a terminal: what the uncertainty is worth, and each future's TCO and what it
buys after the shared purchases."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from trnplan.numbers import money_short
from trnplan.plan.model import FutureRun, Plan
from trnplan.render.tables import Col, Grid, spaced


def _later(run: FutureRun, shared: int) -> str:
    """Units bought after the shared periods, by form/cooling/scale-up switch."""
    bought: dict[str, int] = {}
    for period in run.periods[shared:]:
        for site in period.sites.values():
            for d in site.deployments:
                if d.bought:
                    bought[d.key] = bought.get(d.key, 0) + d.bought
    return ", ".join(f"{n:,} {key}" for key, n in sorted(bought.items())) or "nothing"


def render_futures(plan: Plan) -> RenderableType:
    """The futures part of a plan across futures (nothing for another plan)."""
    part = plan.futures
    if part is None or plan.periods is None:
        return Text("")
    shared = len(plan.periods)
    risk = f", {part.risk} {money_short(part.risk_tco_usd)}" if part.risk_tco_usd is not None else ""
    vss = (money_short(part.vss_usd) if part.vss_usd is not None
           else "— (the average future's plan cannot go on)")
    head = Text(
        f"Across {part.n} futures (seed {part.seed}), purchases up to {part.decide} shared: expected TCO "
        f"{money_short(part.expected_tco_usd)}{risk}; value of the stochastic solution {vss}; expected "
        f"value of perfect information {money_short(part.evpi_usd)}"
    )
    runs = Grid("Futures: TCO and what each buys after the shared purchases",
                [Col("future", right=True), Col("TCO", right=True), Col("bought later", wrap=True)])
    for i, run in enumerate(part.runs):
        runs.add_row(str(i), money_short(run.tco_usd), _later(run, shared))
    return Group(*spaced([head, runs]))
