"""A sweep on a terminal: its progress bar (stderr) and its summary tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from trnplan.numbers import money_short, trimmed
from trnplan.render.tables import Col, Grid, spaced
from trnplan.sweep.report import objective_text

STATS = ("min", "q1", "median", "q3", "max")


class SweepProgress:
    """A bar of runs finished, on the terminal stderr is; `advance` per run, `close` at the end."""

    def __init__(self, console: Console, total: int, done: int, title: str) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=console, transient=True,
        )
        self._task = self._progress.add_task(title, total=total, completed=done)
        self._progress.start()

    def advance(self) -> None:
        self._progress.advance(self._task)

    def close(self) -> None:
        self._progress.stop()


def render_sweep(summary: dict[str, Any]) -> RenderableType:
    """The distribution of the objective and TCO, the choices made per site, and the tornado."""
    status = ", ".join(f"{n} {s}" for s, n in summary["status"].items()) or "none"
    dist = Grid(
        f"Sweep: {summary.get('scenario', '')} ({summary['finished']} of {summary['runs']} runs: {status})",
        [Col("figure"), *(Col(s, right=True) for s in STATS)],
    )
    for key, show in (("objective", objective_text(summary)), ("tco_usd", money_short)):
        if summary[key]:
            name = f"objective ({summary.get('objective_kind', '')})" if key == "objective" else "TCO"
            dist.add_row(name, *(show(summary[key][s]) for s in STATS))
    choices = Grid("Choices made (form/cooling/scale-up/scale-out)",
                   [Col("site"), Col("choice"), Col("runs", right=True), Col("share", right=True)], keys=2)
    for site, made in summary["choices"].items():
        for i, c in enumerate(made):
            choices.add_row(site if i == 0 else "", c["choice"], str(c["runs"]), f"{c['share']:.0%}")
    return Group(*spaced([dist, choices, _which_input(summary)]))


def _which_input(summary: dict[str, Any]) -> RenderableType:
    """A grid's tornado, or a sample's inputs ranked (with the warning when they cannot be)."""
    if "sensitivity" in summary:
        found = summary["sensitivity"]
        ranking = Grid(
            "Which input matters: inputs ranked by S1 (the share of TCO's variance each explains)",
            [Col("input"), Col("S1", right=True), Col("±", right=True), Col("told apart")],
            caption=found["method"] + (f". {found['warning']}" if found.get("warning") else ""),
        )
        for item in found["inputs"]:
            ranking.add_row(item["path"], f"{item['s1']:.3f}", f"{item['s1_conf']:.3f}",
                            "yes" if item["told_apart"] else "no")
        return ranking
    tornado = Grid(
        "Tornado: TCO low to high per varied input",
        [Col("input"), Col("low", right=True), Col("high", right=True), Col("TCO at low", right=True),
         Col("TCO at high", right=True), Col("swing", right=True)],
        caption=summary["tornado"]["method"],
    )
    for bar in summary["tornado"]["inputs"]:
        tornado.add_row(bar["path"], trimmed(bar["low"]), trimmed(bar["high"]),
                        *(money_short(bar[k]) for k in ("tco_low_usd", "tco_high_usd", "swing_usd")))
    return tornado


def render_tornado(summary: dict[str, Any]) -> RenderableType:
    """An exact tornado: a bar per input (widest swing first), then the inputs the scenario cannot use."""
    base = summary["base_tco_usd"]
    shown = money_short(base) if base is not None else "—"
    bars = Grid(
        f"Tornado: {summary.get('scenario', '')}, base TCO {shown}",
        [Col("input"), Col("low", right=True), Col("high", right=True), Col("TCO at low", right=True),
         Col("TCO at high", right=True), Col("swing", right=True), Col("plan")],
        caption=summary["method"] + "; plan: whether the choices made change at either end",
    )
    for bar in summary["tornado"]:
        bars.add_row(bar["input"], trimmed(bar["low"]), trimmed(bar["high"]),
                     *(money_short(bar[k]) for k in ("tco_low_usd", "tco_high_usd", "swing_usd")),
                     "changes" if bar["choices_changed"] else "same")
    parts: list[RenderableType] = [bars]
    if summary.get("failed"):
        failed = Grid("Inputs with an end that has no plan", [Col("input"), Col("status (low, high)")])
        for item in summary["failed"]:
            failed.add_row(item["input"], ", ".join(item["status"]))
        parts.append(failed)
    if summary["unused"]:
        unused = Grid("Ranged inputs the scenario cannot use (no bar)", [Col("input")])
        for path in summary["unused"]:
            unused.add_row(path)
        parts.append(unused)
    return Group(*spaced(parts))
