"""The one table style every renderer uses: a simple head rule, titles and captions on the left, no
outer edge, and cells that fold rather than hide a figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

BOX = box.SIMPLE_HEAD


class FoldingTable(Table):
    """A table whose cells fold instead of ending in an ellipsis: a narrow terminal wraps a figure,
    never hides it."""

    def add_column(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("overflow", "fold")
        super().add_column(*args, **kwargs)


def table(title: str | None = None, caption: str | None = None) -> Table:
    """An empty table in the house style."""
    return FoldingTable(title=title, caption=caption, box=BOX, title_justify="left", caption_justify="left",
                        show_edge=False, pad_edge=False, collapse_padding=True)


def num_col(t: Table, header: str) -> None:
    """A right-aligned column of figures, never wrapped."""
    t.add_column(header, justify="right", no_wrap=True)


def spaced(parts: Sequence[RenderableType]) -> list[RenderableType]:
    """The parts with an empty line between each two."""
    out: list[RenderableType] = []
    for i, p in enumerate(parts):
        if i:
            out.append(Text(""))
        out.append(p)
    return out
