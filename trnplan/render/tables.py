"""The one table style every renderer uses, and the layout that makes a table fit the terminal.

A `Grid` is a table that picks its layout when it is printed, from the width it is given:
  1. wide: every column side by side, when each cell fits whole (free text may wrap at its spaces);
  2. stacked: related columns stacked in one (`site` over `form`, `units` over `racks`), when that fits;
  3. records: one block per row, its key cells on a line and `label value` pairs packed below.
An id or a number is never cut and never folded: only free text wraps, and only at spaces. Titles and
captions are printed apart from the table, so they never squeeze it either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from trnplan.errors import visible

BOX = box.SIMPLE_HEAD
GAP = 2
"""Columns apart: one cell of padding and the (blank) vertical rule of the house style."""
INDENT = 2
"""Indent of a record's fields under its key line."""

Cell = str | Text


@dataclass(frozen=True)
class Col:
    """A column: `right` for figures (right-aligned), `wrap` for free text that may wrap at its spaces.
    Ids and numbers are neither: they are always shown whole."""

    header: str
    right: bool = False
    wrap: bool = False
    style: str = ""
    min_width: int = 0
    """Least width free text is squeezed to (beyond its longest word), so it does not turn into a column
    of single words."""


@dataclass
class _Row:
    cells: list[Text]
    style: str = ""
    end_section: bool = False


def _text(cell: Cell | None) -> Text:
    """A cell as rich Text; characters a terminal would act on (ESC, bidi overrides) written as escapes, so
    text from a plan or spec file cannot drive the terminal. Line breaks are the table's own."""
    if cell is None:
        return Text("")
    if isinstance(cell, Text):
        return cell.copy()
    return Text("\n".join(visible(part) for part in str(cell).split("\n")))


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.split("\n")), default=0)


@dataclass
class _Shape:
    """A layout's columns and rows, as text: what is measured and then handed to rich."""

    columns: list[Col]
    rows: list[_Row]
    show_header: bool

    def limits(self) -> list[tuple[int, int]]:
        """(least, natural) width of each column: wrapping text may shrink to its longest word, anything
        else needs its widest line; headers may wrap at their spaces."""
        out = []
        for i, col in enumerate(self.columns):
            header = col.header if self.show_header else ""
            cells = [row.cells[i].plain for row in self.rows]
            body_min = max((_longest_word(c) if col.wrap else _longest_line(c) for c in cells), default=0)
            natural = max([_longest_line(c) for c in cells] + [_longest_line(header), body_min, 1])
            least = max(body_min, _longest_word(header), min(col.min_width, natural), 1)
            out.append((least, natural))
        return out

    def widths(self, width: int) -> list[int] | None:
        """Column widths that fit `width` with every cell whole, or None when none do."""
        limits = self.limits()
        gaps = GAP * (len(limits) - 1)
        if sum(natural for _, natural in limits) + gaps <= width:
            return [natural for _, natural in limits]
        if sum(least for least, _ in limits) + gaps > width:
            return None
        widths = [least for least, _ in limits]
        return _share(widths, [natural for _, natural in limits], width - gaps - sum(widths))

    def table(self, widths: list[int]) -> Table:
        t = Table(box=BOX, show_edge=False, pad_edge=False, collapse_padding=True,
                  show_header=self.show_header)
        for col, w in zip(self.columns, widths, strict=True):
            t.add_column(Text(col.header), justify="right" if col.right else "left", width=w,
                         overflow="fold", style=col.style or None)
        for row in self.rows:
            t.add_row(*row.cells, style=row.style or None, end_section=row.end_section)
        return t


