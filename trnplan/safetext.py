"""Text from specs and plans made safe for where it goes: CSV cells written one way for every CSV output.

Every CSV trnplan prints (the BOM, a plan's tables, a sweep's summary) goes through `csv_text`, so a rule
for its cells (quoting, what a spreadsheet must not run) is made once.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from trnplan.numbers import shortest

CsvCell = str | int | float | None
"""A CSV cell: text, a number (written as the shortest text that reads back as it) or None (empty)."""


def csv_cell(value: CsvCell) -> str:
    """A cell as written: a number as the shortest text that reads back as it, None as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return shortest(value)
    return value


def csv_row(cells: Iterable[CsvCell]) -> str:
    """One CSV record ending in `\\n`; a cell holding a comma, a quote or a line break is quoted."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([csv_cell(c) for c in cells])
    return out.getvalue()


def csv_text(header: Sequence[str], rows: Iterable[Iterable[CsvCell]]) -> str:
    """A whole CSV document: the header, then a record per row, each through `csv_row`. Every CSV output
    of trnplan is written by this function."""
    return csv_row(header) + "".join(csv_row(row) for row in rows)
