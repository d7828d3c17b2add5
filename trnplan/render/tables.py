"""The one table style every renderer uses, and the layout that makes a table fit the terminal.

A `Grid` is a table that picks its layout when it is printed, from the width it is given:
  1. wide: every column side by side, when each cell fits whole (free text may wrap at its spaces);
  2. detail (a grid with a `detail` column only): that column's text under each row, across the width,
     and the other columns side by side;
  3. narrow: the columns a reader needs most, side by side, the others left out by their `priority`
     (kubectl's default against `-o wide`), with a line naming what was left out and how to see it;
  4. stacked: related columns stacked in one (`site` over `form`, `units` over `racks`), when that fits;
  5. records: one block per row, its key cells on a line and `label value` pairs packed below.
An id or a number is never cut and never folded: only free text wraps, and only at spaces, each wrapped
line after the first indented (a hanging indent), so where one entry ends and the next begins stays
plain. Titles and captions are printed apart from the table, so they never squeeze it either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

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
    priority: int = 0
    """0: always shown. A narrow terminal leaves out the columns of the highest priority first (ties: the
    rightmost first), as few as it takes for the rest to fit side by side."""


WIDE_HINT = "--wide"
"""How a command's user sees every column, named in the line under a narrowed table."""


@dataclass
class _Row:
    cells: list[Text]
    style: str = ""
    end_section: bool = False
    summary: bool = False


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


def _least_hanging(text: str) -> int:
    """The least width wrapping text needs with its hanging indent: each line whole, or its first word
    and each later word with the indent before it, whichever is less."""
    least = 0
    for line in text.split("\n"):
        words = [cell_len(w) for w in line.split()]
        if words:
            least = max(least, min(cell_len(line), max([words[0], *(w + INDENT for w in words[1:])])))
    return least


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
            hang = col.wrap and not col.right
            body_min = max((_least_hanging(c) if hang else _longest_word(c) if col.wrap else _longest_line(c)
                            for c in cells), default=0)
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

    def table(self, widths: list[int], rows: list[_Row] | None = None, show_header: bool | None = None,
              ) -> Table:
        """The rich table of `rows` (default: all) at `widths`; wrapping text is wrapped here, with its
        hanging indent, so rich only lays out lines that already fit."""
        show = self.show_header if show_header is None else show_header
        t = Table(box=BOX, show_edge=False, pad_edge=False, collapse_padding=True, show_header=show)
        for col, w in zip(self.columns, widths, strict=True):
            t.add_column(Text(col.header), justify="right" if col.right else "left", width=w,
                         overflow="fold", style=col.style or None)
        for row in self.rows if rows is None else rows:
            cells = [
                _hanging(cell, w) if col.wrap and not col.right else cell
                for col, cell, w in zip(self.columns, row.cells, widths, strict=True)
            ]
            t.add_row(*cells, style=row.style or None, end_section=row.end_section)
        return t


