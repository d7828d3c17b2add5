"""Text from specs and plans made safe for where it goes: CSV cells a spreadsheet will not run as formulas,
and a terminal that will not obey control sequences.

Spec strings (a chip's name, a BOM item) are the user's, or a pull request's: they may hold `=HYPERLINK(...)`,
a carriage return, `<img>`, an `@team` mention or an escape sequence. Every output that carries them goes
through one of these functions.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from trnplan.errors import visible
from trnplan.numbers import shortest

CsvCell = str | int | float | None
"""A CSV cell: text (neutralised), a number (written as the shortest text that reads back as it) or
None (empty)."""

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection)."""


# --- CSV -----------------------------------------------------------------------------------------


def csv_cell(value: CsvCell) -> str:
    """A cell as written: a number as a number (`-5` stays `-5`); text that a spreadsheet would run as a
    formula (leading `= + - @`, TAB or CR) prefixed with `'`, OWASP's rule, so it reads as text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return shortest(value)
    return "'" + value if value.startswith(FORMULA_LEADS) else value


def csv_row(cells: Iterable[CsvCell]) -> str:
    """One CSV record ending in `\\n`; a cell holding a comma, a quote, a CR or an LF is quoted (the csv
    module quotes a CR only when it is part of the line terminator, so the record is written with `\\r\\n`
    and the terminator swapped)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([csv_cell(c) for c in cells])
    return out.getvalue()[:-2] + "\n"


def csv_text(header: Sequence[str], rows: Iterable[Iterable[CsvCell]]) -> str:
    """A whole CSV document: the header, then a record per row, each through `csv_row`. Every CSV output
    of trnplan is written by this function (or `csv_row`, for rows written as they come)."""
    return csv_row(header) + "".join(csv_row(row) for row in rows)


# --- terminals -----------------------------------------------------------------------------------


def terminal_text(text: str) -> str:
    """`text` for a terminal, its lines kept: every control in a line (ESC starts OSC 8 links, window
    titles and screen clears; CR overwrites a line; 0x9b is a CSI), bidi override and other hidden
    character written as an escape (`\\x1b`), as `errors.visible` writes them in messages and tables."""
    return "\n".join(visible(line) for line in text.split("\n"))