@dataclass
class Grid:
    """A table that fits the width it is printed at (see the module docstring).

    `keys`: how many leading columns name a row (they head its record in the narrowest layout).
    `stack`: groups of column indices shown stacked in one column in the middle layout; by default the
    key columns stack together and the other columns stack in pairs.
    """

    title: str | None
    columns: list[Col]
    keys: int = 1
    caption: str | None = None
    show_header: bool = True
    stack: list[tuple[int, ...]] | None = None
    rows: list[_Row] = field(default_factory=list)

    def add_row(self, *cells: Cell | None, style: str = "", end_section: bool = False) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append(_Row([_text(c) for c in cells], style, end_section))

    # --- layouts ----------------------------------------------------------------------------------

    def _wide(self) -> _Shape:
        return _Shape(self.columns, self.rows, self.show_header)

    def _groups(self) -> list[tuple[int, ...]]:
        if self.stack is not None:
            return self.stack
        keys = tuple(range(min(self.keys, len(self.columns))))
        rest = list(range(len(keys), len(self.columns)))
        return ([keys] if keys else []) + [tuple(rest[i:i + 2]) for i in range(0, len(rest), 2)]

    def _stacked(self) -> _Shape | None:
        groups = self._groups()
        if all(len(g) == 1 for g in groups):
            return None
        columns = []
        for g in groups:
            cols = [self.columns[i] for i in g]
            columns.append(Col("\n".join(c.header for c in cols), right=all(c.right for c in cols),
                               wrap=any(c.wrap for c in cols), min_width=max(c.min_width for c in cols)))
        rows = [
            _Row([Text("\n").join(row.cells[i] for i in g) for g in groups], row.style, row.end_section)
            for row in self.rows
        ]
        return _Shape(columns, rows, self.show_header)

    def _records(self, width: int) -> list[Text]:
        """One block per row: the key cells on a line, then `label value` pairs packed to `width`, then
        the free text columns, each wrapped at its spaces."""
        lines: list[Text] = []
        legend = "  ".join(c.header.replace("\n", " ") for c in self.columns[: self.keys] if c.header)
        if self.show_header and legend:
            lines.append(Text(legend, style="dim"))  # what each record's first line names
        for row in self.rows:
            head = Text("  ").join(c for c in row.cells[: self.keys] if c.plain)
            if head.plain:
                head.stylize("bold")
                if row.style:
                    head.stylize(row.style)
                lines.append(head)
            pairs: list[Text] = []
            prose: list[tuple[str, Text]] = []
            for col, cell in zip(self.columns[self.keys:], row.cells[self.keys:], strict=True):
                if not cell.plain.strip():
                    continue
                label = col.header.replace("\n", " ").strip()
                if col.wrap and _longest_line(cell.plain) > 24:
                    prose.append((label, cell))
                    continue
                pair = Text(f"{label} " if label else "", style="dim") + cell
                pairs.append(pair)
            lines.extend(_pack(pairs, width - INDENT))
            for label, text in prose:
                lead = Text(f"{label} " if label else "", style="dim") + text
                for i, part in enumerate(_wrapped(lead, width - INDENT, width - 2 * INDENT)):
                    lines.append(Text(" " * (INDENT if i == 0 else 2 * INDENT)) + part)  # hanging indent
        return lines

    # --- rich -------------------------------------------------------------------------------------

    def _header_lines(self) -> list[Text]:
        return [Text(self.title, style="table.title")] if self.title else []

    def _caption_lines(self) -> list[Text]:
        return [Text(self.caption, style="table.caption")] if self.caption else []

    def layout(self, width: int) -> str:
        """Which layout `width` gets: 'wide', 'stacked' or 'records'."""
        if self._wide().widths(width) is not None:
            return "wide"
        stacked = self._stacked()
        if stacked is not None and stacked.widths(width) is not None:
            return "stacked"
        return "records"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield from self._header_lines()
        kind = self.layout(width)
        if kind == "records":
            yield from self._records(width)
        else:
            shape = self._wide() if kind == "wide" else self._stacked()
            assert shape is not None
            widths = shape.widths(width)
            assert widths is not None
            yield shape.table(widths)
        yield from self._caption_lines()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        limits = self._wide().limits()
        natural = sum(n for _, n in limits) + GAP * (len(limits) - 1)
        return Measurement(min(natural, 20), max(natural, cell_len(self.title or "")))


def _share(widths: list[int], naturals: list[int], spare: int) -> list[int]:
    """Widen the columns that want more by `spare` cells in all: the smallest wants first, each in full
    while the room lasts, so short text stays on one line and the longest text column wraps."""
    for i in sorted(range(len(widths)), key=lambda i: (naturals[i] - widths[i], i)):
        extra = min(max(0, naturals[i] - widths[i]), spare)
        widths[i] += extra
        spare -= extra
    return widths


def _pack(pairs: Sequence[Text], width: int) -> list[Text]:
    """Pairs on indented lines of at most `width` cells, three spaces apart; a pair never splits."""
    lines: list[Text] = []
    line = Text()
    for pair in pairs:
        if line.plain and cell_len(line.plain) + 3 + cell_len(pair.plain) > width:
            lines.append(Text(" " * INDENT) + line)
            line = Text()
        line = line + Text("   ") + pair if line.plain else pair
    if line.plain:
        lines.append(Text(" " * INDENT) + line)
    return lines


def _wrapped(text: Text, width: int, rest: int | None = None) -> list[Text]:
    """Free text broken at its spaces into lines of at most `width` cells (`rest` after the first line),
    its own line breaks kept."""
    out: list[Text] = []
    for part in text.split("\n"):
        line = Text()
        for word in part.split(" "):
            if not word.plain:
                continue
            limit = width if not out else (rest or width)
            if line.plain and cell_len(line.plain) + 1 + cell_len(word.plain) > limit:
                out.append(line)
                line = Text()
            line = line + Text(" ") + word if line.plain else word
        out.append(line)
    return out


def spaced(parts: Sequence[RenderableType]) -> list[RenderableType]:
    """The parts with an empty line between each two."""
    out: list[RenderableType] = []
    for i, p in enumerate(parts):
        if i:
            out.append(Text(""))
        out.append(p)
    return out


class Trimmed:
    """A renderable printed line by line without trailing spaces (tables pad their cells; a pipe, a file
    or a diff of outputs should not see that padding)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in console.render_lines(self.renderable, options, pad=False):
            yield from _rstrip(line)
            yield Segment.line()


def _rstrip(line: Iterable[Segment]) -> Iterator[Segment]:
    segments = list(line)
    while segments and not segments[-1].control and not segments[-1].text.rstrip():
        segments.pop()
    if segments and not segments[-1].control:
        last = segments[-1]
        segments[-1] = Segment(last.text.rstrip(), last.style)
    yield from segments