@dataclass
class Grid:
    """A table that fits the width it is printed at (see the module docstring).

    `keys`: how many leading columns name a row (they head its record in the narrowest layout).
    `stack`: groups of column indices shown stacked in one column in the stacked layout; by default the
    key columns stack together and the other columns stack in pairs.
    `detail`: the index of a free-text column shown beside the others only when each of its lines fits
    whole there; otherwise its text goes under each row, from the last key column on (its header under
    that column's), and the other columns keep their layout.
    """

    title: str | None
    columns: list[Col]
    keys: int = 1
    caption: str | None = None
    show_header: bool = True
    stack: list[tuple[int, ...]] | None = None
    detail: int | None = None
    rows: list[_Row] = field(default_factory=list)

    def add_row(self, *cells: Cell | None, style: str = "", end_section: bool = False,
                summary: bool = False) -> None:
        """A row of cells. A `summary` row (a subtotal, a total) is a label and its figures: in the stacked
        layout its cells rise over the blank ones above them, so the label stands beside its figures."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append(_Row([_text(c) for c in cells], style, end_section, summary))

    # --- layouts ----------------------------------------------------------------------------------

    def _wide(self) -> _Shape:
        if self.detail is None:
            return _Shape(self.columns, self.rows, self.show_header)
        columns = list(self.columns)
        columns[self.detail] = replace(columns[self.detail], wrap=False, min_width=0)  # its lines whole
        return _Shape(columns, self.rows, self.show_header)

    def _kept(self) -> list[int]:
        """The columns the table keeps: all but the detail column."""
        return [i for i in range(len(self.columns)) if i != self.detail]

    def _beside(self) -> _Shape:
        """The other columns side by side, the detail column's header under the last key column's."""
        kept = self._kept()
        columns = [self.columns[i] for i in kept]
        rows = [_Row([row.cells[i] for i in kept], row.style, row.end_section, row.summary)
                for row in self.rows]
        return _Shape(self._with_detail_header(columns, self._under()), rows, self.show_header)

    def _under(self) -> int:
        """Where the detail text starts: under the last key column (its index in the kept columns)."""
        kept = self._kept()
        last_key = max((i for i in kept if i < self.keys), default=kept[0] if kept else 0)
        return kept.index(last_key) if last_key in kept else 0

    def _with_detail_header(self, columns: list[Col], under: int) -> list[Col]:
        if self.detail is None or not columns:
            return columns
        out = list(columns)
        header = "\n".join(h for h in (out[under].header, self.columns[self.detail].header) if h)
        out[under] = replace(out[under], header=header)
        return out

    def _groups(self) -> list[tuple[int, ...]]:
        if self.stack is not None:
            return [tuple(i for i in g if i != self.detail) for g in self.stack
                    if any(i != self.detail for i in g)]
        kept = self._kept()
        keys = tuple(i for i in kept if i < self.keys)
        rest = [i for i in kept if i >= self.keys]
        return ([keys] if keys else []) + [tuple(rest[i:i + 2]) for i in range(0, len(rest), 2)]

    def _stacked_under(self, groups: list[tuple[int, ...]]) -> int:
        """The stacked column the detail text starts under: the one that holds the last key column."""
        last_key = self._kept()[self._under()] if self._kept() else 0
        return next((n for n, g in enumerate(groups) if last_key in g), 0)

    def _stacked(self) -> _Shape | None:
        groups = self._groups()
        if all(len(g) == 1 for g in groups):
            return None
        columns = []
        for g in groups:
            cols = [self.columns[i] for i in g]
            columns.append(Col("\n".join(c.header for c in cols), right=all(c.right for c in cols),
                               wrap=any(c.wrap for c in cols), min_width=max(c.min_width for c in cols)))
        columns = _top_aligned(self._with_detail_header(columns, self._stacked_under(groups)))
        rows = [_Row([_stack(row, g) for g in groups], row.style, row.end_section, row.summary)
                for row in self.rows]
        return _Shape(columns, rows, self.show_header)

    def _records(self, width: int) -> list[Text]:
        """One block per row (`_record`), under a legend of what each record's first line names."""
        legend = "  ".join(c.header.replace("\n", " ") for c in self.columns[: self.keys] if c.header)
        lines = [Text(legend, style="dim")] if self.show_header and legend else []
        for row in self.rows:
            lines.extend(self._record(row, width))
        return lines

    def _record(self, row: _Row, width: int) -> list[Text]:
        """A row's key cells in bold on a line, then `label value` pairs packed to `width`, then the free
        text columns, each wrapped at its spaces with a hanging indent."""
        lines: list[Text] = []
        head = Text("  ").join(c for c in row.cells[: self.keys] if c.plain)
        if head.plain:
            head.stylize("bold")
            if row.style:
                head.stylize(row.style)
            lines.append(head)
        pairs: list[Text] = []
        prose: list[Text] = []
        for i, (col, cell) in enumerate(zip(self.columns, row.cells, strict=True)):
            if i >= self.keys and cell.plain.strip():
                label = col.header.replace("\n", " ").strip()
                labelled = Text(f"{label} " if label else "", style="dim") + cell
                (prose if self._is_prose(i, cell) else pairs).append(labelled)
        lines.extend(_pack(pairs, width - INDENT))
        for text in prose:
            for i, part in enumerate(_wrapped(text, width - INDENT, width - 2 * INDENT)):
                lines.append(Text(" " * (INDENT if i == 0 else 2 * INDENT)) + part)  # hanging indent
        return lines

    def _is_prose(self, i: int, cell: Text) -> bool:
        """A cell a record shows on lines of its own: several lines, or long text in a wrapping column."""
        wraps = self.columns[i].wrap or i == self.detail
        return "\n" in cell.plain or wraps and _longest_line(cell.plain) > 24

    # --- rich -------------------------------------------------------------------------------------

    def _header_lines(self) -> list[Text]:
        return [Text(self.title, style="table.title")] if self.title else []

    def _caption_lines(self) -> list[Text]:
        return [Text(self.caption, style="table.caption")] if self.caption else []

    def _fits_whole(self, width: int) -> str | None:
        """'wide' or 'detail' when one of them fits `width`, else None."""
        if self._wide().widths(width) is not None:
            return "wide"
        if self.detail is not None and self._beside().widths(width) is not None:
            return "detail"
        return None

    def hidden(self, width: int) -> list[int]:
        """The columns the narrow layout leaves out at `width`: by priority, highest first (the rightmost
        of equals first), as few as let the rest fit side by side; [] when every column fits or when
        even the columns of priority 0 alone do not."""
        if self._fits_whole(width) is not None:
            return []
        order = sorted((i for i, c in enumerate(self.columns) if c.priority > 0 and i != self.detail),
                       key=lambda i: (-self.columns[i].priority, -i))
        for n in range(1, len(order) + 1):
            if self._without(order[:n])._fits_whole(width) is not None:
                return sorted(order[:n])
        return []

    def narrowed(self, width: int) -> Grid:
        """This grid as the narrow layout shows it at `width`: less the columns `hidden` names (itself when
        none are), with its title and caption."""
        hidden = self.hidden(width)
        if not hidden:
            return self
        sub = self._without(hidden)
        sub.title, sub.caption = self.title, self.caption
        return sub

    def _without(self, hidden: list[int]) -> Grid:
        """This grid less the `hidden` columns (its keys, stacks and detail column renumbered)."""
        kept = [i for i in range(len(self.columns)) if i not in hidden]
        where = {old: new for new, old in enumerate(kept)}
        stack = None if self.stack is None else [
            tuple(where[i] for i in g if i in where) for g in self.stack if any(i in where for i in g)]
        sub = Grid(None, [self.columns[i] for i in kept], keys=sum(1 for i in kept if i < self.keys),
                   show_header=self.show_header, stack=stack,
                   detail=where.get(self.detail) if self.detail is not None else None)
        sub.rows = [_Row([row.cells[i] for i in kept], row.style, row.end_section, row.summary)
                    for row in self.rows]
        return sub

    def hint(self, hidden: list[int]) -> str:
        """The line under a narrowed table: what it leaves out, and how to see it."""
        names = ", ".join(self.columns[i].header.replace("\n", " ") for i in hidden)
        return f"not shown at this width: {names}; {WIDE_HINT} shows them"

    def layout(self, width: int) -> str:
        """Which layout `width` gets: 'wide', 'detail', 'narrow', 'stacked' or 'records'."""
        whole = self._fits_whole(width)
        if whole is not None:
            return whole
        if self.hidden(width):
            return "narrow"
        stacked = self._stacked()
        if stacked is not None and stacked.widths(width) is not None:
            return "stacked"
        return "records"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield from self._header_lines()
        kind = self.layout(width)
        if kind == "narrow":
            hidden = self.hidden(width)
            yield from console.render(self._without(hidden), options)
            yield from self._caption_lines()
            yield Text(self.hint(hidden), style="dim")
            return
        if kind == "records":
            yield from self._records(width)
        else:
            shape = {"wide": self._wide, "detail": self._beside, "stacked": self._stacked}[kind]()
            assert shape is not None
            widths = shape.widths(width)
            assert widths is not None
            if kind == "wide" or self.detail is None:
                yield shape.table(widths)
            else:
                yield from self._with_details(kind, shape, widths, width)
        yield from self._caption_lines()

    def _with_details(self, kind: str, shape: _Shape, widths: list[int], width: int,
                      ) -> Iterator[RenderableType]:
        """The table a row at a time (every piece at the same column widths, so they line up), each row
        followed by its detail text, wrapped with a hanging indent."""
        assert self.detail is not None
        under = self._under() if kind == "detail" else self._stacked_under(self._groups())
        indent = sum(widths[:under]) + GAP * under
        for n, (row, shaped) in enumerate(zip(self.rows, shape.rows, strict=True)):
            yield shape.table(widths, [replace(shaped, end_section=False)],
                              show_header=self.show_header and n == 0)
            text = row.cells[self.detail].copy()
            if text.plain.strip():
                if row.style:
                    text.stylize(row.style)
                for line in _hanging(text, max(1, width - indent)).split("\n"):
                    yield Text(" " * indent) + line
            if row.end_section:
                yield Text("")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        limits = self._wide().limits()
        natural = sum(n for _, n in limits) + GAP * (len(limits) - 1)
        return Measurement(min(natural, 20), max(natural, cell_len(self.title or "")))


