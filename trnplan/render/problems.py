"""Located spec problems, as the CLI prints them on stderr."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from trnplan.errors import Problem
from trnplan.render.messages import wrap_text


def render_problems(problems: Iterable[Problem], width: int | None = None) -> Text:
    """Located problems, one per line (`path:line:col: key.path: message`), then a count. With a `width`
    (a terminal's), a problem longer than that wraps with a hanging indent, its location whole on the
    first line, so it stays one click or one copy away from the editor."""
    items = sorted(problems)
    text = Text()
    for p in items:
        where = f"{p.file}:{p.line}:{p.col}" if p.line else p.file
        line = Text()
        line.append(where, style="bold")
        line.append(": ")
        if p.path:
            line.append(p.path, style="cyan")
            line.append(": ")
        line.append(p.message)
        text.append_text(wrap_text(line, width, keep=[f"{where}:"]) if width else line)
        text.append("\n")
    n = len(items)
    text.append(f"{n} problem{'s' if n != 1 else ''} found", style="bold red")
    return text
