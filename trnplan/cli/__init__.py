"""The `trnplan` command: a thin layer that parses options, calls the library, renders, and exits.

This is the only package that uses typer. PuLP and highspy are imported only by `optimize`, inside the
command, so `--help`, `show`, `bom` and `diff` start fast.

Exit codes: 0 ok; 1 differences found (`diff --exit-code`, `--fail-if`, `optimize --check`) or an
unexpected internal error (reported in one line; set TRNPLAN_DEBUG=1 for the traceback); 2 usage;
3 invalid specs or input; 4 infeasible; 5 solver failure or time limit with no plan; 130 interrupted.
"""

from typing import Any

from trnplan.cli import choices, perf, plans, report, solve, specs, sweep
from trnplan.cli.app import app, main


def _flags_without_a_type() -> None:
    """typer's help shows `<bool>` beside every flag (`--check <bool>`), as if it took a value; a flag
    takes none, so its type column is left empty."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_trnplan", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)  # type: ignore[no-any-return]

    display_type_rich._trnplan = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


class _Unpadded:
    """A text stream that drops the spaces rich pads help lines with, before each line break."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        import re

        self._stream.write(re.sub(r"[ \t]+(?=\n)", "", text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _help_without_trailing_spaces() -> None:
    """typer prints help through a rich console that pads every line to the width: piped help (into a
    file, a pager, a diff) gets no trailing spaces. A terminal's help is left as it is."""
    from typer import rich_utils

    make = getattr(rich_utils, "_get_rich_console", None)
    if make is None or getattr(make, "_trnplan", False):
        return

    def get_console(stderr: bool = False) -> Any:
        console = make(stderr=stderr)
        if not console.is_terminal:
            console.file = _Unpadded(console.file)
        return console

    get_console._trnplan = True  # type: ignore[attr-defined]
    rich_utils._get_rich_console = get_console


_flags_without_a_type()
_help_without_trailing_spaces()

# Registered here, in the order `trnplan --help` lists them.
for _command in (
    specs.init, specs.validate, specs.show, perf.perf, solve.optimize, choices.options, sweep.sweep,
    plans.bom, plans.diff, report.report, specs.schema,
):
    app.command()(_command)

__all__ = ["app", "main"]