def _top_aligned(columns: list[Col]) -> list[Col]:
    """Stacked headers padded to the same number of lines: rich sets a header at the bottom of the header
    row, and a stacked header's n-th line must stand over its values' n-th line."""
    lines = max((c.header.count("\n") + 1 for c in columns), default=1)
    return [replace(c, header=c.header + "\n" * (lines - 1 - c.header.count("\n"))) for c in columns]


def _stack(row: _Row, group: tuple[int, ...]) -> Text:
    """A row's cells of one stacked group, one under the other; a summary row's blank cells left out, so
    its label and figures rise to the first line."""
    cells = [row.cells[i] for i in group]
    if row.summary:
        cells = [c for c in cells if c.plain.strip()]
    return Text("\n").join(cells)


def _hanging(text: Text, width: int, indent: int = INDENT) -> Text:
    """Free text wrapped at its spaces to `width`, its own line breaks kept, each wrapped line after the
    first indented by `indent` (less, where a word needs the room: a word is never cut)."""
    if all(cell_len(line) <= width for line in text.plain.split("\n")):
        return text
    out: list[Text] = []
    for part in text.split("\n", allow_blank=True):
        for i, line in enumerate(_wrapped(part, width, max(1, width - indent))):
            pad = max(0, min(indent, width - cell_len(line.plain))) if i else 0
            out.append(Text(" " * pad) + line if pad else line)
    return Text("\n").join(out)


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
