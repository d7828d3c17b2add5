"""Located spec problems, as the CLI prints them on stderr."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from trnplan.errors import Problem


def render_problems(problems: Iterable[Problem]) -> Text:
    """Located problems, one per line (`path:line:col: key.path: message`), then a count."""
    items = sorted(problems)
    text = Text()
    for p in items:
        where = f"{p.file}:{p.line}:{p.col}" if p.line else p.file
        text.append(where, style="bold")
        text.append(": ")
        if p.path:
            text.append(p.path, style="cyan")
            text.append(": ")
        text.append(p.message + "\n")
    n = len(items)
    text.append(f"{n} problem{'s' if n != 1 else ''} found", style="bold red")
    return text
