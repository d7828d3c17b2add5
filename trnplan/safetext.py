"""Text from specs and plans made safe for where it goes: CSV cells a spreadsheet will not run as formulas,
Markdown a renderer will not read as markup, and a terminal that will not obey control sequences.

Spec strings (a chip's name, a BOM item) are the user's, or a pull request's: they may hold `=HYPERLINK(...)`,
a carriage return, `<img>`, an `@team` mention or an escape sequence. Every output that carries them goes
through one of these functions.
"""

from __future__ import annotations

import csv
import io
import re
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


# --- Markdown ------------------------------------------------------------------------------------

_MD_SPECIALS = re.compile(r"[\\`*\[\]<>!|#~&$]|(?<![^\W_])_|_(?![^\W_])")
"""What Markdown, GFM or GitHub give a meaning: escapes, code, emphasis, links and images, HTML, tables,
headings, strikethrough, entities and maths. An `_` between letters or digits (`scale_up`) emphasises
nothing in CommonMark, and is left as it is."""
NO_MENTION = "@&#8203;"
"""`@` and a zero-width space: GitHub links `@name` (a user or a team, who is then notified) in text,
escaped or not; with the space between, it is text."""


def md_text(value: object) -> str:
    """Text from a spec or a plan as inline Markdown that shows as written: hidden characters and controls
    (CR and LF too) written as escapes (`\\r`, as `errors.visible` writes them), then every character
    Markdown, GFM or GitHub give a meaning backslash-escaped and `@` kept from mentioning. It can open no
    HTML, link, image, code span or table cell, and end no line, table row or `<details>` block."""
    text = _MD_SPECIALS.sub(lambda m: "\\" + m.group(), visible(str(value)))
    return text.replace("@", NO_MENTION)


def md_code(value: object, *, in_table: bool = False) -> str:
    """Text from a spec or a plan as a code span, shown literally: hidden characters and controls written
    as escapes, the fence one backquote longer than any run inside (CommonMark), padded when it starts or
    ends with a backquote or a space. In a GFM table a `|` would still end the cell: `in_table` escapes it
    (GFM drops that backslash there)."""
    text = visible(str(value))
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# --- terminals -----------------------------------------------------------------------------------


def terminal_text(text: str) -> str:
    """`text` for a terminal, its lines kept: every control in a line (ESC starts OSC 8 links, window
    titles and screen clears; CR overwrites a line; 0x9b is a CSI), bidi override and other hidden
    character written as an escape (`\\x1b`), as `errors.visible` writes them in messages and tables."""
    return "\n".join(visible(line) for line in text.split("\n"))
