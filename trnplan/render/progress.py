"""Live progress of a long search, on one line of a terminal's stderr (rewritten in place)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.console import Console

from trnplan.numbers import fmt, money_short

if TYPE_CHECKING:
    from trnplan.optimize.progress import Progress


def _figure(value: float, unit: str) -> str:
    if unit == "USD":
        return money_short(value)
    if unit == "PFLOPs":
        return fmt(value, "pflops")
    return fmt(value)


def progress_text(p: Progress) -> str:
    """'solving trn3-100k: best $3.86B, bound $3.85B, gap 0.33%, 12 s'; the figures a stage has."""
    parts = []
    if p.unit and p.incumbent is not None:
        parts.append(f"best {_figure(p.incumbent, p.unit)}")
    if p.unit and p.bound is not None:
        parts.append(f"bound {_figure(p.bound, p.unit)}")
    if p.gap is not None:
        parts.append(f"gap {fmt(p.gap, 'pct')}")
    elif p.incumbent is None:
        parts.append("no plan yet")
    parts.append(f"{p.elapsed_s:.0f} s")
    return f"{p.stage}: {', '.join(parts)}"


class ProgressLine:
    """Prints each progress report over the last, on the terminal stderr is; `close` clears the line.
    Called a few times a second from the solve loop; never used when stderr is not a terminal."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown = False

    def __call__(self, p: Progress) -> None:
        text = progress_text(p)
        width = max(10, self.console.width - 1)
        if cell_len(text) > width:
            text = set_cell_size(text, width - 1) + "…"
        self.console.file.write("\r" + text + "\x1b[K")
        self.console.file.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.console.file.write("\r\x1b[K")
            self.console.file.flush()
            self.shown = False
