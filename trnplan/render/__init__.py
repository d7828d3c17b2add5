"""Terminal rendering: the only package that uses rich.

Every `render_*` function returns a renderable (a table or a group of them); the CLI decides where to print
it. Numbers are formatted by one helper, `trnplan.numbers.fmt`, so a dollar or a megawatt reads the same
everywhere.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

from trnplan.numbers import fmt

PIPE_WIDTH = 160
WIDE_WIDTH = 1000
"""`--wide`: room for every column of any table trnplan prints (its lines are as long as they need)."""


def console(stderr: bool = False, wide: bool = False) -> Console:
    """A console on stdout (results) or stderr (messages).

    rich honours NO_COLOR, FORCE_COLOR, TERM=dumb and COLUMNS, and writes no colour to a pipe. A pipe has
    no width, so there tables get up to PIPE_WIDTH columns (not rich's 80) and stay whole in CI logs.
    `wide` (`--wide`) gives WIDE_WIDTH columns wherever the output goes.
    """
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if wide:
        width = WIDE_WIDTH
    elif "COLUMNS" not in os.environ and not _isatty(stream):
        width = PIPE_WIDTH
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# Imported after `console`, which they do not need but the CLI may ask for first.
from trnplan.render.bom import render_bom  # noqa: E402
from trnplan.render.catalog import render_catalog  # noqa: E402
from trnplan.render.diff import render_diff  # noqa: E402
from trnplan.render.plan import render_plan, solver_line  # noqa: E402
from trnplan.render.problems import render_problems  # noqa: E402
from trnplan.render.tables import Trimmed  # noqa: E402

__all__ = [
    "PIPE_WIDTH",
    "Trimmed",
    "console",
    "fmt",
    "render_bom",
    "render_catalog",
    "render_diff",
    "render_plan",
    "render_problems",
    "solver_line",
]
